"""Django's database sessions with their one read compiled once per process.

Every page an annotator opens reads its session row; Django builds and compiles that small
queryset again on each request, which cost more of the annotation loop's Python than running it
(issue 26). The stores here are Django's own (`db`, `cached_db`) with that read run through
`quorum.compiled_queries` (prepared on PostgreSQL); writes, expiry and logout are Django's.
`SESSION_ENGINE` names `quorum.sessions.db` or `quorum.sessions.cached_db` (settings.py).
"""
from datetime import datetime

from django.contrib.sessions.models import Session
from django.utils import timezone

from quorum.compiled_queries import CompiledQuery

_UNEXPIRED_SESSION = CompiledQuery(
    lambda session_key, now: Session.objects.filter(session_key=session_key, expire_date__gt=now).order_by(),
    session_key=str, now=datetime,
)


class CompiledSessionRead:
    """Mixin for Django's database session stores: the session's read, compiled once per process."""

    def _get_session_from_db(self):
        if self.model is not Session or self.session_key is None:  # a custom session model: Django's own read
            return super()._get_session_from_db()
        found = _UNEXPIRED_SESSION.fetch(session_key=self.session_key, now=timezone.now())
        if found:
            return found[0]
        self._session_key = None  # as Django's read does: a missing or expired session is a new one
        return None
