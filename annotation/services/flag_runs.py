"""The record of a job's flag runs (`FlagRun`, one row per job: its latest attempt).

"Recompute now" (page and API) records the attempt as queued in the transaction that queues the
task; the task (`annotation.tasks.apply_worker_flags`, also queued per live job by the beat sweep)
marks it running, then succeeded or failed with the reason in words. A failure leaves the stored
`JobFlagReport` as it was: the pages show the earlier flags with the failure named beside them
(`selectors.flags.flag_run_state`).

Attempts may overlap (the sweep and "recompute now", a redelivered message): an attempt only
finishes the row it started (same `started_at`, still running), so an older attempt never marks a
newer one succeeded or failed.
"""
import logging
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from quorum.background import after_commit

from ..models import FlagRun, Job, Response
from .quality import apply_flags

logger = logging.getLogger(__name__)

#: How much of an error's message is kept: enough to act on, never a page of it.
ERROR_CHARS = 300

REFUSED = (
    "the background queue did not take it (the broker is down); the beat sweep queues it again "
    "once the broker is back"
)


def request_flag_run(job: Job, *, by=None) -> FlagRun:
    """"Recompute now": record the attempt as queued (who asked, when) and queue the flag run once
    the caller's transaction commits. A broker that is down is logged, not raised (`quorum.background`);
    the row then says the queue did not take it, and the beat sweep queues it again
    (`jobs_to_sweep` takes every queued attempt)."""
    now = timezone.now()
    with transaction.atomic():
        # started_at is cleared: an attempt already running finishes no longer this row (it was asked again).
        run, _ = FlagRun.objects.update_or_create(job=job, defaults={
            "status": FlagRun.Status.QUEUED, "requested_by": by if by is not None and by.is_authenticated else None,
            "queued_at": now, "started_at": None, "finished_at": None, "error": "",
        })
        after_commit("annotation.tasks.apply_worker_flags", job.pk, on_refused=lambda: _note_refused(run.pk, now))
    return run


def _note_refused(run_id: int, queued_at) -> None:
    FlagRun.objects.filter(pk=run_id, status=FlagRun.Status.QUEUED, queued_at=queued_at).update(error=REFUSED)


def run_flags(job_id: int) -> dict | None:
    """The flag run of job `job_id` with its record: `apply_flags`'s counts, {"failed": reason} when
    it failed (the reason is on the row, the traceback in the log), None when the job is gone.

    A failure is stored and returned, not raised: the task is acked either way (acks_late acks a
    failed task too), so raising would redeliver nothing; where tasks run inside the request
    (development, QUORUM_TASKS_INLINE) it would turn "recompute now" into a 500 instead of the
    failure named on the page. The beat sweep tries again on its next round.
    """
    job = Job.objects.filter(pk=job_id).first()
    if job is None:
        return None
    run = _start(job)
    try:
        result = apply_flags(job)
    except Exception as exc:  # noqa: BLE001 - any error of the computation is the run's failure, in words
        logger.exception("the flag run of job %s failed", job_id)
        reason = describe_error(exc)
        _finish(run, FlagRun.Status.FAILED, reason)
        return {"failed": reason}
    _finish(run, FlagRun.Status.SUCCEEDED)
    return result


def describe_error(exc: BaseException) -> str:
    """The error's type and first line of its message, trimmed: what a page can show."""
    lines = str(exc).strip().splitlines()
    text = f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__
    return text if len(text) <= ERROR_CHARS else text[: ERROR_CHARS - 1] + "…"


def _start(job: Job) -> FlagRun:
    now = timezone.now()
    with transaction.atomic():
        run, created = FlagRun.objects.select_for_update().get_or_create(
            job=job, defaults={"status": FlagRun.Status.RUNNING, "started_at": now}
        )
        if created:
            return run
        if run.status != FlagRun.Status.QUEUED:
            # Not the run someone asked for (the sweep's, or a redelivery): who asked last time is not this run's.
            run.requested_by, run.queued_at = None, None
        run.status, run.started_at, run.finished_at, run.error = FlagRun.Status.RUNNING, now, None, ""
        run.save()
    return run


def _finish(run: FlagRun, status: str, error: str = "") -> None:
    FlagRun.objects.filter(pk=run.pk, status=FlagRun.Status.RUNNING, started_at=run.started_at).update(
        status=status, finished_at=timezone.now(), error=error
    )


def lost_reason() -> str:
    return (
        f"no result within {settings.QUORUM_RUN_DEADLINE_MINUTES} minutes of its start (the worker running it was lost); "
        "the beat sweep queued it again"
    )


def jobs_to_sweep(now=None) -> list[int]:
    """The jobs whose flag run the beat sweep queues: every live job with responses, every job whose
    attempt is still queued (the broker refused it or lost it), and every job whose attempt has been
    running past QUORUM_RUN_DEADLINE_MINUTES. Those are failed first with the reason: their worker
    was lost (a killed worker's message comes back by itself, acks_late; this is the backstop), and
    "running since T" shown for ever would be a lie. The new attempt marks the row running when it starts."""
    now = now or timezone.now()
    cutoff = now - timedelta(minutes=settings.QUORUM_RUN_DEADLINE_MINUTES)
    stuck = FlagRun.objects.filter(status=FlagRun.Status.RUNNING, started_at__lt=cutoff)
    lost = set(stuck.values_list("job_id", flat=True))
    stuck.update(status=FlagRun.Status.FAILED, finished_at=now, error=lost_reason())
    asked = set(FlagRun.objects.filter(status=FlagRun.Status.QUEUED).values_list("job_id", flat=True))
    has_responses = Exists(Response.objects.filter(item__job=OuterRef("pk")))
    live = set(Job.objects.filter(state=Job.State.LIVE).filter(has_responses).values_list("pk", flat=True))
    return sorted(live | asked | lost)
