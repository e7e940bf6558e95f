"""How the latest attempt at a piece of background work stands beside the output it produces
(`models.LatestAttempt`: a job's flag run next to its stored flags, a campaign's results
computation next to its stored results), as the pages and the APIs show it."""
from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from django.db import models

from quorum.progress import is_finished

from ..models import LatestAttempt

Status = LatestAttempt.Status
FIELDS = ("status", "queued_at", "started_at", "finished_at", "error")


@dataclass(frozen=True)
class AttemptState:
    """The latest attempt. `current`: it is newer than the output shown and not a success, so the
    pages name it beside that output (a success is the output itself)."""

    status: str
    queued_at: datetime | None
    started_at: datetime | None
    finished_at: datetime | None
    error: str
    current: bool

    @property
    def queued(self) -> bool:
        return self.status == Status.QUEUED

    @property
    def running(self) -> bool:
        return self.status == Status.RUNNING

    @property
    def failed(self) -> bool:
        return self.status == Status.FAILED

    @property
    def under_way(self) -> bool:
        """Queued or running: a page follows it (`quorum.progress`) until it finishes."""
        return self.status in (Status.QUEUED, Status.RUNNING)

    @property
    def finished(self) -> bool:
        return is_finished(self)

    @property
    def status_display(self) -> str:
        return str(Status(self.status).label)

    @property
    def at(self) -> datetime | None:
        """When the attempt reached its state: queued, started, or finished."""
        if self.queued:
            return self.queued_at
        return self.started_at if self.running else self.finished_at


def attempt_state(rows: models.QuerySet, shown_at: datetime | None) -> AttemptState | None:
    """The attempt in `rows` (the owner's, at most one) next to the output shown, computed at
    `shown_at` (None: there is none); None when no attempt was recorded. One query."""
    return state_of(rows.only(*FIELDS).first(), shown_at)


def state_of(row: LatestAttempt | None, shown_at: datetime | None) -> AttemptState | None:
    """`attempt_state` of a row already read (None: no attempt was recorded)."""
    if row is None:
        return None
    state = AttemptState(row.status, row.queued_at, row.started_at, row.finished_at, row.error, current=False)
    at = state.at
    # An output stored after the attempt reached its state is newer than it (an overlapping run's): it stands alone.
    current = row.status != Status.SUCCEEDED and (shown_at is None or (at is not None and at > shown_at))
    return replace(state, current=current)
