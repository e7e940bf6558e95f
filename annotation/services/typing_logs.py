"""Typing-process logs kept with responses (format: annotation/text/typing_log.py): their retention."""
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from ..models import Response


def purge_expired(now=None) -> int:
    """Empty the typing logs of responses submitted more than QUORUM_TYPING_LOG_RETENTION_DAYS ago
    (0: keep them); returns how many. The responses, and flags stored from their logs, stay."""
    days = settings.QUORUM_TYPING_LOG_RETENTION_DAYS
    if not days:
        return 0
    cutoff = (now or timezone.now()) - timedelta(days=days)
    return Response.objects.filter(submitted_at__lt=cutoff).exclude(typing={}).update(typing={})
