"""Writes for the work loop: claim a slot, submit a response, release expired claims.

The rules (DESIGN.md, "Providers"): work is bound to a worker when the worker claims it; a
worker never gets an item they already hold or did; an item never gets more responses than its
redundancy. Slots are rows made with the item, so redundancy is a row count; the partial unique
constraint `slot_one_worker_per_item` keeps a worker to one slot per item; PostgreSQL's
`SELECT ... FOR UPDATE SKIP LOCKED` lets concurrent claimers take different slots without waiting.
On SQLite, transactions begin IMMEDIATE (see settings), which serializes writers instead.
"""
from datetime import timedelta

from django.db import IntegrityError, transaction
from django.utils import timezone

from .. import task_types
from ..models import Item, Job, Response, SkippedItem, Slot, Worker
from ..signals import response_submitted, slot_claimed
from . import quality, responses
from .errors import ClaimError, ResponseRejected  # noqa: F401  (re-exported: callers know them from here)

CLAIM_ATTEMPTS = 5


def job_admits(job: Job, worker: Worker) -> bool:
    """Whether the job's annotator list lets this worker in (state aside). Empty list = everyone."""
    if not worker.is_in_house:
        return True  # crowd workers arrive through a provider posting of this job
    return not job.annotators.exists() or job.annotators.filter(pk=worker.pk).exists()


def job_is_open_to(job: Job, worker: Worker) -> bool:
    """Whether the worker may claim work in the job now: it is live and admits them."""
    return job.state == Job.State.LIVE and job_admits(job, worker)


def claim_next_slot(*, job: Job, worker: Worker, now=None) -> Slot | None:
    """The worker's current claim on this job, or a newly claimed slot; None when no work is left for them."""
    now = now or timezone.now()
    if not job_is_open_to(job, worker):
        raise ClaimError("This job is not open to you.")
    for _attempt in range(CLAIM_ATTEMPTS):
        try:
            with transaction.atomic():
                held = (
                    Slot.objects.filter(job=job, worker=worker, state=Slot.State.CLAIMED, expires_at__gt=now)
                    .order_by("position")
                    .first()
                )
                if held:
                    return held
                # Quality control: a soft-blocked worker is refused; gold or onboarding items come first.
                gold = quality.gate_claim(job, worker, now)
                if gold is not None:
                    return gold
                taken_items = Slot.objects.filter(job=job, worker=worker).values("item_id")
                open_slots = (
                    Slot.objects.select_for_update(skip_locked=True)
                    .filter(job=job, state=Slot.State.OPEN)
                    .exclude(item_id__in=taken_items)
                    .exclude(item_id__in=SkippedItem.objects.filter(worker=worker).values("item_id"))
                    .exclude(barred_worker=worker)  # never a vote on one's own work
                )
                # Each query orders by position alone, matching the (job, state, position) index; any
                # slot of an item will do. A task type may rotate the order per worker (claim_start):
                # positions from the offset on first, then the ones before it, two ordered index scans.
                start = task_types.get(job.task_type).claim_start(job, worker)
                if start:
                    slot = (
                        open_slots.filter(position__gte=start).order_by("position").first()
                        or open_slots.filter(position__lt=start).order_by("position").first()
                    )
                else:
                    slot = open_slots.order_by("position").first()
                if slot is None:
                    return None
                slot.state = Slot.State.CLAIMED
                slot.worker = worker
                slot.claimed_at = now
                slot.expires_at = now + timedelta(minutes=job.claim_timeout_minutes)
                slot.save(update_fields=["state", "worker", "claimed_at", "expires_at"])
                slot_claimed.send(sender=Slot, slot=slot, worker=worker)
                return slot
        except IntegrityError:
            # The same worker claimed another slot of this item in a concurrent request; try again.
            continue
    raise ClaimError("Too many simultaneous requests; please try again.")


def release_slot(*, slot_id: int, worker: Worker) -> None:
    """The worker gives the item back (skip); it goes to others and is not offered to them again."""
    with transaction.atomic():
        slot = Slot.objects.select_for_update().filter(pk=slot_id, worker=worker, state=Slot.State.CLAIMED).first()
        if slot is None:
            return
        SkippedItem.objects.get_or_create(worker=worker, item_id=slot.item_id)
        slot.state, slot.worker, slot.claimed_at, slot.expires_at = Slot.State.OPEN, None, None, None
        slot.save(update_fields=["state", "worker", "claimed_at", "expires_at"])


def release_expired_claims(now=None) -> int:
    """Free every claim past its expiry; run periodically by Celery beat. Returns how many."""
    now = now or timezone.now()
    return Slot.objects.filter(state=Slot.State.CLAIMED, expires_at__lt=now).update(
        state=Slot.State.OPEN, worker=None, claimed_at=None, expires_at=None
    )


def check_answers(*, slot: Slot, answers: dict):
    """Validate answers for a slot without saving: (cleaned, problems). Used for live feedback."""
    item = slot.item
    kind = task_types.get(item.job.task_type)
    return kind.validate(item.payload, item.job.settings, answers)


def submit_response(
    *, slot_id: int, worker: Worker, answers: dict, active_seconds=None, telemetry=None, now=None
) -> Response:
    """Validate and store a response for a slot the worker holds, atomically.

    Idempotent: a second submission of the same slot by the same worker returns the stored
    response. A claim that expired and was freed is taken back if the item still has room, so a
    slow worker's text is not lost. `telemetry` is what the page recorded about typing (see
    `clean_telemetry`). The response's life begins in the same transaction (`responses.begin`):
    in-house work is accepted and graded, voted on or counted at once; crowd work waits for the
    provider's confirmation.
    """
    now = now or timezone.now()
    slot = Slot.objects.select_related("item__job").filter(pk=slot_id).first()
    if slot is None:
        raise ClaimError("This item does not exist.")
    job = slot.item.job
    if job.state not in (Job.State.LIVE, Job.State.PAUSED):
        raise ClaimError("This job is no longer collecting responses.")
    kind = task_types.get(job.task_type)
    cleaned, problems = kind.validate(slot.item.payload, job.settings, answers or {})
    if problems:
        raise ResponseRejected(problems)
    if active_seconds is not None:
        try:
            active_seconds = max(0.0, min(float(active_seconds), 86400.0))
        except (TypeError, ValueError):
            active_seconds = None
    telemetry = clean_telemetry(telemetry)

    with transaction.atomic():
        # Lock the item first: concurrent submissions to one item then decide completion in turn.
        item = Item.objects.select_for_update().get(pk=slot.item_id)
        slot = Slot.objects.select_for_update().get(pk=slot_id)
        item.job = slot.job = job  # the same row, already loaded: hooks and receivers need not fetch it again
        if slot.worker_id == worker.id and slot.state == Slot.State.SUBMITTED:
            return slot.response
        if slot.worker_id != worker.id or slot.state != Slot.State.CLAIMED:
            slot = _take_back(item, worker, now, job)
        claimed_at = slot.claimed_at or now
        slot.state = Slot.State.SUBMITTED
        slot.expires_at = None
        slot.save(update_fields=["state", "expires_at"])
        response = Response(
            slot=slot,
            item=item,
            worker=worker,
            answers=cleaned,
            checks={"passed": True, "problems": []},
            claimed_at=claimed_at,
            active_seconds=active_seconds,
            telemetry=telemetry,
        )
        if not Slot.objects.filter(item=item).exclude(state=Slot.State.SUBMITTED).exists():
            item.state = Item.State.COMPLETE
            item.save(update_fields=["state"])
        responses.begin(response, kind=kind, needs_confirmation=not worker.is_in_house)
        transaction.on_commit(lambda: response_submitted.send(sender=Response, response=response))
    return response


def _take_back(item: Item, worker: Worker, now, job: Job) -> Slot:
    if Slot.objects.filter(item=item, worker=worker).exclude(state=Slot.State.OPEN).exists():
        raise ClaimError("You have already answered this item.")
    if Slot.objects.filter(item=item, barred_worker=worker).exists():
        raise ClaimError("You cannot vote on your own work.")
    slot = Slot.objects.select_for_update().filter(item=item, state=Slot.State.OPEN).order_by("index").first()
    if slot is None:
        raise ClaimError("Your claim on this item expired and other annotators have completed it.")
    slot.state = Slot.State.CLAIMED
    slot.worker = worker
    slot.claimed_at = now
    slot.save(update_fields=["state", "worker", "claimed_at"])
    return slot


TELEMETRY_FIELDS = ("pasted_chars", "typed_chars", "keystrokes", "paste_events")


def clean_telemetry(telemetry) -> dict:
    """Keep only what the annotator page is meant to record: per answer field, small counts.

    Shape: {field: {"pasted_chars", "typed_chars", "keystrokes", "paste_events"}}; anything else,
    or a value that is not a whole number from 0 to 10^6, is dropped rather than refused: telemetry
    is evidence for a reviewer, never a reason to lose a worker's answer.
    """
    if not isinstance(telemetry, dict):
        return {}
    cleaned = {}
    for field, counts in list(telemetry.items())[:20]:
        if not isinstance(field, str) or not isinstance(counts, dict):
            continue
        kept = {
            k: int(v)
            for k, v in counts.items()
            if k in TELEMETRY_FIELDS and isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= 10**6
        }
        if kept:
            cleaned[field[:64]] = kept
    return cleaned
