"""Celery tasks of the annotation app: thin wrappers that load rows by id and call a service.

Tasks are queued with `transaction.on_commit` and set `acks_late`; each one is safe to run
again on the same id. Sections belong to their services; keep each task small.
"""
import logging

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings

from annotation.services import claims, exports, flag_runs, imports, job_creation, readings, sweeps, typing_logs

logger = logging.getLogger(__name__)


# --- imports ---
@shared_task(acks_late=True)
def run_import(run_id: int) -> None:
    """Import the corpus of ImportRun `run_id`; the run row records progress and outcome.

    A refused file (ImportFailed) is a result, not a task failure: the reason goes on the row.
    """
    run = imports.begin_run(run_id)
    if run is None:  # gone, or already finished by an earlier delivery
        return
    progress = imports.RunProgress(run)
    try:
        imports.import_corpus(
            name=run.corpus_name,
            source_format=run.source_format,
            files=run.files,
            created_by=run.created_by,
            progress=progress,
            run=run,
        )
    except imports.ImportFailed as exc:
        imports.fail_run(run, str(exc))
    except Exception:
        logger.exception("import run %s stopped on an unexpected error", run_id)
        imports.fail_run(run, "The import stopped on an unexpected error; nothing was imported. See the server log.")
        raise
    finally:
        progress.close()


# --- jobs made in the background ---
@shared_task(acks_late=True)
def run_job_creation(run_id: int) -> str | None:
    """Make the job of JobCreationRun `run_id` with its items and slots; the row records progress,
    then the job or why nothing was made (services.job_creation)."""
    run = job_creation.run_job_creation(run_id)
    return run.status if run else None


# --- exports ---
# The name is the one this task had in its own module: queued messages and sweeps keep finding it.
@shared_task(acks_late=True, name="annotation.tasks_exports.run_export")
def run_export(run_id: int) -> str | None:
    """Write the export of an ExportRun; the row records progress, success or the reason it failed."""
    run = exports.run_export(run_id)
    return run.status if run else None


# --- quality control: worker flags ---
@shared_task(acks_late=True)
def apply_worker_flags(job_id: int) -> dict | None:
    """Record the worker flags of job `job_id` on its responses (services.quality.apply_flags), the
    attempt on its `FlagRun` (services.flag_runs: running, then succeeded or failed with why).

    Idempotent: a second run records nothing new. None when the job is gone; {"failed": reason}
    when the computation failed (stored, not raised: see `flag_runs.run_flags`).
    """
    return flag_runs.run_flags(job_id)


@shared_task(acks_late=True)
def sweep_worker_flags() -> int:
    """Run from Celery beat: queue `apply_worker_flags` for every live job with responses, and for
    every job whose flag run was asked for and not started, or lost (`flag_runs.jobs_to_sweep`).

    One task per job, so a slow or failing job does not hold the others back. Returns how many were
    queued; one the broker refuses is logged and the next beat comes round again.
    """
    return flag_runs.FLAG_RUNS.queue_again(flag_runs.jobs_to_sweep())


# --- typing-process logs: retention ---
@shared_task(acks_late=True)
def purge_typing_logs() -> int:
    """Run from Celery beat: empty typing logs past QUORUM_TYPING_LOG_RETENTION_DAYS; idempotent."""
    return typing_logs.purge_expired()


# --- claims ---
@shared_task(acks_late=True)
def release_expired_claims() -> int:
    """Free claims past their expiry (Celery beat, every QUORUM_CLAIM_SWEEP_SECONDS); idempotent."""
    return claims.release_expired_claims()


# --- spoken readings: transcription ---
TRANSCRIBE_MAX_RETRIES = 3


@shared_task(
    bind=True, acks_late=True, max_retries=TRANSCRIBE_MAX_RETRIES,
    time_limit=settings.QUORUM_ASR_TIME_LIMIT_SECONDS, soft_time_limit=max(settings.QUORUM_ASR_TIME_LIMIT_SECONDS - 10, 1),
)
def transcribe_reading(self, reading_id: int) -> None:
    """Transcribe SpokenReading `reading_id` (services.readings.transcribe). A failure is stored on the
    reading and retried, with a growing countdown, at most TRANSCRIBE_MAX_RETRIES times; a language
    the backend cannot serve is stored and not retried. Idempotent: a transcribed reading is left alone."""
    try:
        readings.transcribe(reading_id)
    except readings.TranscriptionFailed as exc:
        raise self.retry(exc=exc, countdown=30 * 2**self.request.retries) from exc
    except SoftTimeLimitExceeded:
        # Past QUORUM_ASR_TIME_LIMIT_SECONDS: not retried (it would take as long again); the reading
        # stays untranscribed and the job page counts it.
        logger.warning("transcription of reading %s stopped at the time limit", reading_id)


@shared_task
def sweep_lost_work() -> dict:
    """Beat: readings without a transcript queued again, stuck imports/exports re-queued or failed
    with the reason, stale export staging folders removed (services.sweeps). Safe to repeat."""
    return sweeps.sweep_lost_work()
