"""How hits follows annotation: signals and the post-submit redirect registry (connected in apps.ready)."""
import logging

from django.core.cache import cache
from django.db import transaction
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

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


#: How long a process remembers that a job has no crowd settings. The in-house annotation loop
#: then links no assignment without asking the database on every submission; a configuration
#: saved meanwhile clears the entry here and reaches other processes when it runs out. Crowd
#: workers are linked regardless, here and again on their way to the provider (submit_redirect).
NO_CROWD_SECONDS = 30


def _no_crowd_key(job_id) -> str:
    return f"hits:no-crowd-config:{job_id}"


def _job_has_no_crowd(job_id) -> bool:
    key = _no_crowd_key(job_id)
    if cache.get(key):
        return True
    if JobCrowdConfig.objects.filter(job_id=job_id).exists():
        return False
    cache.set(key, True, NO_CROWD_SECONDS)
    return True


@receiver([post_save, post_delete], sender=JobCrowdConfig, dispatch_uid="hits.crowd_config_changed")
def forget_no_crowd(sender, instance, **kwargs):
    cache.delete(_no_crowd_key(instance.job_id))


def on_response_submitted(sender, response, **kwargs):
    if response.worker.is_in_house and _job_has_no_crowd(response.item.job_id):
        return  # no postings, so no assignment (the in-house ledger's included) to link
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
