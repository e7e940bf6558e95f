"""Thin Celery tasks: load by id, call a service. Idempotent; retry only transient failures."""
import logging

from celery import shared_task

from annotation.models import Job
from quorum import background

from .providers import TransientProviderError
from .services import confirmation, payments, postings, reconcile

log = logging.getLogger(__name__)


@shared_task(acks_late=True, autoretry_for=(TransientProviderError,), retry_backoff=30, max_retries=5)
def post_job(job_id: int):
    return postings.post_job(Job.objects.get(pk=job_id))


@shared_task(bind=True, acks_late=True, max_retries=5)
def confirm_submission(self, assignment_id: int):
    """Ask the provider to confirm a crowd entry's response soon after it is saved.

    MTurk shows an assignment only once the worker has submitted it there, after Quorum saved the
    response: a pending verdict is asked again a little later. An eager run (tests, the demo) has
    no later; the reconciler asks again in any case.
    """
    from django.conf import settings

    verdict = confirmation.confirm_assignment(assignment_id)
    if verdict == "pending" and not self.request.is_eager:
        raise self.retry(countdown=int(getattr(settings, "QUORUM_CONFIRM_RETRY_SECONDS", 120)))
    return verdict


@shared_task(acks_late=True)
def reconcile_job(job_id: int):
    return reconcile.reconcile_job(job_id)


@shared_task(acks_late=True)
def reconcile_all():
    """Beat entry: one reconcile task per job with anything still open at a provider. Returns how
    many were queued; one the broker refuses is logged and the next beat comes round again."""
    return sum(1 for job_id in reconcile.jobs_to_reconcile() if background.queue_now("hits.tasks.reconcile_job", job_id))


@shared_task(acks_late=True)
def execute_payment(payment_id: int):
    # No autoretry: a payment's repeat is decided by the service (and the reconciler), not here.
    return payments.execute_payment(payment_id).state
