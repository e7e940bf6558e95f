"""A corpus job made in the background: the job form's request is checked at once, its items and
slots are written by a worker (`annotation.tasks.run_job_creation`).

A job over 100,000 user turns held the form's request 15-41 s on PostgreSQL (docs/measurements.md,
"Creating a large job off the request"). The request now checks everything that does not read the
turns (`jobs.checked_job_request`: a bad field is refused on the form, nothing recorded) and records
a `JobCreationRun`; the worker makes the job with its items and slots in one transaction and marks
the run succeeded in that same transaction. So a job exists only with all its items (it cannot be
launched half-made), and a failed run made nothing, says why and can be run again.

Every corpus job is made here: the job form and `POST /api/jobs/` queue the run (`start_job_creation`),
`manage.py create_job` records it and makes it in its own process (`make_job_now`).
"""
import logging
from collections.abc import Callable
from decimal import Decimal

from django.db import transaction
from django.utils import timezone

from quorum import background
from quorum.progress import note_refused

from ..models import Job, JobCreationRun, RunStatus, Worker
from .imports import RunProgress
from .jobs import JobError, Selection, checked_job_request, create_job

logger = logging.getLogger(__name__)

TASK = "annotation.tasks.run_job_creation"


def start_job_creation(**request) -> JobCreationRun:
    """Check a corpus job's request (JobError, nothing recorded) and record its run, queued on
    commit. `request`: as `record_job_creation` takes it. Where tasks run in-process (development,
    tests, QUORUM_TASKS_INLINE) the job is made before this returns: refresh the run to see its outcome."""
    run = record_job_creation(**request)
    _queue(run)
    return run


def make_job_now(on_progress: Callable[[int, int], None] | None = None, **request) -> JobCreationRun:
    """Check a corpus job's request (JobError, nothing recorded), record its run and make the job in
    this process, as a worker would (for a shell: `manage.py create_job`). Returns the finished run;
    `on_progress(done, total)` hears of the rows written."""
    run = record_job_creation(**request)
    run_job_creation(run.pk, on_progress=on_progress)
    run.refresh_from_db()
    return run


def record_job_creation(*, instructions: str = "", annotators=(), created_by=None, **request) -> JobCreationRun:
    """Check a corpus job's request (JobError, nothing recorded) and record its run, not yet queued.
    `request`: the keywords `jobs.checked_job_request` checks (corpus, name, task_type, settings,
    selection, redundancy, reward, claim_timeout_minutes), all given, as the job form's
    `job_request()` gives them."""
    checked_job_request(**request)
    selection: Selection = request["selection"]
    run = JobCreationRun.objects.create(
        corpus=request["corpus"], name=request["name"].strip(), task_type=request["task_type"], settings=request["settings"] or {},
        selection={"mode": selection.mode, "size": selection.size, "seed": selection.seed, "dialog_ids": list(selection.dialog_ids)},
        redundancy=request["redundancy"], reward=Decimal(str(request["reward"])), instructions=instructions,
        claim_timeout_minutes=request["claim_timeout_minutes"], annotator_ids=[worker.pk for worker in annotators], created_by=created_by,
    )
    return run


def _queue(run: JobCreationRun) -> None:
    if background.runs_inline():
        # Tasks in the request: the job is made now, on this connection (which sees the run even
        # inside a caller's transaction), so the form can lead straight to it.
        background.queue_now(TASK, run.pk)
    else:
        background.after_commit(TASK, run.pk, on_refused=lambda: note_refused(run))


def retry_job_creation(run: JobCreationRun) -> JobCreationRun:
    """Run a failed creation again, with the same request (the turns may have changed since, or a
    worker was lost). JobError unless it failed: a pending or running one is under way, a succeeded
    one has made its job."""
    with transaction.atomic():
        retried = JobCreationRun.objects.filter(pk=run.pk, status=RunStatus.FAILED).update(
            status=RunStatus.PENDING, error="", error_field="", done=0, total=None, started_at=None, finished_at=None
        )
        if not retried:
            run.refresh_from_db(fields=["status"])
            raise JobError(f"this job's creation is {run.get_status_display().lower()}; only a failed one can be run again", field="state")
        run.refresh_from_db()
    _queue(run)
    return run


def run_job_creation(run_id: int, on_progress: Callable[[int, int], None] | None = None) -> JobCreationRun | None:
    """Make the job of a creation run: progress on the row (and to `on_progress(done, total)`), then
    succeeded with its job, or failed with why and nothing made. Idempotent: a finished run is left
    alone; a run redelivered after its worker was lost starts again (the lost attempt's transaction
    was rolled back)."""
    claimed = JobCreationRun.objects.filter(pk=run_id, status__in=[RunStatus.PENDING, RunStatus.RUNNING]).update(
        status=RunStatus.RUNNING, started_at=timezone.now(), done=0, error=""
    )
    if not claimed:
        return JobCreationRun.objects.filter(pk=run_id).first()
    run = JobCreationRun.objects.select_related("corpus", "created_by").get(pk=run_id)
    progress = RunProgress(run)

    def report(done: int, total: int) -> None:
        progress(done, total)
        if on_progress is not None:
            on_progress(done, total)

    try:
        create_job(**_job_request(run), progress=report, on_saved=lambda job: _mark_succeeded(run, job))
    except JobError as exc:
        _fail(run, str(exc), exc.field)
    except Exception as exc:  # the run must end in a state the builder can see, whatever went wrong
        logger.exception("job creation run %s failed", run_id)
        _fail(run, f"an unexpected error ({type(exc).__name__}); try again, and if it fails again, see the server log")
    finally:
        progress.close()
    run.refresh_from_db()
    return run


def _job_request(run: JobCreationRun) -> dict:
    selection = run.selection or {}
    return {
        "corpus": run.corpus, "name": run.name, "task_type": run.task_type, "settings": run.settings,
        "selection": Selection(
            mode=selection.get("mode", "all"), size=selection.get("size"), seed=selection.get("seed") or 0,
            dialog_ids=list(selection.get("dialog_ids") or []),
        ),
        "redundancy": run.redundancy, "reward": run.reward, "instructions": run.instructions,
        "claim_timeout_minutes": run.claim_timeout_minutes,
        "annotators": list(Worker.objects.filter(pk__in=run.annotator_ids or [])), "created_by": run.created_by,
    }


def _mark_succeeded(run: JobCreationRun, job: Job) -> None:
    """In the job's own transaction: the run says succeeded exactly when the job and its items are there."""
    JobCreationRun.objects.filter(pk=run.pk).update(
        status=RunStatus.SUCCEEDED, job=job, done=run.total or run.done, total=run.total, error="", finished_at=timezone.now()
    )


def _fail(run: JobCreationRun, message: str, field: str = "") -> None:
    """Nothing was made (the job's transaction rolled back): why, and about which field of the request."""
    JobCreationRun.objects.filter(pk=run.pk).update(
        status=RunStatus.FAILED, error=message, error_field=field, finished_at=timezone.now(), job=None
    )


def failure_as_job_error(run: JobCreationRun) -> JobError:
    """A failed run's reason as the JobError the job form shows by its field (made where tasks run in the request)."""
    return JobError(run.error, field=run.error_field or "non_field_errors")
