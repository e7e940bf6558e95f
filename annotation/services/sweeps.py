"""Background work that was lost comes back (issue 25, item 4). Run by the beat task
`annotation.tasks.sweep_lost_work`; each part is safe to repeat and to run beside the workers.

- **Readings without a transcript**: queued again when none was recorded (no hypothesis, no error)
  some minutes after they were stored (the broker was down at the submission, or lost the task).
- **Runs stuck in "running" or "pending"** (imports, exports, jobs made in the background) past `QUORUM_RUN_DEADLINE_MINUTES`:
  a pending run that no worker started is queued again once; one left running (its worker was killed)
  fails with the reason, and its staging folder and uploads go with it.
- **Leftover `.partial` staging folders** of exports older than the deadline are removed.
"""
import logging
import shutil
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.utils import timezone

from quorum import background
from quorum.progress import queue_pending_again

from ..models import ExportRun, ImportRun, JobCreationRun, RunStatus, SpokenReading
from .imports import remove_uploads

logger = logging.getLogger(__name__)

#: At most this many readings are queued again by one sweep (the next sweep takes the rest).
READINGS_PER_SWEEP = 500

RUN_TASKS: tuple[tuple[type[ImportRun] | type[ExportRun] | type[JobCreationRun], str], ...] = (
    (ImportRun, "annotation.tasks.run_import"), (ExportRun, "annotation.tasks_exports.run_export"),
    (JobCreationRun, "annotation.tasks.run_job_creation"),
)


def requeue_untranscribed(now=None) -> int:
    """Queue again the readings stored more than QUORUM_TRANSCRIBE_GRACE_MINUTES ago that have no
    transcript and no recorded failure (a failure is retried by the task itself)."""
    now = now or timezone.now()
    cutoff = now - timedelta(minutes=settings.QUORUM_TRANSCRIBE_GRACE_MINUTES)
    lost = SpokenReading.objects.filter(transcribed_at__isnull=True, asr_error="", created_at__lt=cutoff)
    ids = list(lost.order_by("pk").values_list("pk", flat=True)[:READINGS_PER_SWEEP])
    return sum(1 for reading_id in ids if background.queue_now("annotation.tasks.transcribe_reading", reading_id))


def settle_stuck_runs(now=None) -> dict:
    """Pending runs past the deadline are queued again (once per sweep); running ones fail with why."""
    now = now or timezone.now()
    cutoff = now - timedelta(minutes=settings.QUORUM_RUN_DEADLINE_MINUTES)
    counts = {"requeued": 0, "failed": 0}
    for model, task in RUN_TASKS:
        pending = model.objects.filter(status=RunStatus.PENDING, created_at__lt=cutoff).only("pk", "created_at")
        counts["requeued"] += queue_pending_again(task, pending)
        reason = (
            f"Stopped: no worker finished it within {settings.QUORUM_RUN_DEADLINE_MINUTES} minutes of its start "
            "(the worker running it was lost). Nothing of it was kept; start it again."
        )
        stuck = model.objects.filter(status=RunStatus.RUNNING, started_at__lt=cutoff)
        uploads = list(ImportRun.objects.filter(pk__in=stuck.values("pk")).values_list("files", flat=True)) if model is ImportRun else []
        counts["failed"] += stuck.update(status=RunStatus.FAILED, error=reason, finished_at=now)
        for files in uploads:  # a failed import keeps no uploaded files, as when it fails by itself
            remove_uploads(files or {})
    return counts


def remove_stale_staging(now=None) -> int:
    """Remove `.partial` staging folders under QUORUM_EXPORT_DIR older than the run deadline."""
    now = now or timezone.now()
    cutoff = (now - timedelta(minutes=settings.QUORUM_RUN_DEADLINE_MINUTES)).timestamp()
    root = Path(settings.QUORUM_EXPORT_DIR)
    removed = 0
    for staging in root.glob("*/.*.partial") if root.is_dir() else ():
        try:
            if staging.is_dir() and not staging.is_symlink() and staging.stat().st_mtime < cutoff:
                shutil.rmtree(staging)
                removed += 1
        except OSError:
            logger.warning("could not remove the staging folder %s", staging, exc_info=True)
    return removed


def sweep_lost_work(now=None) -> dict:
    return {
        "readings": requeue_untranscribed(now), "runs": settle_stuck_runs(now), "staging": remove_stale_staging(now),
    }
