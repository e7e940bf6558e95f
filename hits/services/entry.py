"""Writes for a crowd worker's visit: arrive from the provider, claim a slot, finish.

The worker is identified by the provider's parameters on the entry URL; from there on a signed
per-assignment token in the URL carries identity (no session, no third-party cookie). The item is
bound when the worker claims a slot here, not when the posting was made.
"""
from dataclasses import dataclass

from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from annotation.models import Job, Response, Slot, Worker
from annotation.services.claims import ClaimError, claim_next_slot
from quorum.roles import worker_for

from .. import providers
from ..models import Block, JobCrowdConfig, Posting, ProviderAssignment
from ..providers import EntryError


@dataclass
class Arrival:
    preview: bool
    assignment: ProviderAssignment | None = None
    slot: Slot | None = None
    already_submitted: bool = False


def _config_for(job: Job, provider_key: str) -> JobCrowdConfig | None:
    """The job's crowd settings if the job runs on `provider_key` (a job without settings runs on the
    default provider); EntryError otherwise."""
    config = JobCrowdConfig.objects.filter(job=job).first()
    key = config.provider if config is not None else providers.default_key()
    if key != provider_key:
        raise EntryError("This task is not offered on this crowd.")
    return config


def is_blocked(worker: Worker, job: Job) -> bool:
    return Block.objects.filter(worker=worker).filter(Q(job=job) | Q(job__isnull=True)).exists()


def free_stale_places(posting: Posting, now=None) -> int:
    """Give back the places of accepted assignments whose worker no longer holds a claim.

    A claim lasts as long as the provider's assignment (MTurk's AssignmentDurationInSeconds is the
    job's claim timeout), so an assignment without a live claim and without a response is abandoned
    here as at the provider. Run under the posting's row lock, by the admission that needs a place.
    """
    now = now or timezone.now()
    live_claim = Q(slot__state=Slot.State.CLAIMED, slot__worker_id=F("worker_id"), slot__expires_at__gt=now)
    return (
        ProviderAssignment.objects.filter(
            posting=posting, place__isnull=False, state=ProviderAssignment.State.ACCEPTED, response__isnull=True
        )
        .exclude(live_claim)
        .update(place=None, state=ProviderAssignment.State.RETURNED)
    )


def take_place(posting: Posting, now=None) -> int:
    """A free place on a posting locked by the caller; ClaimError when every place is held."""
    free_stale_places(posting, now)
    held = set(
        ProviderAssignment.objects.filter(posting=posting, place__isnull=False).values_list("place", flat=True)
    )
    for place in range(1, posting.assignments + 1):
        if place not in held:
            return place
    raise ClaimError("Every place of this listing is taken. Please return it.")


def admit(*, posting: Posting, worker: Worker, external_id: str, return_url: str = "", now=None):
    """The worker's assignment on a posting, holding a place; the caller holds the posting's row lock.

    Returns (assignment, created). An assignment seen before keeps its place; one that was only given
    up here (its claim lapsed, the provider never said so) is admitted again if a place is free.
    """
    assignment = ProviderAssignment.objects.filter(provider=posting.provider, external_id=external_id).first()
    if assignment is None:
        place = take_place(posting, now)
        assignment = ProviderAssignment.objects.create(
            posting=posting, provider=posting.provider, external_id=external_id, worker=worker,
            return_url=return_url, place=place,
        )
        return assignment, True
    if assignment.worker_id != worker.id or assignment.posting_id != posting.id:
        raise EntryError("This assignment belongs to another worker or listing.")
    lapsed_here = (
        assignment.state == ProviderAssignment.State.RETURNED and not assignment.provider_status and not assignment.response_id
    )
    if lapsed_here:
        assignment.place = take_place(posting, now)
        assignment.state = ProviderAssignment.State.ACCEPTED
        ProviderAssignment.objects.filter(pk=assignment.pk).update(place=assignment.place, state=assignment.state)
    return assignment, False


def refuse_second_place(provider, job: Job, worker: Worker, external_id: str) -> None:
    """EntryError in the provider's words when its rule is one place per worker (`one_place_per_worker`)
    and this worker already holds or used one of the job's places under another assignment id (a new
    Prolific SESSION_ID); returned and void assignments hold none. Inside the arrival's transaction."""
    if not provider.one_place_per_worker:
        return
    # The worker's row lock orders two arrivals of one worker on different postings of the job.
    Worker.objects.select_for_update().filter(pk=worker.pk).exists()
    taken = (
        ProviderAssignment.objects.filter(posting__job=job, worker=worker)
        .exclude(external_id=external_id).exclude(state__in=ProviderAssignment.ENDED)
    )
    if taken.exists():
        raise EntryError(provider.one_place_refusal)


def arrive(*, provider_key: str, job: Job, params, user=None) -> Arrival:
    """Record the worker's assignment and claim a slot for it; EntryError or ClaimError says why not.

    Admission and claim happen in one transaction under a row lock on the posting, so concurrent
    arrivals (real or invented) never hold more places than the posting has assignments.
    """
    config = _config_for(job, provider_key)
    entry = providers.get(provider_key).parse_entry(params, user)
    if entry.preview:
        if job.state == Job.State.FINISHED:
            raise EntryError(providers.get(provider_key).finished_notice)  # no preview offers finished work
        return Arrival(preview=True)
    if entry.signed_in:
        return _arrive_signed_in(job, user)
    posting = Posting.objects.filter(job=job, provider=provider_key, external_id=entry.posting_external_id).first()
    if posting is None:
        raise EntryError("This listing is not (or no longer) part of this task.")
    worker, _ = Worker.objects.get_or_create(provider=provider_key, external_id=entry.worker_external_id)
    if is_blocked(worker, job):
        raise EntryError("You are not able to take this task. Please return it.")
    allow = ((config.requirements if config is not None else None) or {}).get("allow_list") or []
    if allow and worker.external_id not in allow:
        raise EntryError("This task is open to invited workers only. Please return it.")
    with transaction.atomic():
        posting = Posting.objects.select_for_update().get(pk=posting.pk)
        refuse_second_place(providers.get(provider_key), job, worker, entry.assignment_external_id)
        assignment, _ = admit(
            posting=posting, worker=worker, external_id=entry.assignment_external_id, return_url=entry.return_url
        )
        if entry.return_url and assignment.return_url != entry.return_url:
            ProviderAssignment.objects.filter(pk=assignment.pk).update(return_url=entry.return_url)
            assignment.return_url = entry.return_url
        if assignment.response_id or assignment.state != ProviderAssignment.State.ACCEPTED:
            return Arrival(preview=False, assignment=assignment, already_submitted=True)
        slot = bind_slot(assignment, job, worker)
    return Arrival(preview=False, assignment=assignment, slot=slot)


def _arrive_signed_in(job: Job, user) -> Arrival:
    """A signed-in annotator claims; the slot_claimed receiver makes their assignment (admit_claim)."""
    worker = worker_for(user)
    if worker is None:
        raise EntryError("Your account is not an annotator's. Ask the organizer to add you.")
    if is_blocked(worker, job):
        raise EntryError("You are not able to take this task.")
    with transaction.atomic():
        slot = claim_next_slot(job=job, worker=worker)
        if slot is None:
            raise ClaimError("No work is left in this task for you.")
        assignment = ProviderAssignment.objects.filter(slot=slot, worker=worker).first()
    return Arrival(preview=False, assignment=assignment, slot=slot)


def admit_claim(slot: Slot, worker: Worker, provider_key: str) -> ProviderAssignment | None:
    """A signed-in annotator's new claim, inside the claim's transaction: their assignment on the job's
    queue, holding a place as a crowd worker's does (so the budget's places cap in-house work too).

    None when the job has no posting on that provider yet (it was never posted: there is no ledger
    to write to); ClaimError, which refuses the claim, when every place is held.
    """
    postings = list(
        Posting.objects.select_for_update()
        .filter(job_id=slot.job_id, provider=provider_key, state=Posting.State.CREATED)
        .order_by("seq")
    )
    if not postings:
        return None
    external_id = f"slot{slot.pk}-w{worker.pk}-{slot.claimed_at:%Y%m%d%H%M%S%f}"
    for posting in postings:
        try:
            assignment, _ = admit(posting=posting, worker=worker, external_id=external_id)
        except ClaimError:
            continue  # this posting is full; the next may have room
        ProviderAssignment.objects.filter(pk=assignment.pk).update(slot=slot)
        assignment.slot = slot
        return assignment
    raise ClaimError("Every place the budget pays for is taken. Ask the organizer to post more.")


def bind_slot(assignment: ProviderAssignment, job: Job, worker: Worker) -> Slot:
    """The slot the assignment works on: its live claim, or a newly claimed one; ClaimError when none."""
    slot = assignment.slot
    if slot is not None and slot.state == Slot.State.CLAIMED and slot.worker_id == worker.id:
        return slot
    slot = claim_next_slot(job=job, worker=worker)
    if slot is None:
        raise ClaimError("No work is left in this task for you. Please return it.")
    other = ProviderAssignment.objects.filter(slot=slot).exclude(pk=assignment.pk).first()
    if other is not None and other.state == ProviderAssignment.State.ACCEPTED:
        raise ClaimError(
            "You already have an item of this task open in another assignment. Finish or return that one first."
        )
    if other is not None:
        ProviderAssignment.objects.filter(pk=other.pk).update(slot=None)
    ProviderAssignment.objects.filter(pk=assignment.pk).update(slot=slot)
    assignment.slot = slot
    return slot


def record_submission(response: Response) -> ProviderAssignment | None:
    """Link a committed response to the worker's provider assignment; idempotent."""
    assignment = (
        ProviderAssignment.objects.filter(slot_id=response.slot_id, worker_id=response.worker_id).first()
        if response.slot_id
        else None
    )
    if assignment is None:
        return None
    if assignment.response_id != response.id or assignment.state == ProviderAssignment.State.ACCEPTED:
        ProviderAssignment.objects.filter(pk=assignment.pk).update(
            response=response,
            state=ProviderAssignment.State.SUBMITTED
            if assignment.state == ProviderAssignment.State.ACCEPTED
            else assignment.state,
            submitted_at=assignment.submitted_at or timezone.now(),
            missing_response=False,
        )
        assignment.refresh_from_db()
    return assignment


def saved_response_of(assignment: ProviderAssignment) -> Response | None:
    """The committed response of an assignment, if there is one (save first, then tell the crowd)."""
    if assignment.response_id:
        return assignment.response
    if assignment.slot_id:
        response = Response.objects.filter(slot_id=assignment.slot_id, worker_id=assignment.worker_id).first()
        if response is not None:
            return response
    return None
