"""An organizer's export request (from the API, the job page or the demo) turned into a queued run.

The service records the run; the task is queued here once the run is committed, so a worker never
looks for a row that is not there yet. Services never import tasks.
"""
from django.db import transaction

from .models import ExportRun, Job
from .services.exports import create_export_run
from .tasks_exports import run_export


def start_export(job: Job, created_by=None, *, include_audio: bool = False, **speech_errors) -> ExportRun:
    """Record an export run of `job` (ExportError if it cannot be exported) and queue it on commit.

    Where tasks run in-process (development, tests, QUORUM_TASKS_INLINE) the export runs at the
    commit, at once outside a transaction; refresh the run to see its outcome.
    """
    run = create_export_run(job, created_by=created_by, include_audio=include_audio, **speech_errors)
    transaction.on_commit(lambda: run_export.delay(run.pk))
    return run
