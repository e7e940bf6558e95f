"""Where a worker goes after a response is saved, by provider.

Quorum saves first, then tells the crowd (DESIGN.md, "Providers"): the work page calls
`after_submit_url` only after the response is committed. A provider whose workers must be sent on
(Prolific's completion URL, MTurk's externalSubmit) registers a function in SUBMIT_REDIRECTS from
its own app's `ready()`, so that annotation never imports hits.
"""
from collections.abc import Callable

from django.urls import reverse

from .models import Response, Slot
from .services.claims import ClaimError, claim_next_slot
from .work_tokens import make_token

#: provider -> function(slot, response) -> URL, or None to fall back to `next_item_url` (e.g. a
#: worker of that provider who arrived without a posting). Providers not listed (in-house annotators,
#: who sign in) get `next_item_url`.
SUBMIT_REDIRECTS: dict[str, Callable[[Slot, Response], str]] = {}


def next_item_url(slot: Slot, response: Response) -> str:
    """In-house behaviour: claim the next item of the same job, or say that none is left."""
    try:
        following = claim_next_slot(job=slot.job, worker=response.worker)
    except ClaimError:
        following = None  # e.g. the job was paused meanwhile: the response is saved all the same
    if following is not None:
        return reverse("work", args=[make_token(following)]) + "?saved=1"
    return reverse("work-done", args=[make_token(slot)]) + "?saved=1"


def after_submit_url(slot: Slot, response: Response) -> str:
    handler = SUBMIT_REDIRECTS.get(response.worker.provider)
    url = handler(slot, response) if handler is not None else None
    return url or next_item_url(slot, response)
