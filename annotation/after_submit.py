"""Where a worker goes after a response is saved, by provider.

Quorum saves first, then tells the crowd (DESIGN.md, "Providers"): the work page calls
`after_submit_url` only after the response is committed. A provider whose workers must be sent on
(Prolific's completion URL, MTurk's externalSubmit) registers a function in
`extensions.submit_redirects` from its own app's `ready()`, so that annotation never imports hits.
"""
from django.urls import reverse

from .extensions import submit_redirects
from .models import Response, Slot
from .services.claims import ClaimError, claim_next_slot
from .work_tokens import make_token


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
    handler = submit_redirects.get(response.worker.provider)
    url = handler(slot, response) if handler is not None else None
    return url or next_item_url(slot, response)
