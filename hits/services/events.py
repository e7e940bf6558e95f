"""Writes for status events a provider pushes (Prolific's hooks): each event once, acted on at once.

The reconciler's listing stays the fallback for an event that never arrives. What an event may do:
free the claim of a worker who returned or timed out (so the item goes to someone else now, not at
the claim's expiry), stop settling work its worker took back after submitting it (`returns`), confirm
a response whose submission the provider reports as its own, and record the provider's status. It never
pays or settles: that stays with the settlement services.
"""
from django.db import IntegrityError, transaction

from annotation.models import Response
from annotation.services.claims import release_slot

from ..models import ProviderAssignment, ProviderEvent
from ..providers import Confirmation
from .confirmation import apply_verdict
from .returns import returned_after_submitting


def record_status_event(
    provider_key: str, *, event_id: str, event_type: str, assignment_external_id: str, worker_external_id: str,
    status: str, normalized: str,
) -> str:
    """Act on one submission status event; returns what was done ("duplicate" for a repeat). `normalized` is
    the status in ProviderAssignment's terms (accepted, submitted, approved, rejected, returned)."""
    with transaction.atomic():
        try:
            with transaction.atomic():
                event = ProviderEvent.objects.create(
                    provider=provider_key, event_id=event_id, event_type=event_type,
                    resource_id=assignment_external_id, status=status,
                )
        except IntegrityError:
            return "duplicate"
        event.outcome = _apply(provider_key, event, worker_external_id, status, normalized)
        ProviderEvent.objects.filter(pk=event.pk).update(outcome=event.outcome[:200])
    return event.outcome


def _apply(provider_key, event, worker_external_id, status, normalized) -> str:
    assignment = (
        ProviderAssignment.objects.select_for_update(of=("self",)).select_related("worker", "response")
        .filter(provider=provider_key, external_id=event.resource_id).first()
    )
    if assignment is None:
        return "unknown assignment: left to the reconciler"
    if assignment.worker.external_id != worker_external_id:
        return "the event names another worker: ignored"
    ProviderAssignment.objects.filter(pk=assignment.pk).update(provider_status=status)
    if normalized == ProviderAssignment.State.RETURNED:
        if assignment.state == ProviderAssignment.State.SUBMITTED:
            if returned_after_submitting(assignment.pk, status):
                return "returned after submitting: not settled; its response stays in Quorum"
        if assignment.state != ProviderAssignment.State.ACCEPTED:
            return f"status recorded ({status})"
        ProviderAssignment.objects.filter(pk=assignment.pk).update(state=ProviderAssignment.State.RETURNED, place=None)
        if assignment.slot_id:
            release_slot(slot_id=assignment.slot_id, worker=assignment.worker)
        return "returned: claim freed"
    response = assignment.response
    if normalized == ProviderAssignment.State.SUBMITTED and response is not None:
        if response.status == Response.Status.AWAITING_CONFIRMATION:
            verdict = Confirmation(
                Confirmation.CONFIRMED, f"the provider reports submission {assignment.external_id} as {status}"
            )
            apply_verdict(assignment, response, verdict)
            return "submitted: response confirmed"
    return f"status recorded ({status})"
