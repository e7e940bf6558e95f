"""Thin Celery tasks: load by id, call a service. Idempotent; retry only transient failures."""
import logging

from celery import shared_task

from annotation.models import Job

from .providers import TransientProviderError
from .services import payments, postings, reconcile

log = logging.getLogger(__name__)


@shared_task(acks_late=True, autoretry_for=(TransientProviderError,), retry_backoff=30, max_retries=5)
def post_job(job_id: int):
    return postings.post_job(Job.objects.get(pk=job_id))


@shared_task(acks_late=True)
def reconcile_job(job_id: int):
    return reconcile.reconcile_job(job_id)


@shared_task(acks_late=True)
def reconcile_all():
    """Beat entry: one reconcile task per job with anything still open at a provider."""
    from django.db import transaction

    job_ids = reconcile.jobs_to_reconcile()
    for job_id in job_ids:
        transaction.on_commit(lambda job_id=job_id: reconcile_job.delay(job_id))
    return len(job_ids)


@shared_task(acks_late=True)
def execute_payment(payment_id: int):
    # No autoretry: a payment's repeat is decided by the service (and the reconciler), not here.
    return payments.execute_payment(payment_id).state
