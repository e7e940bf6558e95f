"""Undo of a reviewer's decisions (accept, reject, exclude) from the audit trail, with a reason.

A decision is a `CheckOverride`; undoing it moves the response back to the state it had before
(`response_status.transition`, so the move is itself an audit row, the reason on it, and followers
such as evaluation's ratings follow through the signal) and records a `DecisionUndo`. Each decision
is undone on its own transaction and a result is returned for every one asked for, as with the bulk
decisions: one that cannot be undone says why and what to do, the rest go on.

A decision cannot be undone when:
- it was undone already, or a later decision on the same response replaced it (undo that one first);
- the response had been awaiting its vote or held by a check before it: the decision cancelled the
  vote and cleared the hold, so there is nothing to go back to (decide it again instead);
- its item was re-collected (reopened for a new response);
- money moved at a crowd provider: an entry of `extensions.settlement_guards` (hits: a paid approval cannot
  be un-paid, a rejection sent to the provider stands) says no.
"""
from dataclasses import dataclass

from django.db import transaction

from .. import extensions
from ..models import CheckOverride, DecisionUndo, Item, Job, Response
from .quality import QualityError
from .response_status import transition
from .review import chosen_ids

#: A decision can only be taken back to a state a reviewer could have decided it into.
RESTORABLE = (Response.Status.ACCEPTED, Response.Status.REJECTED, Response.Status.EXCLUDED)


@dataclass(frozen=True)
class UndoResult:
    decision_id: int
    response_id: int | None
    ok: bool
    message: str  # the state the response is back in, or why the decision stands


def undo_decisions(job: Job, decision_ids, *, reason: str, by=None) -> list[UndoResult]:
    """Undo each of `job`'s decisions in `decision_ids` (CheckOverride ids); a result per id, in order."""
    reason = (reason or "").strip()
    if not reason:
        raise QualityError("give the reason for the undo; it is kept in each response's audit trail")
    ids = chosen_ids(decision_ids, "decision")
    found = CheckOverride.objects.filter(response__item__job=job, pk__in=ids).in_bulk()
    results = []
    for pk in ids:
        decision = found.get(pk)
        if decision is None:
            results.append(UndoResult(pk, None, False, "not a decision on this job"))
            continue
        try:
            restored = undo_decision(decision, reason=reason, by=by)
        except QualityError as exc:
            results.append(UndoResult(pk, decision.response_id, False, str(exc)))
        else:
            results.append(UndoResult(pk, decision.response_id, True, f"back to {Response.Status(restored).label.lower()}"))
    return results


def undo_decision(decision: CheckOverride, *, reason: str, by=None) -> str:
    """Move the decided response back to its state before `decision`; returns that state."""
    reason = (reason or "").strip()
    if not reason:
        raise QualityError("give the reason for the undo")
    item_id = Response.objects.filter(pk=decision.response_id).values_list("item_id", flat=True).get()
    with transaction.atomic():
        # The item first, then the response: the order `quality.override_verdict` takes them in.
        Item.objects.select_for_update().only("pk").get(pk=item_id)
        response = Response.objects.select_for_update().get(pk=decision.response_id)
        decision = CheckOverride.objects.select_for_update().get(pk=decision.pk)
        _check_undoable(decision, response)
        back = decision.previous_status
        label = Response.Status(decision.new_status).label.lower()
        move = transition(
            response, back, actor="reviewer", by=by, reason=f"Undo of the decision {label} ({decision.reason}): {reason}"
        )
        assert move is not None  # _check_undoable saw the response in the decided state, under its lock
        DecisionUndo.objects.create(override=decision, transition=move, reason=reason, by=by)
        checks = dict(response.checks or {})
        checks.pop("override", None)
        earlier = _standing_decision(response.pk)
        if earlier is not None:
            checks["override"] = {"status": earlier.new_status, "check": earlier.check_name, "reason": earlier.reason}
        Response.objects.filter(pk=response.pk).update(checks=checks)
    return back


def _standing_decision(response_id: int) -> CheckOverride | None:
    """The response's latest decision that is not undone (what its checks show as the override)."""
    return CheckOverride.objects.filter(response_id=response_id, undo__isnull=True).order_by("-created_at", "-pk").first()


def _check_undoable(decision: CheckOverride, response: Response) -> None:
    if DecisionUndo.objects.filter(override=decision).exists():
        raise QualityError("this decision was undone already")
    latest = _standing_decision(response.pk)
    if latest is not None and latest.pk != decision.pk:
        raise QualityError(f"a later decision ({latest.get_new_status_display().lower()}) replaced it: undo that one first")
    if response.status != decision.new_status:
        raise QualityError(
            f"the response is {response.get_status_display().lower()} now, not {decision.get_new_status_display().lower()} "
            "as this decision left it; decide it again instead"
        )
    if decision.previous_status not in RESTORABLE:
        raise QualityError(
            f"before this decision it was {Response.Status(decision.previous_status).label.lower()}; the decision ended its "
            "vote or hold, so there is no state to go back to: accept, reject or exclude it in the review queue instead"
        )
    if decision.recollected:
        raise QualityError(
            "its item was re-collected (reopened for a new response), which an undo cannot take back; "
            "decide the new response in the review queue instead"
        )
    if decision.recollection_withdrawn:
        raise QualityError(
            "accepting it took back its item's re-collection, which an undo cannot restore; "
            "re-collect it in the review queue instead"
        )
    for guard in extensions.settlement_guards.values():
        refusal = guard(response, decision.previous_status)
        if refusal:
            raise QualityError(refusal)
