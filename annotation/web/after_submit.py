"""Where a worker goes after a response is saved, by provider.

Quorum saves first, then tells the crowd (DESIGN.md, "Providers"): the work page calls
`after_submit_url` only after the response is committed. A provider whose workers must be sent on
(Prolific's completion URL, MTurk's externalSubmit) registers a function in
`extensions.submit_redirects` from its own app's `ready()`, so that annotation never imports hits.
"""
from dataclasses import dataclass

from django.urls import reverse

from ..extensions import submit_redirects
from ..models import Response, Slot
from ..services.claims import ClaimError, claim_next_slot
from ..work_tokens import make_token


@dataclass(frozen=True)
class NextStep:
    """Where the worker goes: `url`, and `token` when it is the work page of the slot just claimed
    for them (the page a one-request cycle renders at once, views.work)."""

    url: str
    token: str | None = None


def next_item(slot: Slot, response: Response) -> NextStep:
    """In-house behaviour: claim the next item of the same job, or say that none is left."""
    try:
        following = claim_next_slot(job=slot.job, worker=response.worker)
    except ClaimError:
        following = None  # e.g. the job was paused meanwhile: the response is saved all the same
    if following is not None:
        token = make_token(following)
        return NextStep(reverse("work", args=[token]) + "?saved=1", token)
    return NextStep(reverse("work-done", args=[make_token(slot)]) + "?saved=1")


def after_submit(slot: Slot, response: Response) -> NextStep:
    """The provider's destination when it sends its workers on, else the next item of the job."""
    handler = submit_redirects.get(response.worker.provider)
    url = handler(slot, response) if handler is not None else None
    return NextStep(url) if url else next_item(slot, response)


def after_submit_url(slot: Slot, response: Response) -> str:
    return after_submit(slot, response).url
