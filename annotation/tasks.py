"""Celery tasks of the annotation app: thin wrappers that load rows by id and call a service.

Tasks are queued with `transaction.on_commit` and set `acks_late`; each one is safe to run
again on the same id. Sections belong to their services; keep each task small.
"""
import logging

from celery import shared_task

from annotation.services import imports

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
