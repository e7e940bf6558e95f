"""An organizer's job request (from the API or the job form) turned into service calls.

The API and the organizer pages both create jobs and change their state; this module keeps the
two in step: the same selection, the same annotator restriction, and the same mapping of a
service error to the request field it is about, so that every error names what to fix.
"""
from .models import Corpus, Job
from .services.jobs import JobError, Selection, create_job, finish_job, launch_job, pause_job
from .services.payload_jobs import create_payload_job, payloads_for

#: State changes an organizer can ask for, by the name used in URLs and buttons.
JOB_ACTIONS = {"launch": launch_job, "pause": pause_job, "finish": finish_job}

def job_error_fields(exc: JobError) -> dict:
    """{field: [message]} for a JobError; settings errors keep their per-setting messages."""
    if exc.errors:
        return {"settings": {name: [msg] for name, msg in exc.errors.items()}}
    return {exc.field: [str(exc)]}


def create_job_for_request(*, corpus: Corpus, annotators=(), selection: Selection | None = None, **fields) -> Job:
    """Create a draft job (see `services.jobs.create_job`) open to `annotators` (empty: to all)."""
    return create_job(corpus=corpus, selection=selection, annotators=annotators, **fields)


def create_payload_job_for_request(
    *, task_type: str, payload_text: str | None = None, payload_file_name: str = "", corpus: Corpus | None = None,
    annotators=(), selection=None, **fields,
) -> Job:
    """Create a draft payload job from a payload file's text, or from `corpus`'s own data (a DSTC9
    knowledge base); the selection of turns does not apply to payloads."""
    payloads, source = payloads_for(task_type, text=payload_text, file_name=payload_file_name, corpus=corpus)
    return create_payload_job(task_type=task_type, payloads=payloads, annotators=annotators, source_name=source, **fields)


def change_state(job: Job, action: str) -> Job:
    """Launch, pause or finish a job; JobError when the action is unknown or not allowed now."""
    try:
        service = JOB_ACTIONS[action]
    except KeyError:
        raise JobError(f"unknown job action {action!r}; use one of {', '.join(JOB_ACTIONS)}", field="action") from None
    return service(job)
