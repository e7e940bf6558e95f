"""Writes for jobs whose items are built from payloads given by the caller, not from corpus turns.

Used where the thing to annotate is not a turn of a corpus, e.g. a system's response to rate
(the evaluation app's crowd campaigns). Items are written with the same inserts as `create_job`
(`jobs.save_job`); an item's `turn` is NULL, and its position is its index in
`payloads`, so the caller decides the order in which items are offered.
"""
from dataclasses import dataclass
from decimal import Decimal

from django.db import transaction
from django.db.models import Max

from .. import task_types
from ..models import Corpus, Item, Job, PayloadSet
from ..selectors.work import forget_item_count
from ..signals import items_added
from .jobs import JobError, _insert_items, _insert_slots, save_job, task_type_or_error, validated_job_fields


@dataclass(frozen=True)
class PayloadSource:
    """A source row for `jobs.save_job`: no turn, a payload already built."""

    payload: dict
    id: None = None  # Item.turn_id


class _Prebuilt:
    """Hands `jobs.save_job` the payloads the task type has already checked."""

    @staticmethod
    def build_payload(source: PayloadSource) -> dict:
        return source.payload


def create_payload_job(
    *,
    name: str,
    task_type: str,
    payloads: list[dict],
    redundancy: int = 1,
    settings: dict | None = None,
    reward: Decimal | str = Decimal("0.50"),
    instructions: str = "",
    claim_timeout_minutes: int = 30,
    annotators=(),
    created_by=None,
    payload_set: PayloadSet | None = None,
    source_name: str = "",
    payload_names: list[str] | None = None,
) -> Job:
    """A draft job with one item per payload (position = index) and `redundancy` slots per item.

    The task type must build its items from payloads (`FromPayloads`); it checks every
    payload (`build_payload`) before anything is written. The payloads are the job's source: kept
    in `payload_set`, or in a new payload set named `source_name` (the job's name by default).
    `payload_names` name the payloads in messages (a file's lines); by default "payload <index>".
    """
    kind = task_type_or_error(task_type)
    if not isinstance(kind, task_types.FromPayloads):
        raise JobError(f"task type {task_type!r} does not build its items from payloads; use create_job", field="task_type")
    clean_settings, reward = validated_job_fields(kind, settings, name, redundancy, reward, claim_timeout_minutes)
    if not isinstance(payloads, list) or not payloads:
        raise JobError("give at least one payload", field="payloads")
    sources = _built_sources(kind, payloads, payload_names)

    with transaction.atomic():
        if payload_set is None:
            payload_set = PayloadSet.objects.create(name=(source_name or name).strip()[:200], created_by=created_by)
        return save_job(
            item_builder=_Prebuilt(),
            sources=sources,
            annotators=annotators,
            name=name.strip(),
            payload_set=payload_set,
            task_type=kind.key,
            settings=clean_settings,
            instructions=instructions,
            redundancy=redundancy,
            reward=reward,
            claim_timeout_minutes=claim_timeout_minutes,
            created_by=created_by,
        )


def payloads_for(task_type: str, *, text: str | None = None, file_name: str = "", corpus: Corpus | None = None) -> tuple[list, str]:
    """(payloads, where they came from) for a payload job an organizer asks for: read from a file's
    `text` (named `file_name` in messages), or taken from `corpus`'s own data (a DSTC9 knowledge
    base). JobError names what to give instead."""
    kind = task_type_or_error(task_type)
    if not isinstance(kind, task_types.FromPayloads) or not kind.payload_file:
        raise JobError(f"{kind.label}: its items are not made from a payload file", field="task_type")
    if text is not None:
        try:
            return kind.read_payloads(text, file_name), file_name
        except task_types.PayloadError as exc:
            raise JobError(str(exc), field="payloads") from None
    if corpus is not None:
        payloads = kind.payloads_from_corpus(corpus.meta or {})
        if not payloads:
            raise JobError(
                f"corpus {corpus.name!r} has no data to build {kind.label} items from; give a payload file ({kind.payload_file})",
                field="payloads",
            )
        return payloads, f"corpus {corpus.name}"
    raise JobError(f"give a payload file ({kind.payload_file}) or a corpus with knowledge", field="payloads")


def add_payload_items(job: Job, payloads: list[dict]) -> list[int]:
    """Add items for `payloads` to an existing payload job (draft, live or paused), with the job's
    redundancy in open slots each, in one transaction; returns the new items' ids in payload order.

    Positions continue after the job's last item, under a row lock on the job (as gold items are
    added), so concurrent additions never clash. The slots are plain open slots: the claim query is
    the same as for the job's first items. Every payload is checked by the task type before
    anything is written. After commit `signals.items_added` tells hits, which posts the new slots
    of a crowd job through its usual path (the budget is reserved by the caller, or at posting)."""
    kind = task_type_or_error(job.task_type)
    if not isinstance(kind, task_types.FromPayloads):
        raise JobError(f"job {job.name!r} does not build its items from payloads", field="payloads")
    if not isinstance(payloads, list) or not payloads:
        raise JobError("give at least one payload", field="payloads")
    sources = _built_sources(kind, payloads)
    with transaction.atomic():
        job = Job.objects.select_for_update().get(pk=job.pk)
        if job.state == Job.State.FINISHED:
            raise JobError(f"job {job.name!r} is finished; items cannot be added to it", field="state")
        last = Item.objects.filter(job=job).aggregate(m=Max("position"))["m"]
        first = 0 if last is None else last + 1
        _insert_items(job, _Prebuilt(), sources, first_position=first)
        _insert_slots(job, job.redundancy, first_position=first)
        transaction.on_commit(lambda: forget_item_count(job.pk))  # "Item N of M" counts the new round
        transaction.on_commit(lambda: items_added.send(sender=Job, job=job))
        return list(Item.objects.filter(job=job, position__gte=first).order_by("position").values_list("id", flat=True))


def item_ids_by_position(job: Job) -> dict[int, int]:
    """{position: item id} of a job's items, for callers that keep their own link to each payload."""
    return dict(Item.objects.filter(job=job).values_list("position", "id"))


MAX_NAMED_PROBLEMS = 10


def _built_sources(kind, payloads: list, names: list[str] | None = None) -> list:
    """Each payload checked and normalised by the task type, before anything is written; JobError
    names every bad one (up to 10) by its name (a file's line) or its index."""
    sources, problems = [], []
    for index, payload in enumerate(payloads):
        try:
            sources.append(PayloadSource(payload=kind.build_payload(PayloadSource(payload=payload))))
        except ValueError as exc:
            problems.append(f"{names[index] if names else f'payload {index}'}: {exc}")
    if problems:
        more = len(problems) - MAX_NAMED_PROBLEMS
        shown = "; ".join(problems[:MAX_NAMED_PROBLEMS]) + (f"; and {more} more" if more > 0 else "")
        raise JobError(f"{len(problems)} of {len(payloads)} payloads cannot be used, nothing was created: {shown}", field="payloads")
    return sources


def create_payload_job_from_file(
    *, task_type: str, payload_text: str | None = None, payload_file_name: str = "", corpus: Corpus | None = None,
    annotators=(), selection=None, **fields,
) -> Job:
    """A draft payload job from a payload file's text, or from `corpus`'s own data (a DSTC9 knowledge
    base), for the job page, the API and `create_job --payloads`; a selection of turns does not
    apply to payloads."""
    payloads, source = payloads_for(task_type, text=payload_text, file_name=payload_file_name, corpus=corpus)
    names = _line_names(task_type, payload_text, payload_file_name or "the payload file", len(payloads)) if payload_text is not None else None
    return create_payload_job(task_type=task_type, payloads=payloads, annotators=annotators, source_name=source, payload_names=names, **fields)


def _line_names(task_type: str, text: str, file_name: str, count: int) -> list[str] | None:
    """"<file> line N" for each payload of a one-object-a-line file (the default reader), so a bad
    payload is named where the organizer can find it; None for a type that reads its file its own way."""
    kind = task_types.capability(task_types.get(task_type), task_types.FromPayloads)
    if kind is None or type(kind).read_payloads is not task_types.FromPayloads.read_payloads:
        return None
    numbers = [n for n, line in enumerate(text.splitlines(), start=1) if line.strip()]
    return [f"{file_name} line {n}" for n in numbers] if len(numbers) == count else None
