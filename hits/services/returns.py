"""Writes for work its worker took back at the provider after submitting it (a Prolific participant's
"Return and cancel reward" on a submission awaiting review).

The provider refuses to approve or reject such a submission and pays nothing for it, so Quorum stops
settling it: the assignment is `returned` with the provider's status as its evidence, and no settlement is
sent again. Its place's share of the reservation goes back once no worker can take that place any more:
while its listing is open the provider offers the place to another worker, who may be paid for it, so the
share goes back with the listing's unfilled places (`postings.release_unfilled_places` counts a returned
assignment as unfilled); when those were already given back, it goes back at once. The response the worker
saved stays as it is: whether the work counts, is rejected or left out is the builder's decision.
"""
import logging

from django.db import transaction

from ..models import Posting, ProviderAssignment
from .postings import place_share, release_cost

log = logging.getLogger(__name__)


def returned_after_submitting(assignment_id: int, provider_status: str) -> bool:
    """Record that the provider reports this submitted assignment as returned; True when this call did
    (once: a repeat, or an assignment already settled or ended, changes nothing)."""
    with transaction.atomic():
        # The assignment, then its posting: the hook's transaction holds the assignment's lock already, and
        # the posting's lock orders this against the release of the posting's unfilled places.
        if not ProviderAssignment.objects.select_for_update().filter(
            pk=assignment_id, state=ProviderAssignment.State.SUBMITTED
        ).exists():
            return False
        assignment = ProviderAssignment.objects.select_related("posting").get(pk=assignment_id)
        posting = Posting.objects.select_for_update().get(pk=assignment.posting_id)
        ProviderAssignment.objects.filter(pk=assignment_id).update(
            state=ProviderAssignment.State.RETURNED, place=None, provider_status=provider_status
        )
        if posting.released_at is not None:
            release_cost(posting.job_id, place_share(posting))
    log.info("assignment %s returned at the provider after submitting (%s): not settled", assignment_id, provider_status)
    return True
