"""Writes for settling and paying: approve, reject, soft-reject and bonus, in bulk, one result each.

Each action writes a Payment intent row (idempotency key derived from our ids) before any call,
then `execute_payment` makes the call. A bulk action never stops at the first failure: every
element gets its own result, and one element's failure changes nothing for the others.
"""
import hashlib
import logging
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation.models import Response
from annotation.services.responses import transition

from .. import providers
from ..models import JobCrowdConfig, Payment, ProviderAssignment
from ..policy import costs
from .confirmation import is_unconfirmed
from .postings import place_share, release_cost

log = logging.getLogger(__name__)


class PaymentError(ValueError):
    """This element cannot be settled or paid as asked; the message says why."""


@dataclass
class ElementResult:
    assignment_id: int
    ok: bool
    state: str = ""
    error: str = ""
    # A bonus's amount and what it is charged with the provider's fees (the cost held on the budget).
    amount: Decimal | None = None
    charged: Decimal | None = None

    def as_dict(self) -> dict:
        out = {k: v for k, v in self.__dict__.items() if k not in ("amount", "charged")}
        if self.charged is not None:
            out.update(amount=str(self.amount), charged=str(self.charged))
        return out


def settle_key(assignment_id: int) -> str:
    return f"quorum-a{assignment_id}-settle"


def bonus_key(assignment_id: int, amount: Decimal, reason: str) -> str:
    """The same bonus (assignment, amount, reason) asked twice is one payment."""
    digest = hashlib.sha256(f"{amount:.2f}|{reason}".encode()).hexdigest()[:16]
    return f"quorum-a{assignment_id}-b{digest}"


SETTLED_AS: dict[str, str] = {Payment.Kind.APPROVE: "approved", Payment.Kind.REJECT: "rejected"}


def _intend_settlement(assignment: ProviderAssignment, kind: str, message: str) -> Payment:
    if kind == Payment.Kind.APPROVE:
        _refuse_spending(assignment)
    with transaction.atomic():
        assignment = ProviderAssignment.objects.select_for_update().get(pk=assignment.pk)
        existing = assignment.payments.filter(kind__in=[Payment.Kind.APPROVE, Payment.Kind.REJECT]).first()
        if existing is not None:
            if existing.kind != kind and existing.state != Payment.State.FAILED:
                raise PaymentError(f"already {SETTLED_AS[existing.kind]}; a settled assignment cannot be {SETTLED_AS[kind]}")
            if existing.state == Payment.State.FAILED:
                existing.kind, existing.message, existing.state, existing.error = kind, message, Payment.State.INTENDED, ""
                existing.save(update_fields=["kind", "message", "state", "error", "updated_at"])
            return existing
        if assignment.state not in (ProviderAssignment.State.SUBMITTED,):
            raise PaymentError(f"the assignment is {assignment.get_state_display().lower()}, not submitted")
        if kind == Payment.Kind.APPROVE and is_unconfirmed(assignment):
            raise PaymentError("the provider has not confirmed this assignment yet; it cannot be paid")
        return Payment.objects.create(
            assignment=assignment,
            kind=kind,
            amount=assignment.posting.reward if kind == Payment.Kind.APPROVE else Decimal("0.00"),
            idempotency_key=settle_key(assignment.pk),
            message=message,
        )


def _refuse_spending(assignment: ProviderAssignment) -> None:
    """PaymentError, before anything is written, when the provider may not spend now (its live switch)."""
    refusal = providers.get(assignment.provider).spending_refusal()
    if refusal:
        raise PaymentError(refusal)


def intend_bonus(assignment: ProviderAssignment, amount, reason: str) -> Payment:
    """Write a bonus intent, its cost committed against the budget under the config's row lock."""
    try:
        amount = costs.whole_cents(amount)
    except (InvalidOperation, ValueError, TypeError):
        # Refused, not rounded: the crowds pay whole cents, and a rounded sum is not the one asked for.
        raise PaymentError(f"the bonus must be an amount in USD in whole cents, such as 0.25 (not {amount})") from None
    if amount <= 0:
        raise PaymentError("the bonus must be above zero")
    if not reason.strip():
        raise PaymentError("give the worker a reason for the bonus")
    if assignment.state == ProviderAssignment.State.VOID:
        raise PaymentError("the provider does not know this assignment; it is never paid")
    if is_unconfirmed(assignment):
        raise PaymentError("the provider has not confirmed this assignment yet; no bonus before it does")
    _refuse_spending(assignment)  # before the lookup too: an intent already written is not sent either
    key = bonus_key(assignment.pk, amount, reason)
    existing = Payment.objects.filter(idempotency_key=key).first()
    if existing is not None:
        return existing
    with transaction.atomic():
        config = JobCrowdConfig.objects.select_for_update().get(job_id=assignment.posting.job_id)
        provider = providers.get(config.provider)
        cost = costs.bonus_cost(provider, amount, fee_rate=provider.fee_rate(config))
        if config.budget is not None and config.committed + cost > config.budget:
            raise PaymentError(
                f"a bonus of {amount} USD costs {cost} USD with fees; only {config.budget - config.committed} USD "
                "of the budget is left"
            )
        try:
            with transaction.atomic():
                payment = Payment.objects.create(
                    assignment=assignment, kind=Payment.Kind.BONUS, amount=amount, cost=cost,
                    idempotency_key=key, message=reason.strip(),
                )
        except IntegrityError:
            return Payment.objects.get(idempotency_key=key)
        config.committed += cost
        config.save(update_fields=["committed"])
    return payment


def _release(payment: Payment) -> None:
    if payment.cost:
        release_cost(payment.assignment.posting.job_id, payment.cost)


def _release_place(assignment: ProviderAssignment) -> None:
    """A rejected assignment is never paid: its share of its posting's reservation goes back to the budget."""
    release_cost(assignment.posting.job_id, place_share(assignment.posting))


def execute_payment(payment_id: int) -> Payment:
    """Make the provider call for a payment intent, at most once where the provider cannot deduplicate."""
    with transaction.atomic():
        payment = Payment.objects.select_for_update(of=("self",)).select_related("assignment__posting", "assignment__worker").get(pk=payment_id)
        if payment.state in (Payment.State.CONFIRMED, Payment.State.FAILED):
            return payment
        provider = providers.get(payment.assignment.provider)
        repeat_unsafe = payment.kind == Payment.Kind.BONUS and not provider.bonus_is_idempotent
        refusal = provider.spending_refusal() if payment.kind != Payment.Kind.REJECT else None
        if refusal and not (payment.state == Payment.State.SENT and repeat_unsafe):
            # Written before the switch went off: it waits, unsent, for the reconciler once it is on.
            Payment.objects.filter(pk=payment.pk).update(error=refusal[:1000])
            payment.error = refusal
            return payment
        if payment.state == Payment.State.SENT and repeat_unsafe:
            # The paying call may have gone through: never make it again; confirm or ask a human.
            paid = provider.bonus_was_paid(payment)
            if paid:
                payment.state, payment.needs_attention = Payment.State.CONFIRMED, False
            else:
                payment.needs_attention = True
            payment.save(update_fields=["state", "needs_attention", "updated_at"])
            return payment
    if repeat_unsafe and not payment.provider_reference:
        try:
            reference = provider.prepare_bonus(payment)
        except providers.ProviderError as exc:
            return _fail_or_wait(payment, exc)
        Payment.objects.filter(pk=payment.pk).update(provider_reference=reference)
        payment.provider_reference = reference
    # Recorded as sent before the call: after a crash the reconciler knows the call may have happened.
    Payment.objects.filter(pk=payment.pk).update(state=Payment.State.SENT, sent_at=timezone.now())
    payment.state = Payment.State.SENT
    try:
        if payment.kind == Payment.Kind.APPROVE:
            reference = provider.approve(payment)
        elif payment.kind == Payment.Kind.REJECT:
            reference = provider.reject(payment)
        else:
            reference = provider.bonus(payment)
    except providers.TransientProviderError as exc:
        fields: dict[str, str | bool] = {"error": str(exc)[:1000]}
        if repeat_unsafe:
            fields["needs_attention"] = True
        Payment.objects.filter(pk=payment.pk).update(**fields)
        return Payment.objects.get(pk=payment.pk)
    except providers.ProviderError as exc:
        return _fail_or_wait(payment, exc)
    _confirm(payment, reference)
    return Payment.objects.get(pk=payment.pk)


def _confirm(payment: Payment, reference) -> None:
    """The provider took the call: the payment is confirmed and the assignment settled, once."""
    with transaction.atomic():
        newly_confirmed = Payment.objects.filter(pk=payment.pk).exclude(state=Payment.State.CONFIRMED).update(
            state=Payment.State.CONFIRMED, provider_reference=payment.provider_reference or str(reference)[:128], error=""
        )
        if newly_confirmed and payment.kind == Payment.Kind.REJECT:
            _release_place(payment.assignment)
        if payment.kind in (Payment.Kind.APPROVE, Payment.Kind.REJECT):
            ProviderAssignment.objects.filter(pk=payment.assignment_id).update(
                state=ProviderAssignment.State.APPROVED if payment.kind == Payment.Kind.APPROVE else ProviderAssignment.State.REJECTED,
                settled_at=timezone.now(),
            )


def _fail_or_wait(payment: Payment, exc: Exception) -> Payment:
    if isinstance(exc, providers.TransientProviderError):
        Payment.objects.filter(pk=payment.pk).update(error=str(exc)[:1000])
    else:
        with transaction.atomic():
            if Payment.objects.filter(pk=payment.pk).exclude(state=Payment.State.FAILED).update(
                state=Payment.State.FAILED, error=str(exc)[:1000]
            ):
                _release(payment)
    return Payment.objects.get(pk=payment.pk)


def _set_response_status(assignment: ProviderAssignment, status: str, reason: str) -> None:
    """The settlement decided the response's fate too: move it through annotation's one status writer."""
    response = Response.objects.filter(pk=assignment.response_id).first() if assignment.response_id else None
    if response is not None:
        transition(response, status, actor=f"provider:{assignment.provider}", reason=reason)


def _each(assignment_ids, action) -> list[ElementResult]:
    results = []
    for assignment_id in assignment_ids:
        try:
            assignment = ProviderAssignment.objects.select_related("posting", "worker").get(pk=assignment_id)
            payment = action(assignment)
            ok = payment.state in (Payment.State.CONFIRMED, Payment.State.SENT, Payment.State.INTENDED)
            bonus = payment.kind == Payment.Kind.BONUS and payment.state != Payment.State.FAILED  # a failed one charges nothing
            charge = {"amount": payment.amount, "charged": payment.cost} if bonus else {}
            results.append(ElementResult(assignment_id, ok and not payment.needs_attention, payment.state, payment.error, **charge))
        except ProviderAssignment.DoesNotExist:
            results.append(ElementResult(assignment_id, False, "", "no such assignment"))
        except PaymentError as exc:
            results.append(ElementResult(assignment_id, False, "", str(exc)))
        except Exception as exc:  # one element's surprise must not skip the others
            log.exception("payment action failed for assignment %s", assignment_id)
            results.append(ElementResult(assignment_id, False, "", f"unexpected error: {type(exc).__name__}"))
    return results


def approve_assignments(assignment_ids, message: str = "") -> list[ElementResult]:
    def action(assignment):
        payment = _intend_settlement(assignment, Payment.Kind.APPROVE, message)
        return execute_payment(payment.pk)

    return _each(assignment_ids, action)


def rejection_refusal(assignment_ids, message: str) -> str | None:
    """Why rejecting these assignments with `message` is refused before anything is recorded: no message, or
    one their provider would refuse (Prolific's minimum length). A rejection the provider refuses afterwards
    leaves the work unsettled, and accepted work is paid when its review window ends."""
    if not message or not message.strip():
        return "a rejection needs a message for the worker"
    keys = ProviderAssignment.objects.filter(pk__in=list(assignment_ids)).values_list("provider", flat=True).distinct()
    for key in sorted(keys):
        refusal = providers.get(key).rejection_refusal(message)
        if refusal:
            return refusal
    return None


def reject_assignments(assignment_ids, message: str) -> list[ElementResult]:
    """Reject (not paid, data excluded); the message tells the worker why and is required, and must be one
    the provider takes: otherwise every element is refused and nothing is recorded."""
    refusal = rejection_refusal(assignment_ids, message)
    if refusal:
        return [ElementResult(i, False, "", refusal) for i in assignment_ids]

    def action(assignment):
        payment = _intend_settlement(assignment, Payment.Kind.REJECT, message.strip())
        payment = execute_payment(payment.pk)
        if payment.state == Payment.State.CONFIRMED:
            _set_response_status(assignment, Response.Status.REJECTED, f"rejected at the provider: {message.strip()}")
        return payment

    return _each(assignment_ids, action)


def soft_reject_assignments(assignment_ids, message: str = "") -> list[ElementResult]:
    """Soft-reject: the worker is paid (approved at the provider) and the data is excluded."""

    def action(assignment):
        payment = _intend_settlement(assignment, Payment.Kind.APPROVE, message)
        payment = execute_payment(payment.pk)
        if payment.state == Payment.State.CONFIRMED:
            _set_response_status(assignment, Response.Status.EXCLUDED, "soft-rejected: paid at the provider, data left out")
        return payment

    return _each(assignment_ids, action)


def bonus_assignments(bonuses) -> list[ElementResult]:
    """Pay bonuses: `bonuses` is a list of (assignment_id, amount, reason)."""
    results = []
    for assignment_id, amount, reason in bonuses:
        results.extend(
            _each([assignment_id], lambda a, amount=amount, reason=reason: execute_payment(intend_bonus(a, amount, reason).pk))
        )
    return results
