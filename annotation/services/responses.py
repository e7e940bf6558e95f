"""A response's life from the moment it is stored: its first state, its confirmation, what it sets off.

`begin` stores the first state of a new response; `confirm` is how a crowd provider says that a
response which came through its entry is real. What a response's arrival sets off (gold grading,
voting, counting a vote) happens once the response is known to be real: at once for in-house work,
on confirmation for crowd work, so a forged entry never grades, votes or counts. Every status
change goes through `response_status.transition` (re-exported here for callers outside the app).
"""
from django.db import transaction

from .. import task_types
from ..models import Item, Response
from . import quality, voting
from .response_status import TransitionError, record_transition, store_with_first_state, transition  # noqa: F401  (re-exported)


def begin(response: Response, *, kind, needs_confirmation: bool) -> None:
    """Give a response being stored its first state and, if it is real already, set its life going.

    Call inside the submitting transaction, with the response's item locked and `response` not yet
    saved: it is saved here with its status, so no response ever exists without one.
    """
    response.status = Response.Status.AWAITING_CONFIRMATION if needs_confirmation else Response.Status.ACCEPTED
    reason = "came through a crowd entry; waits for the provider" if needs_confirmation else ""
    store_with_first_state(response, actor="worker", reason=reason)
    if not needs_confirmation:
        _after_arrival(response, kind)


def confirm(response: Response, *, actor: str, reason: str = "") -> bool:
    """The provider confirmed a crowd response: it counts from now on, and its life goes on.

    Idempotent: False when the response was not awaiting confirmation (already confirmed, or settled).
    """
    with transaction.atomic():
        Item.objects.select_for_update().get(pk=response.item_id)  # the lock voting and gold grading expect
        current = Response.objects.select_for_update().only("status").get(pk=response.pk).status
        if current != Response.Status.AWAITING_CONFIRMATION:
            return False
        transition(response, Response.Status.ACCEPTED, actor=actor, reason=reason or "confirmed by the provider")
        response.item = Item.objects.select_related("job").get(pk=response.item_id)
        _after_arrival(response, task_types.get(response.item.job.task_type))
    return True


def refute(response: Response, *, actor: str, reason: str = "") -> bool:
    """The provider says a crowd response's assignment does not exist (an invented entry): it is
    rejected, never counted or paid, and its item gets a new slot, so the place it took is collected
    again by a real worker. Idempotent: False when the response was not awaiting confirmation."""
    with transaction.atomic():
        Item.objects.select_for_update().get(pk=response.item_id)
        current = Response.objects.select_for_update().only("status").get(pk=response.pk).status
        if current != Response.Status.AWAITING_CONFIRMATION:
            return False
        transition(response, Response.Status.REJECTED, actor=actor, reason=reason or "the provider has no such assignment")
        voting.reopen_item(response.item_id, collection=voting.collection_of(response))  # the same place, not a new round
    return True


def _after_arrival(response: Response, kind) -> None:
    """What a real response sets off, by what the task type declares: gold grading for gold items,
    a vote for the types that are voted on, counting for a vote."""
    item = response.item
    if item.gold is not None:
        quality.grade_gold_answer(response, kind)
    elif isinstance(kind, task_types.Votable):
        voting.start_review_if_enabled(response)
    if item.subject_response_id is not None:
        voting.record_vote(response)
