"""The one writer of `Response.status`: every move of a response's life goes through `transition`.

Each move is checked against `Response.TRANSITIONS`, recorded as a `ResponseTransition` row (from,
to, what or who moved it, why) and announced by `signals.response_status_changed`, sent inside the
same transaction so that followers (evaluation's ratings) change with the status or not at all.
The services that decide a response's fate (voting, gold, reviewers, the crowd settlement) call it;
`annotation.services.responses` starts a response's life on top of it.
"""
from django.db import transaction

from quorum.paired_insert import insert_pair

from ..models import Response, ResponseTransition
from ..signals import response_status_changed


class TransitionError(ValueError):
    """The move is not one a response may make from where it stands; nothing was changed."""


def record_transition(response: Response, from_status: str, to_status: str, *, actor: str, by, reason: str) -> ResponseTransition:
    row = ResponseTransition.objects.create(
        response=response, from_status=from_status, to_status=to_status, actor=actor[:64], by=by, reason=reason or ""
    )
    _announce(response, from_status, to_status, actor=actor, reason=reason)
    return row


def store_with_first_state(response: Response, *, actor: str, reason: str) -> ResponseTransition:
    """Save a new response, its `status` set, with the audit row of that first state: one
    statement on PostgreSQL (`quorum.paired_insert`; every submission does this), so no response
    is ever stored without its row. Call inside the submitting transaction."""
    row = ResponseTransition(from_status="", to_status=response.status, actor=actor[:64], by=None, reason=reason or "")
    insert_pair(response, row, "response")
    _announce(response, "", response.status, actor=actor, reason=reason)
    return row


def _announce(response: Response, from_status: str, to_status: str, *, actor: str, reason: str) -> None:
    response_status_changed.send(
        sender=Response, response=response, from_status=from_status, to_status=to_status, actor=actor, reason=reason
    )


def transition(response: Response, to_status: str, *, actor: str, by=None, reason: str = "") -> ResponseTransition | None:
    """Move a stored response to `to_status`; returns the audit row, or None when it is already there.

    Locks the response row, so two movers decide in turn. `actor` says what moved it (worker, voting,
    gold, reviewer, flags, provider:<key>); `by` is the person, when a person did.
    """
    to_status = Response.Status(to_status)
    with transaction.atomic():
        current = Response.objects.select_for_update().only("status").get(pk=response.pk).status
        if current == to_status:
            response.status = current
            return None
        if to_status not in Response.TRANSITIONS.get(current, ()):
            raise TransitionError(
                f"a response that is {Response.Status(current).label.lower()} cannot become "
                f"{to_status.label.lower()}"
            )
        Response.objects.filter(pk=response.pk).update(status=to_status)
        response.status = to_status
        return record_transition(response, current, to_status, actor=actor, by=by, reason=reason)
