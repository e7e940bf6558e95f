"""Bulk decisions of the review queue: accept, reject, exclude or re-collect many responses with
one reason.

Each response is decided on its own through `quality.override_verdict` (its own transactions, the
audit row, the signal), and the outcome of every one is returned: one that cannot be decided (a
crowd entry not confirmed yet, a response of another job) is reported and the rest go on — a bulk
action never stops at the first failure and never skips silently.
"""
from dataclasses import dataclass

from .. import task_types
from ..models import CheckOverride, Job, Response, ReviewerPreference
from ..selectors.review_decisions import decision_checks, recollection_of
from .quality import QualityError, override_verdict, recollection_outstanding

#: action -> (new status, re-collect the item)
ACTIONS = {
    "accept": (Response.Status.ACCEPTED, False),
    "reject": (Response.Status.REJECTED, False),
    "exclude": (Response.Status.EXCLUDED, False),
    "recollect": (Response.Status.REJECTED, True),
}
MAX_BULK = 500  # ten pages of the queue: a bigger request is a mistake, not a review


@dataclass(frozen=True)
class BulkResult:
    response_id: int
    ok: bool
    message: str  # the new status, or why it was not changed
    decision_id: int | None = None  # the CheckOverride written, which `review_undo` can take back
    already: bool = False  # it had that status before: decided (and recorded), but not changed


def chosen_ids(ids, what: str) -> list[int]:
    """The ids of a bulk request, each once in the order given: at least one, at most `MAX_BULK`."""
    unique = list(dict.fromkeys(int(i) for i in ids))
    if not unique:
        raise QualityError(f"choose at least one {what}")
    if len(unique) > MAX_BULK:
        raise QualityError(f"at most {MAX_BULK} {what}s at once")
    return unique


def bulk_decide(job: Job, response_ids, *, action: str, reason: str, check: str | None = None, by=None) -> list[BulkResult]:
    """Decide every response of `job` in `response_ids`; a result per id, in the order given.

    `check` is the verdict overridden, one of `decision_checks(job)`; by default the first of them (the
    vote outcome on a job with a vote, none on a job without)."""
    if action not in ACTIONS:
        raise QualityError(f"action must be one of {', '.join(ACTIONS)}")
    if not (reason or "").strip():
        raise QualityError("give the reason for the decision; it is kept with every response")
    offered = decision_checks(job)
    check = check or offered[0][0]
    if check not in dict(offered):
        if check == CheckOverride.Check.VOTE:
            raise QualityError("this job has no vote, so there is no vote outcome to override")
        raise QualityError(f"check must be one of {', '.join(value for value, _ in offered)}")
    ids = chosen_ids(response_ids, "response")
    status, recollect = ACTIONS[action]
    found = Response.objects.filter(item__job=job, pk__in=ids).in_bulk()
    results = []
    for pk in ids:
        response = found.get(pk)
        if response is None:
            results.append(BulkResult(pk, False, "not a response of this job"))
            continue
        already = response.status == status and not recollect
        try:
            record = override_verdict(response, status=status, reason=reason, check=check, recollect=recollect, by=by)
        except QualityError as exc:
            results.append(BulkResult(pk, False, str(exc)))
        else:
            outcome = _outcome(record, status, recollect)
            results.append(BulkResult(pk, True, f"already {outcome}" if already else outcome, record.pk, already))
    return results


def _outcome(record: CheckOverride, status: str, recollect: bool) -> str:
    label = Response.Status(status).label.lower()
    if recollect:
        return f"{label}, item re-collected"
    if record.recollection_withdrawn:
        return f"{label}; its item's re-collection, which no one had started, is withdrawn"
    if status == Response.Status.ACCEPTED and recollection_outstanding(record.response, record):
        return f"{label}; {accepted_beside_recollection(record.response)}"
    return label


def accepted_beside_recollection(response: Response) -> str:
    """What becomes of the item of a voted-down response accepted after all whose re-collection was
    already started, and which text its test set takes (`exporters.selection`: text that passed the
    vote first, voted-down text only where no other accepted response has one)."""
    found = recollection_of(response)
    down = (response.checks or {}).get("voted_down_parts") or []
    kind = task_types.capability(task_types.get(response.item.job.task_type), task_types.Votable)
    parts = [p["name"] for p in kind.vote_parts(response.item.job.settings)] if kind else []
    passed = [p for p in parts if p not in down] if down else []
    if not found.written:
        return (
            "its item's re-collection is already in a worker's hands (claimed, not submitted yet), so the item will have one "
            "response more than asked; the test set takes the re-collection's text if it passes the vote, and this "
            "response's voted-down text only where no other accepted response has one"
            + (f" (its {', '.join(passed)}, which passed the vote, count as any accepted text, earliest first)" if passed else "")
        )
    other, other_status = found.written[0]
    what = Response.Status(other_status).label.lower()
    head = f"its item's re-collection was already submitted: response {other} ({what}), so the item has one response more than asked. "
    voted_down = f"this response's voted-down {', '.join(down)}" if passed else "this response's voted-down text"
    if other_status == Response.Status.ACCEPTED:
        tail = f"The test set keeps response {other}'s text; {voted_down} is used only where no other accepted response has one"
    elif other_status in (Response.Status.AWAITING_REVIEW, Response.Status.HELD):
        tail = f"If response {other} is accepted, the test set takes its text; until then, or if it is not, it takes {voted_down}"
    else:
        tail = f"Response {other} does not count, so the test set takes {voted_down}"
    if passed:
        tail += f"; its {', '.join(passed)}, which passed the vote, count as any accepted text (earliest first, so this response's)"
    return head + tail


def remember_review_view(user, *, compact: bool) -> None:
    """Keep the organizer's choice of the review queue's view (compact table or full cards)."""
    ReviewerPreference.objects.update_or_create(user=user, defaults={"compact": bool(compact)})
