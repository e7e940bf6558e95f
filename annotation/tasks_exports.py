"""Celery task for exports (re-exported from annotation/tasks.py so the worker registers it)."""
from celery import shared_task

from .services import exports


@shared_task(acks_late=True)
def run_export(run_id: int) -> str | None:
    """Write the export of an ExportRun; the row records progress, success or the reason it failed."""
    run = exports.run_export(run_id)
    return run.status if run else None
