"""How hits follows annotation: signals and the post-submit redirect registry (connected in apps.ready)."""
import logging

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from annotation.models import Job, Response, Slot
from quorum.background import after_commit

from . import providers
from .links import done_url
from .models import JobCrowdConfig, ProviderAssignment
from .selectors.routing import provider_cache_key, provider_of_job
from .services.entry import admit_claim, record_submission
from .services.reconcile import request_reconciliation
from .tasks import confirm_submission, post_job

log = logging.getLogger(__name__)


def _crowd_config(job) -> JobCrowdConfig | None:
    """The job's crowd settings, or None where hits has nothing to do: no crowd settings (the database
    queue is all there is), or a rehearsal copy (posted by the rehearsal alone; its listings live at a
    fake that is gone)."""
    config = JobCrowdConfig.objects.filter(job=job).only("rehearsal", "provider").first()
    return None if config is None or config.rehearsal else config


def on_job_launched(sender, job, **kwargs):
    """Send a launched crowd job's postings, after commit, in a task.

    The spend was reserved inside the launch's transaction (hits.services.postings.launch_budget_check),
    so a job over its budget never goes live; the task reserves whatever is still uncovered (slots
    added since) and sends the calls.
    """
    if _crowd_config(job) is not None:
        transaction.on_commit(lambda: post_job.delay(job.pk))


def on_items_added(sender, job, recollection=False, **kwargs):
    """Items added to a live crowd job (an adaptive campaign's next round) are posted like a launch's:
    `post_job` reserves what is uncovered under the budget (nothing, when the caller reserved it in
    its own transaction) and sends the intended postings once, by their request tokens.

    A re-collection's place waits QUORUM_RECOLLECTION_POST_DELAY_SECONDS: votes decide one response
    at a time, and the first delayed `post_job` posts every place added meanwhile in one listing
    (the later ones find nothing uncovered)."""
    config = _crowd_config(job) if job.state == Job.State.LIVE else None
    if config is None:
        return
    delay = settings.QUORUM_RECOLLECTION_POST_DELAY_SECONDS if recollection else 0
    if delay > 0 and providers.get(config.provider).batches_recollections:
        after_commit("hits.tasks.post_job", job.pk, countdown=delay)
    else:
        transaction.on_commit(lambda: post_job.delay(job.pk))


def _reconcile_now(sender, job, **kwargs):
    """Ask for the job's reconciliation now (the beat would within minutes), when it has a crowd."""
    if _crowd_config(job) is not None:
        request_reconciliation(job.pk)


#: A finished crowd job takes no more workers: a reconciliation closes its listings and settles what
#: is submitted.
on_job_finished = _reconcile_now
#: A place posted for a re-collection was taken back: a reconciliation closes a listing no slot needs
#: any more, so that no worker takes it and its reservation goes back to the budget
#: (`services.reconcile.close_surplus_postings`).
on_places_withdrawn = _reconcile_now


@receiver([post_save, post_delete], sender=JobCrowdConfig, dispatch_uid="hits.crowd_config_changed")
def forget_job_provider(sender, instance, **kwargs):
    """However crowd settings are written (service, admin, a test), claims stop reading a stale provider."""
    cache.delete(provider_cache_key(instance.job_id))


def watches_claims(job) -> bool:
    """Whether claims of this job need their assignment made at claim time (a provider whose workers
    sign in to Quorum). A cached read: the in-house loop without crowd settings asks no query."""
    key = provider_of_job(job.pk)
    return bool(key) and providers.get(key).workers_sign_in


def on_slot_claimed(sender, slot, worker, **kwargs):
    """A signed-in annotator's claim gets its assignment at once, as a crowd worker's arrival does.

    Runs inside the claim's transaction, on every claim of every job: a job without crowd settings
    costs one cached lookup (at most one query), and crowd workers' claims are left to their entry.
    """
    key = provider_of_job(slot.job_id)
    if not key or not providers.get(key).workers_sign_in:
        return
    admit_claim(slot, worker, key)


def on_response_submitted(sender, response, **kwargs):
    """Link the response to its assignment and, for a crowd entry, ask the provider to confirm it promptly."""
    if response.worker.is_in_house and not provider_of_job(response.item.job_id):
        return  # no crowd settings: no postings, so no assignment to link (a cached read, no query)
    assignment = record_submission(response)
    if assignment is not None and response.status == Response.Status.AWAITING_CONFIRMATION:
        transaction.on_commit(lambda: confirm_submission.delay(assignment.pk))


def submit_redirect(*args, **kwargs) -> str | None:
    """Where a crowd worker goes after a saved submit: the hits done page, which sends them on.

    Called by annotation's task page with the saved response (positionally or as response=), or
    with the slot. Returns None when the slot has no provider assignment.
    """
    response = kwargs.get("response") or next((a for a in args if isinstance(a, Response)), None)
    slot = kwargs.get("slot") or next((a for a in args if isinstance(a, Slot)), None)
    if response is not None:
        assignment = record_submission(response)
    elif slot is not None:
        assignment = ProviderAssignment.objects.filter(slot=slot).first()
    else:
        return None
    return done_url(assignment.pk) if assignment else None
