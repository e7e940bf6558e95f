"""Reads for the team page: the in-house annotators with their accounts and how much they did."""
from django.db.models import Count

from ..models import Worker


def in_house_annotators():
    """In-house workers with their user and response count, newest first (a queryset, for paging)."""
    return (
        Worker.objects.filter(provider=Worker.INHOUSE, user__isnull=False)
        .select_related("user")
        .annotate(responses_total=Count("responses"))
        .order_by("-created_at", "-pk")
    )
