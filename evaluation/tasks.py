"""Celery tasks of the evaluation app: thin wrappers that load by id and call a service."""
from celery import shared_task

from .services.campaigns import compute_campaign_results as compute
from .services.exports import export_campaign
from .services.scheduled import run_due_schedules


@shared_task(acks_late=True)
def compute_campaign_results(campaign_id):
    """Compute (or find) the stored report of a campaign's current inputs, and write its files
    (the campaign page's downloads; instance scores read every rating, too slow for a request).
    Idempotent: the same inputs version is computed at most once and gives the same numbers
    (fixed seed); the files are rewritten with the same content."""
    result = compute(campaign_id)
    export_campaign(result.campaign, result=result)
    return {"campaign": campaign_id, "result": result.pk, "inputs_version": result.inputs_version}


@shared_task
def run_scheduled_interactive_evaluations():
    """Beat: RADDLE's evaluation service. Each enabled schedule offers its due entries (top-k by
    automatic score, with an endpoint, not evaluated recently) an interactive campaign. Safe to
    repeat: an entry evaluated within the schedule's window is not due again."""
    return run_due_schedules()
