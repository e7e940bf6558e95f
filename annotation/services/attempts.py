"""The record of background work's latest attempt per owner (`models.LatestAttempt`): a job's flag
run (`flag_runs`), a campaign's results (`evaluation.campaigns.services.results_runs`).

Asking for the work records the attempt as queued in the transaction that queues the task; the task
marks it running, then succeeded or failed with the reason in words. Attempts may overlap (the beat
sweep and a click, a redelivered message): an attempt only finishes the row it started (same
`started_at`, still running), so an older attempt never marks a newer one succeeded or failed.
"""
from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Generic, TypeVar

from django.conf import settings
from django.db import models, transaction
from django.utils import timezone

from quorum import background
from quorum.background import after_commit
from quorum.progress import queue_refused

from ..models import LatestAttempt

logger = logging.getLogger(__name__)

#: How much of an error's message is kept: enough to act on, never a page of it.
ERROR_CHARS = 300

#: How long a queued attempt the broker took may wait before the sweep takes it for lost: an idle
#: worker starts one within seconds, and a sweep every few minutes must not queue every attempt
#: that is merely waiting behind others a second time.
QUEUED_GRACE = timedelta(minutes=10)

Status = LatestAttempt.Status
T = TypeVar("T")
A = TypeVar("A", bound=LatestAttempt)


def describe_error(exc: BaseException) -> str:
    """The error's type and first line of its message, trimmed: what a page can show."""
    lines = str(exc).strip().splitlines()
    text = f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__
    return text if len(text) <= ERROR_CHARS else text[: ERROR_CHARS - 1] + "…"


def lost_reason() -> str:
    return (
        f"no result within {settings.QUORUM_RUN_DEADLINE_MINUTES} minutes of its start (the worker running it was lost); "
        "the beat sweep queued it again"
    )


@dataclass(frozen=True)
class Outcome(Generic[T]):
    """What an attempt gave: the work's value, or the reason it failed (stored on the row too)."""

    value: T | None = None
    error: str = ""

    @property
    def failed(self) -> bool:
        return bool(self.error)


@dataclass(frozen=True)
class AttemptRecord(Generic[A]):
    """The attempts of one kind of work: its row model, the name of the owner field on it, and the
    task queued with the owner's id."""

    model: type[A]
    owner_field: str
    task: str
    #: The setting of how often the beat sweep that calls `settle` comes round: a refused attempt is
    #: queued again then, and its row says by when.
    sweep_seconds_setting: str = "QUORUM_LOST_WORK_SWEEP_SECONDS"

    @property
    def _rows(self) -> models.QuerySet[A]:
        return self.model._default_manager.all()

    def request(self, owner: models.Model, *, by=None) -> A:
        """Record the attempt as queued (who asked, when) and queue the task once the caller's
        transaction commits. A broker that is down is logged, not raised (`quorum.background`); the
        row then says the queue did not take it, and the beat sweep queues it again (`settle`)."""
        now = timezone.now()
        with transaction.atomic():
            # started_at is cleared: an attempt already running finishes no longer this row (it was asked again).
            owned: dict[str, Any] = {self.owner_field: owner}
            run, _ = self._rows.update_or_create(**owned, defaults={
                "status": Status.QUEUED, "requested_by": by if by is not None and by.is_authenticated else None,
                "queued_at": now, "started_at": None, "finished_at": None, "error": "",
            })
            after_commit(self.task, owner.pk, on_refused=lambda: self._note_refused(run.pk, now))
        return run

    def _note_refused(self, run_id: int, queued_at) -> None:
        """The broker did not take the task: the row, still queued, says when and by when the sweep
        tries again (a queued attempt with an error is a refused one: `settle`)."""
        self._say_refused(self._rows.filter(pk=run_id, status=Status.QUEUED, queued_at=queued_at))

    def _say_refused(self, rows: models.QuerySet[A]) -> None:
        now = timezone.now()
        retry_by = now + timedelta(seconds=getattr(settings, self.sweep_seconds_setting))
        rows.update(error=queue_refused(now, retry_by))

    def run(self, owner: models.Model, work: Callable[[], T]) -> Outcome[T]:
        """Run `work` as the owner's attempt: running, then succeeded, or failed with the reason on
        the row (the traceback in the log).

        A failure is stored and returned, not raised: the task is acked either way (acks_late acks a
        failed task too), so raising would redeliver nothing; where tasks run inside the request
        (development, QUORUM_TASKS_INLINE) it would turn the click into a 500 instead of the failure
        named on the page. The beat sweep or the next click tries again."""
        run = self._start(owner)
        try:
            value = work()
        except Exception as exc:  # noqa: BLE001 - any error of the work is the attempt's failure, in words
            logger.exception("%s of %s %s failed", self.model.__name__, self.owner_field, owner.pk)
            reason = describe_error(exc)
            self._finish(run, Status.FAILED, reason)
            return Outcome(error=reason)
        self._finish(run, Status.SUCCEEDED)
        return Outcome(value)

    def _start(self, owner: models.Model) -> A:
        now = timezone.now()
        with transaction.atomic():
            owned: dict[str, Any] = {self.owner_field: owner}
            run, created = self._rows.select_for_update().get_or_create(
                **owned, defaults={"status": Status.RUNNING, "started_at": now}
            )
            if created:
                return run
            if run.status != Status.QUEUED:
                # Not the attempt someone asked for (the sweep's, or a redelivery): who asked last time is not this one's.
                run.requested_by, run.queued_at = None, None
            run.status, run.started_at, run.finished_at, run.error = Status.RUNNING, now, None, ""
            run.save()
        return run

    def _finish(self, run: A, status: str, error: str = "") -> None:
        self._rows.filter(pk=run.pk, status=Status.RUNNING, started_at=run.started_at).update(
            status=status, finished_at=timezone.now(), error=error
        )

    def queue_again(self, owner_ids: Iterable[Any]) -> int:
        """A beat sweep's queueing of the owners' task (`settle`'s owners, and any others it sweeps):
        an attempt still queued that the broker refuses again gets a fresh note, so its page does not
        keep promising a retry by a time that has passed. Returns how many were queued."""
        queued = 0
        for owner_id in owner_ids:
            if background.queue_now(self.task, owner_id):
                queued += 1
            else:
                self._say_refused(self._rows.filter(**{f"{self.owner_field}_id": owner_id}, status=Status.QUEUED))
        return queued

    def settle(self, now=None) -> set[Any]:
        """The owners (ids) whose attempt the beat sweep queues again: every attempt the broker
        refused, every attempt still queued after QUEUED_GRACE (the broker lost it; the work is
        idempotent, so one still waiting in a long queue runs twice at worst), and every attempt
        running past QUORUM_RUN_DEADLINE_MINUTES. Those are failed first with the reason: their
        worker was lost (a killed worker's message comes back by itself, acks_late; this is the
        backstop), and "running since T" shown for ever would be a lie. The new attempt marks the
        row running when it starts."""
        now = now or timezone.now()
        owner_id = f"{self.owner_field}_id"
        cutoff = now - timedelta(minutes=settings.QUORUM_RUN_DEADLINE_MINUTES)
        stuck = self._rows.filter(status=Status.RUNNING, started_at__lt=cutoff)
        lost = set(stuck.values_list(owner_id, flat=True))
        stuck.update(status=Status.FAILED, finished_at=now, error=lost_reason())
        waiting = self._rows.filter(status=Status.QUEUED).filter(~models.Q(error="") | models.Q(queued_at__lt=now - QUEUED_GRACE))
        return lost | set(waiting.values_list(owner_id, flat=True))
