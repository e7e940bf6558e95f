"""Money safety for annotation's review decisions and their undo (`annotation.extensions.settlement_guards`).

A crowd worker's assignment settles at the provider: once an approval is paid it cannot be un-paid,
and once a rejection is sent the provider keeps it. Rejecting a paid response, or undoing a sent
rejection, would then say something about the money that is not true, so the decision is refused
with what happened and what the organizer can do. A decision whose settlement was never sent (a
rejection kept in Quorum only, or an assignment not settled yet) can be made or undone.
"""
from annotation.models import Response

from .. import providers
from ..models import Payment, ProviderAssignment
from ..services.reconcile import rejection_message


def settlement_refusal(response, to_status: str) -> str | None:
    """Why moving this response back to `to_status` would contradict its provider's settlement, or None."""
    assignment = ProviderAssignment.objects.filter(response_id=response.pk).first()
    if assignment is None:
        return None
    where = f"{assignment.get_provider_display()} assignment {assignment.external_id}"
    settlement = (
        assignment.payments.filter(kind__in=[Payment.Kind.APPROVE, Payment.Kind.REJECT]).exclude(state=Payment.State.FAILED).first()
    )
    paid = assignment.state == ProviderAssignment.State.APPROVED or (settlement is not None and settlement.kind == Payment.Kind.APPROVE)
    rejected = assignment.state == ProviderAssignment.State.REJECTED or (settlement is not None and settlement.kind == Payment.Kind.REJECT)
    if settlement is not None and settlement.state in Payment.PENDING:
        return f"a settlement of {where} is being sent to the provider; try again once the crowd page shows its outcome"
    if paid and to_status == Response.Status.REJECTED:
        return (
            f"{where} was approved and paid at the provider, and a payment cannot be un-paid; "
            "to leave its answer out of the data, exclude the response instead (the worker stays paid)"
        )
    if rejected:
        return (
            f"the rejection of {where} was sent to the provider, which keeps it; the decision stands. "
            "If the worker deserves the pay, give a bonus from the job's crowd page"
        )
    if to_status == Response.Status.REJECTED and assignment.state == ProviderAssignment.State.SUBMITTED:
        # The settlement would send the configured message, which the provider would refuse: the work would
        # stay unsettled and be approved by the provider at its deadline, against this decision.
        refusal = providers.get(assignment.provider).rejection_refusal(rejection_message())
        if refusal:
            return (
                f"{refusal} (QUORUM_REJECTION_MESSAGE, which the settlement of {where} sends): lengthen it, or "
                "exclude the response instead (the worker is paid, the answer left out)"
            )
    return None
