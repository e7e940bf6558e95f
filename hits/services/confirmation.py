"""Writes for trusting crowd entries: a response that came through a provider's entry counts only once
the provider confirms the assignment it came through (DESIGN.md, "Providers").

Anyone who knows a HIT or study id can invent a worker and an assignment id; the provider cannot be
fooled the same way. After the response is saved, a task asks the provider (`confirm_assignment`);
the reconciler asks again for whatever is still waiting. Confirmed: the response moves on through
annotation (`responses.confirm`). Refuted: it is rejected (never paid, never counted), its item
gets a new slot for a real worker (`responses.refute`), and the assignment is void, its place given
back. Pending: asked again later.
"""
import logging

from django.db import transaction
from django.utils import timezone

from annotation.models import Response
from annotation.services.responses import confirm, refute

from .. import providers
from ..models import ProviderAssignment
from ..providers import Confirmation

log = logging.getLogger(__name__)


def actor_of(assignment: ProviderAssignment) -> str:
    return f"provider:{assignment.provider}"


def confirm_assignment(assignment_id: int, now=None) -> str:
    """Ask the provider about the assignment of a response awaiting confirmation; returns the verdict
    ("confirmed", "refuted", "pending") or "" when nothing waits. Idempotent."""
    now = now or timezone.now()
    assignment = (
        ProviderAssignment.objects.select_related("posting__job", "worker", "response").filter(pk=assignment_id).first()
    )
    if assignment is None or assignment.response is None:
        return ""
    response = assignment.response
    if response.status != Response.Status.AWAITING_CONFIRMATION:
        return ""
    provider = providers.get(assignment.provider)
    if not provider.needs_confirmation:
        verdict = Confirmation(Confirmation.CONFIRMED, "the provider's workers sign in to Quorum")
    else:
        try:
            verdict = provider.confirm(assignment, now)
        except providers.ProviderError as exc:
            log.warning("cannot confirm assignment %s yet: %s", assignment.pk, exc)
            return Confirmation.PENDING
    return apply_verdict(assignment, response, verdict)


def apply_verdict(assignment: ProviderAssignment, response: Response, verdict: Confirmation) -> str:
    """Move the response (and, when refuted, the assignment) as the provider's verdict says."""
    if verdict.status == Confirmation.CONFIRMED:
        confirm(response, actor=actor_of(assignment), reason=verdict.reason)
    elif verdict.status == Confirmation.REFUTED:
        with transaction.atomic():
            refute(response, actor=actor_of(assignment), reason=verdict.reason)
            ProviderAssignment.objects.filter(pk=assignment.pk).exclude(state__in=ProviderAssignment.SETTLED).update(
                state=ProviderAssignment.State.VOID, place=None
            )
    return verdict.status


def awaiting_confirmation(job_id: int):
    """Assignments of the job whose response still waits for the provider (the reconciler asks again)."""
    return ProviderAssignment.objects.filter(
        posting__job_id=job_id, response__status=Response.Status.AWAITING_CONFIRMATION
    ).values_list("pk", flat=True)


def is_unconfirmed(assignment: ProviderAssignment) -> bool:
    """Whether the assignment's response waits for the provider: such work is never paid or bonused."""
    return Response.objects.filter(
        pk=assignment.response_id, status=Response.Status.AWAITING_CONFIRMATION
    ).exists() if assignment.response_id else False
