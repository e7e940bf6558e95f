"""Writes for the work loop: claim a slot, submit a response, release expired claims.

The rules (DESIGN.md, "Providers"): work is bound to a worker when the worker claims it; a
worker never gets an item they already hold or did; an item never gets more responses than its
redundancy. Slots are rows made with the item, so redundancy is a row count; the partial unique
constraint `slot_one_worker_per_item` keeps a worker to one slot per item; PostgreSQL's
`SELECT ... FOR UPDATE SKIP LOCKED` lets concurrent claimers take different slots without waiting.
On SQLite, transactions begin IMMEDIATE (see settings), which serializes writers instead.
"""
from collections.abc import Mapping
from contextlib import nullcontext
from datetime import datetime, timedelta
from functools import cache
from typing import NamedTuple

from django.db import IntegrityError, connection, transaction
from django.db.models import Exists, OuterRef, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from quorum.compiled_queries import CompiledQuery, CompiledUpdate, prepared_cursor

from .. import task_types
from ..extensions import claim_watchers
from ..models import Item, Job, Response, SkippedItem, Slot, Worker
from ..selectors.policies import policy_of
from ..signals import response_submitted, slot_claimed
from ..task_types import HoldsBackItems, OrdersClaims, capability
from ..text import typing_log
from ..text.problems import Problem, unstorable_text
from . import quality, responses, uploads
from .errors import ClaimError, ResponseRejected  # noqa: F401  (re-exported: callers know them from here)

CLAIM_ATTEMPTS = 5


def job_admits(job: Job, worker: Worker) -> bool:
    """Whether the job's annotator list lets this worker in (state aside). Empty list = everyone."""
    if not worker.is_in_house:
        return True  # crowd workers arrive through a provider posting of this job
    known = getattr(job, "_admitted", {})
    if worker.pk in known:
        return known[worker.pk]
    return not job.annotators.exists() or job.annotators.filter(pk=worker.pk).exists()


def remember_admission(job: Job, worker: Worker, *, listed: bool, restricted: bool) -> None:
    """Keep on this job instance what a read already learnt about its annotator list (the work
    page's `selectors.work.work_slot`), so that `job_admits` does not ask again in this request."""
    job._admitted = {**getattr(job, "_admitted", {}), worker.pk: listed or not restricted}  # type: ignore[attr-defined]  # a memo for this request, not a field


def job_is_open_to(job: Job, worker: Worker) -> bool:
    """Whether the worker may claim work in the job now: it is live and admits them."""
    return job.state == Job.State.LIVE and job_admits(job, worker)


def claim_next_slot(*, job: Job, worker: Worker, now=None) -> Slot | None:
    """The worker's current claim on this job, or a newly claimed slot; None when no work is left for them."""
    now = now or timezone.now()
    if not job_is_open_to(job, worker):
        raise ClaimError("This job is not open to you.")
    kind = task_types.get(job.task_type)
    policy = policy_of(job)
    if policy is None:
        orders = capability(kind, OrdersClaims)
        start_values = orders.claim_start_values(job, worker) if orders else None
        if _claims_in_one_statement(kind, job, start_values):
            return _claim_in_one_statement(job, worker, now, orders if start_values is not None else None, start_values)
    for _attempt in range(CLAIM_ATTEMPTS):
        try:
            with transaction.atomic():
                held = _held(job, worker, now).first()
                if held:
                    return held
                # Quality control: a soft-blocked worker is refused; gold or onboarding items come first.
                gold = quality.gate_claim(job, worker, now, policy=policy)
                if gold is not None:
                    return gold
                open_slots = _open_slots(job, worker).select_for_update(skip_locked=True)
                # Each query orders by position alone, matching the (job, state, position) index; any
                # slot of an item will do. A task type may rotate the order per worker (claim_start):
                # positions from the offset on first, then the ones before it, two ordered index scans.
                orders = capability(kind, OrdersClaims)
                start = orders.claim_start(job, worker) if orders else None
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


def _held(job: Job, worker: Worker, now):
    """The worker's unexpired claims in the job, first in position order."""
    return _held_by(job.pk, worker.pk, now)


def _held_by(job_id: int, worker_id: int, now):
    return Slot.objects.filter(job_id=job_id, worker_id=worker_id, state=Slot.State.CLAIMED, expires_at__gt=now).order_by("position")


def _open_slots(job: Job, worker: Worker):
    """Open slots of the job this worker may take: never an item they hold, did or skipped, never
    a vote on their own work, never one its task type holds back."""
    slots = _open_slots_of(job.pk, worker.pk)
    held_back = _held_back(job)
    return slots.exclude(**{f"item__{lookup}": value for lookup, value in held_back.items()}) if held_back else slots


def _held_back(job: Job) -> Mapping | None:
    """What the job's task type holds back now (e.g. chats with a paused system), as item lookups."""
    holds = capability(task_types.get(job.task_type), HoldsBackItems)
    return holds.held_back(job) if holds else None


def _open_slots_of(job_id: int, worker_id: int):
    """`_open_slots` before what the task type holds back."""
    # NOT EXISTS per candidate, not NOT IN (the worker's items): the open slots come in position
    # order and the first few usually qualify, so each test is one probe of a unique (item, worker)
    # index, where NOT IN hashed every item the worker ever did, on every claim.
    return (
        Slot.objects.filter(job_id=job_id, state=Slot.State.OPEN)
        .filter(~Exists(Slot.objects.filter(item_id=OuterRef("item_id"), worker_id=worker_id)))
        .filter(~Exists(SkippedItem.objects.filter(item_id=OuterRef("item_id"), worker_id=worker_id)))
        .exclude(barred_worker_id=worker_id)
    )


def _first_open_unless_held(job_id: int, worker_id: int, now, held_back: Mapping | None = None, positions: Mapping | None = None):
    """The one-statement claim's pick: the first open slot for the worker (among `positions`, slot
    lookups), unless they hold a claim."""
    slots = _open_slots_of(job_id, worker_id)
    if held_back:
        slots = slots.exclude(**{f"item__{lookup}": value for lookup, value in held_back.items()})
    if positions:
        slots = slots.filter(**positions)
    return slots.filter(~Exists(_held_by(job_id, worker_id, now))).order_by("position").values("pk")[:1]


# The plain claim's pick compiled once per process (quorum.compiled_queries): building it cost more
# than running it, on every cycle of the annotation loop.
_PLAIN_PICK = CompiledQuery(_first_open_unless_held, job_id=int, worker_id=int, now=datetime)


def _claims_in_one_statement(kind, job: Job, start_values: Mapping | None = None) -> bool:
    """Whether the claim can be one UPDATE: on PostgreSQL (SKIP LOCKED inside an UPDATE's
    subquery), for a task type with the plain position order or one whose rotation of it is an SQL
    expression (`start_values`, what `OrdersClaims.claim_start_values` gave for this claim: None when
    the type has no such expression), and with nobody who must act on this
    job's claims (`extensions.claim_watchers`), since `slot_claimed` receivers are promised the claim's
    transaction. The caller has checked that the job has no quality policy (no soft blocks, no gold
    to serve first)."""
    return (
        connection.vendor == "postgresql"
        and (start_values is not None or not isinstance(kind, OrdersClaims))
        and not any(watches(job) for watches in claim_watchers.values())
    )


def _claim_in_one_statement(
    job: Job, worker: Worker, now, orders: OrdersClaims | None = None, start_values: Mapping | None = None,
) -> Slot | None:
    """`claim_next_slot` in one round trip, the usual queue statement:

        UPDATE slot SET <claimed by worker> WHERE id = (<first open slot for the worker, unless the
        worker holds a claim> FOR UPDATE SKIP LOCKED) RETURNING *

    Same rules as the transactional path (the same `_open_slots`, the held claim first, rows locked
    by other claimers skipped, a rotated order's two scans: `_rotated_pick`); when it claims
    nothing, one more query tells a held claim from an exhausted job.
    """
    expires_at = now + timedelta(minutes=job.claim_timeout_minutes)
    held_back = _held_back(job)
    if orders is not None:
        target, pick_params = _rotated_pick(orders, job, worker, now, held_back, start_values or {})
        sql = _rotated_claim_statement(target) if not held_back else _claim_statement(target)
    elif held_back:
        pick_sql, pick_params = _first_open_unless_held(job.pk, worker.pk, now, held_back).query.sql_with_params()
        sql = _claim_statement(_locked(pick_sql))
    else:
        pick_sql, pick_params = _PLAIN_PICK.sql_with_params(job_id=job.pk, worker_id=worker.pk, now=now)
        sql = _plain_claim_statement(pick_sql)
    params = [Slot.State.CLAIMED, worker.pk, now, expires_at, *pick_params]
    for _attempt in range(CLAIM_ATTEMPTS):
        try:
            # Alone, the statement is its own transaction; inside a caller's, a savepoint keeps a
            # unique violation from spoiling it.
            with transaction.atomic() if connection.in_atomic_block else nullcontext():
                with prepared_cursor() as cursor:
                    cursor.execute(sql, params)
                    row = cursor.fetchone()
        except IntegrityError:
            continue  # the same worker claimed another slot of this item in a concurrent request
        if row is not None:
            slot = Slot.from_db(connection.alias, _SLOT_COLUMNS, row)
            slot.job = job
            return slot
        return _held(job, worker, now).first()
    raise ClaimError("Too many simultaneous requests; please try again.")


_SLOT_COLUMNS = [f.attname for f in Slot._meta.concrete_fields]


def _locked(pick_sql: str) -> str:
    """A pick as a subquery whose row is locked, rows other claimers hold skipped."""
    return f"({pick_sql} FOR UPDATE SKIP LOCKED)"


_ROTATION_SCANS = ("position__gte", "position__lt")


def _rotated_pick(orders: OrdersClaims, job: Job, worker: Worker, now, held_back: Mapping | None, values: Mapping) -> tuple[str, list]:
    """The pick in a worker's rotation of the position order, as the transactional claim makes it:
    the first open slot from the type's start (`claim_start_expression` with these `values`) on,
    else the first before it. Two ordered scans of the (job, state, position) index, the second run
    only when the first finds nothing: COALESCE evaluates its arguments lazily, so the second scan
    locks no row the first made needless. NULL and 0 are the plain order (all positions from 0 on,
    none before)."""
    if held_back:  # what is held back (a list of varying length, a relay's query) is built for the claim: so is the pick
        start = _start(orders, job.pk, worker.pk, values)
        picks = [
            _first_open_unless_held(job.pk, worker.pk, now, held_back, {lookup: start}).query.sql_with_params()
            for lookup in _ROTATION_SCANS
        ]
    else:
        picks = [
            pick.sql_with_params(job_id=job.pk, worker_id=worker.pk, now=now, **values)
            for pick in _compiled_rotated_picks(orders, tuple(sorted(values)))
        ]
    (after, after_params), (before, before_params) = picks
    return f"COALESCE({_locked(after)}, {_locked(before)})", [*after_params, *before_params]


def _start(orders: OrdersClaims, job_id: int, worker_id: int, values: Mapping):
    return Coalesce(orders.claim_start_expression(job_id, worker_id, **values), Value(0))


@cache
def _compiled_rotated_picks(orders: OrdersClaims, names: tuple[str, ...]) -> tuple[CompiledQuery, ...]:
    """A type's two rotated scans compiled once per process, as `_PLAIN_PICK` is: building them
    cost a rating job's claim several times what running them did (perf/bench_rated.py)."""

    def scan(lookup):
        return lambda job_id, worker_id, now, **values: _first_open_unless_held(
            job_id, worker_id, now, None, {lookup: _start(orders, job_id, worker_id, values)},
        )

    kinds: dict[str, type] = {"job_id": int, "worker_id": int, "now": datetime, **dict.fromkeys(names, int)}
    return tuple(CompiledQuery(scan(lookup), "default", **kinds) for lookup in _ROTATION_SCANS)


def _claim_statement(target_sql: str) -> str:
    """The claim's UPDATE of the slot whose id `target_sql` (an SQL expression) picks."""
    qn = connection.ops.quote_name
    columns = ", ".join(qn(f.column) for f in Slot._meta.concrete_fields)
    return (
        f"UPDATE {qn(Slot._meta.db_table)} SET {qn('state')} = %s, {qn('worker_id')} = %s, "
        f"{qn('claimed_at')} = %s, {qn('expires_at')} = %s "
        f"WHERE {qn('id')} = {target_sql} RETURNING {columns}"
    )


@cache
def _plain_claim_statement(pick_sql: str) -> str:
    return _claim_statement(_locked(pick_sql))


@cache
def _rotated_claim_statement(target_sql: str) -> str:
    return _claim_statement(target_sql)


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
    unstorable = unstorable_text(answers)
    if unstorable:
        return {}, unstorable
    return kind.validate(item.payload, item.job.settings, answers)


class Submission(NamedTuple):
    """What `submit` did: `created` is False when the slot had been saved before (a double click, a
    reload, a simultaneous post) and `response` is what was stored then, not what was just sent."""

    response: Response
    created: bool


def takes_work(job: Job, slot: Slot, worker_id: int, now=None) -> bool:
    """Whether `job` still takes this worker's answer for `slot`: while it is live or paused, and
    after it was finished for a claim the worker held at the close, until that claim expires: a
    worker half way through an item when the builder pressed Finish is not turned away (a crowd
    worker inside a closed listing is still settled, `hits.services.reconcile`)."""
    if job.state in (Job.State.LIVE, Job.State.PAUSED):
        return True
    now = now or timezone.now()
    return (
        job.state == Job.State.FINISHED and slot.state == Slot.State.CLAIMED and slot.worker_id == worker_id
        and slot.expires_at is not None and slot.expires_at > now
    )


def submit_response(**kwargs) -> Response:
    """`submit`, for callers that need only the stored response (the first one, on a repeat)."""
    return submit(**kwargs).response


def submit(
    *, slot_id: int, worker: Worker, answers: dict, active_seconds=None, telemetry=None, now=None, slot: Slot | None = None,
    typing: str | None = None, typing_strict: bool = True,
) -> Submission:
    """Validate and store a response for a slot the worker holds, atomically.

    Idempotent: a second submission of the same slot by the same worker stores nothing and returns
    the stored response with `created=False`, so the caller can say truthfully that the first text
    was kept. A claim that expired and was freed is taken back if the item still has room, so a
    slow worker's text is not lost. `telemetry` is what the page recorded about typing (see
    `clean_telemetry`). `typing` is the page's typing-process log as posted (`annotation/text/typing_log.py`):
    with `typing_strict` (a form post from the page) a malformed one is a problem beside the
    answers' own, so the worker reads every reason at once; without (a script's post) the response
    is stored and the malformed log kept as that, which the flags report. The response's life begins in the same transaction (`responses.begin`):
    in-house work is accepted and graded, voted on or counted at once; crowd work waits for the
    provider's confirmation. `slot`, when the caller has it loaded with its item and job (the work
    page does), saves reading it again.
    """
    now = now or timezone.now()
    if slot is None or slot.pk != slot_id:
        slot = Slot.objects.select_related("item__job").filter(pk=slot_id).first()
    if slot is None:
        raise ClaimError("This item does not exist.")
    job = slot.item.job
    if not takes_work(job, slot, worker.pk, now):
        raise ClaimError("This job is no longer collecting responses.")
    kind = task_types.get(job.task_type)
    answers = answers or {}
    problems = uploads.oversized(kind, job.settings, answers) + unstorable_text(answers)
    if problems:
        raise ResponseRejected(problems)
    cleaned, problems = kind.validate(slot.item.payload, job.settings, answers)
    records, typing_problems = typing_records(kind, job.settings, typing, strict=typing_strict)
    if problems or typing_problems:
        raise ResponseRejected(list(problems) + typing_problems)
    cleaned, files = uploads.split(cleaned)  # files (task_types.base.Upload) go to their store below
    if active_seconds is not None:
        try:
            active_seconds = max(0.0, min(float(active_seconds), 86400.0))
        except (TypeError, ValueError):
            active_seconds = None
    telemetry = clean_telemetry(telemetry)

    written: list[tuple] = []  # files stored for this response, taken back if its transaction fails
    try:
        with transaction.atomic():
            return _store(slot, slot_id, worker, job, kind, cleaned, files, written, now, active_seconds, telemetry, records)
    except BaseException:
        uploads.discard(written)
        raise


def _store(slot, slot_id, worker, job, kind, cleaned, files, written, now, active_seconds, telemetry, records) -> Submission:
    """The transaction of `submit`: the slot, the response, its files, its life."""
    # The item is locked first (in the same statement as the slot's write, when the claim is still
    # the one read): concurrent submissions to one item then decide completion in turn.
    if _submit_held_claim(slot, worker):
        claimed_at = slot.claimed_at
        item = slot.item  # read with the slot; a held claim's item is open, and nothing else of it changes
    else:
        item = _locked_item(slot.item_id)
        slot = Slot.objects.select_for_update().get(pk=slot_id)
        if slot.worker_id == worker.id and slot.state == Slot.State.SUBMITTED:
            slot.job = job
            return Submission(slot.response, created=False)
        if slot.worker_id != worker.id or slot.state != Slot.State.CLAIMED:
            slot = _take_back(item, worker, now, job)
        claimed_at = slot.claimed_at or now
        slot.state = Slot.State.SUBMITTED
        slot.expires_at = None
        slot.save(update_fields=["state", "expires_at"])
    item.job = job  # the same row, already loaded: hooks and receivers need not fetch it again
    slot.job = job
    response = Response(
        slot=slot,
        item=item,
        worker=worker,
        answers=cleaned,
        checks={"passed": True, "problems": []},
        claimed_at=claimed_at,
        active_seconds=active_seconds,
        telemetry=telemetry,
        typing=records,
    )
    # Complete when no other slot is left unsubmitted: the check and the write in one statement,
    # run under the item's lock, so it sees every submission committed before ours.
    if _COMPLETE_IF_ALL_SUBMITTED.run(item_id=item.pk):
        item.state = Item.State.COMPLETE
    responses.begin(response, kind=kind, needs_confirmation=not worker.is_in_house)
    uploads.keep(response, kind, files, written)
    transaction.on_commit(lambda: response_submitted.send(sender=Response, response=response))
    return Submission(response, created=True)


# The submission's three statements on the items and slots, compiled once per process
# (quorum.compiled_queries): building them cost more than running them, on every cycle of the loop.
# Unordered: the model's default ordering joins the job, and FOR UPDATE would lock the job's row too.
_ITEM_LOCKED = CompiledQuery(lambda item_id: Item.objects.select_for_update().filter(pk=item_id).order_by(), item_id=int)
# The item's lock is an uncorrelated subquery of the slot's write, which PostgreSQL runs once before
# the write (a one-time filter): the lock is taken first, as `_locked_item` takes it, in one round trip.
_SUBMIT_IF_STILL_CLAIMED = CompiledUpdate(
    lambda slot_id, worker_id, claimed_at, item_id: (
        Slot.objects.filter(pk=slot_id, worker_id=worker_id, state=Slot.State.CLAIMED, claimed_at=claimed_at).filter(
            Exists(Item.objects.select_for_update().filter(pk=item_id).order_by())
        ),
        {"state": Slot.State.SUBMITTED, "expires_at": None},
    ),
    slot_id=int, worker_id=int, claimed_at=datetime, item_id=int,
)
# Complete when no other slot is left unsubmitted: the check and the write in one statement.
_COMPLETE_IF_ALL_SUBMITTED = CompiledUpdate(
    lambda item_id: (
        Item.objects.filter(pk=item_id).filter(
            ~Exists(Slot.objects.filter(item_id=OuterRef("pk")).exclude(state=Slot.State.SUBMITTED))
        ),
        {"state": Item.State.COMPLETE},
    ),
    item_id=int,
)


def _locked_item(item_id: int) -> Item:
    """The item, its row locked until the transaction ends."""
    found = _ITEM_LOCKED.fetch(item_id=item_id)
    if not found:
        raise Item.DoesNotExist(f"Item {item_id} does not exist.")
    return found[0]


def _submit_held_claim(slot: Slot, worker: Worker) -> bool:
    """Lock the slot's item and mark the slot submitted if it is still the claim the caller read
    (this worker's, claimed at the same moment): one statement instead of locking the item, then
    locking and re-reading the slot. False when it is not (the item may be locked or not), and the
    caller locks the item and looks again."""
    if slot.worker_id != worker.id or slot.state != Slot.State.CLAIMED:
        return False
    if slot.claimed_at is None:
        return False
    written = _SUBMIT_IF_STILL_CLAIMED.run(slot_id=slot.pk, worker_id=worker.pk, claimed_at=slot.claimed_at, item_id=slot.item_id)
    if written:
        slot.state, slot.expires_at = Slot.State.SUBMITTED, None
    return bool(written)


def _take_back(item: Item, worker: Worker, now, job: Job) -> Slot:
    """The worker's claim on this item expired and was freed: take an open slot of the item for
    them, or say truthfully why not (the caller shows their text back)."""
    mine = set(Slot.objects.filter(item=item, worker=worker).values_list("state", flat=True))
    if Slot.State.SUBMITTED in mine:
        raise ClaimError("You have already answered this item.")
    if Slot.State.CLAIMED in mine:
        raise ClaimError(
            "Your claim on this item expired and the item was offered to you again under a new link; "
            "nothing was saved from this one. Submit your text there."
        )
    if Slot.objects.filter(item=item, barred_worker=worker).exists():
        raise ClaimError("You cannot vote on your own work.")
    slot = Slot.objects.select_for_update().filter(item=item, state=Slot.State.OPEN).order_by("index").first()
    if slot is None:
        raise ClaimError("Your claim on this item expired and the item went to other annotators; nothing was saved.")
    slot.state = Slot.State.CLAIMED
    slot.worker = worker
    slot.claimed_at = now
    slot.save(update_fields=["state", "worker", "claimed_at"])
    return slot


def typing_records(kind, settings, posted: str | None, *, strict: bool) -> tuple[dict, list[Problem]]:
    """The typing logs to store ({field: record}, a malformed one as {"malformed": why}) and, when
    `strict`, the problems a malformed log makes (the worker reads them with the answers' own)."""
    names = task_types.free_text_fields(kind, settings)
    if capability(kind, task_types.RelaysChat):  # the messages typed to the system, from the chat box
        names.append(task_types.CHAT_MESSAGES)
    good, bad = typing_log.check_posted(posted or "", names)
    if not bad:
        return good, []
    if strict:
        return good, [
            Problem(field, "typing_log", f"This page's record of your typing could not be read ({why}). Reload the page and type your answer again.")
            for field, why in bad.items()
        ]
    return {**good, **{field or "*": {"malformed": why} for field, why in bad.items()}}, []


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
