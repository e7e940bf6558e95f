"""How hits follows annotation: signals and the post-submit redirect registry (connected in apps.ready)."""
import logging

from django.db import transaction

from annotation.models import Job

from .models import JobCrowdConfig

log = logging.getLogger(__name__)


def on_job_launched(sender, job, **kwargs):
    """Post a launched crowd job's slots, after commit, in a task (the reserve is repeated there)."""
    config = JobCrowdConfig.objects.filter(job=job).first()
    if config is None:
        return  # a plain in-house job: the database queue is all there is
    from .services.postings import BudgetExceeded, reserve_postings

    try:
        reserve_postings(job)
    except BudgetExceeded as exc:
        # A launch that went around hits.services.postings.launch_crowd_job: refuse it by pausing.
        from annotation.services.jobs import pause_job

        log.warning("job %s launched beyond its budget; paused: %s", job.pk, exc)
        pause_job(Job.objects.get(pk=job.pk))
        return
    from .tasks import post_job

    transaction.on_commit(lambda: post_job.delay(job.pk))


def on_response_submitted(sender, response, **kwargs):
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
