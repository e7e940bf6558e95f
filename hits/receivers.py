"""How hits follows annotation: signals and the post-submit redirect registry (connected in apps.ready)."""
import logging

from django.db import transaction

from .models import JobCrowdConfig

log = logging.getLogger(__name__)


def on_job_launched(sender, job, **kwargs):
    """Send a launched crowd job's postings, after commit, in a task.

    The spend was reserved inside the launch's transaction (hits.services.postings.launch_budget_check),
    so a job over its budget never goes live; the task reserves whatever is still uncovered (in-house
    postings, slots added since) and sends the calls. A rehearsal copy is posted by the rehearsal alone.
    """
    config = JobCrowdConfig.objects.filter(job=job).only("rehearsal").first()
    if config is None or config.rehearsal:
        return  # no crowd settings: the database queue is all there is; or a rehearsal copy
    from .tasks import post_job

    transaction.on_commit(lambda: post_job.delay(job.pk))


def on_response_submitted(sender, response, **kwargs):
    if response.worker.is_in_house:
        return  # in-house work comes through no provider entry, so it has no assignment to link
    from .services.entry import record_submission

    record_submission(response)


def submit_redirect(*args, **kwargs) -> str | None:
    """Where a crowd worker goes after a saved submit: the hits done page, which sends them on.

    Called by annotation's task page with the saved response (positionally or as response=), or
    with the slot. Returns None when the slot has no provider assignment (in-house work).
    """
    from annotation.models import Response, Slot

    from .links import done_url
    from .models import ProviderAssignment
    from .services.entry import record_submission

    response = kwargs.get("response") or next((a for a in args if isinstance(a, Response)), None)
    slot = kwargs.get("slot") or next((a for a in args if isinstance(a, Slot)), None)
    if response is not None:
        assignment = record_submission(response)
    elif slot is not None:
        assignment = ProviderAssignment.objects.filter(slot=slot).first()
    else:
        return None
    return done_url(assignment.pk) if assignment else None
