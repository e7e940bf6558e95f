"""Writes for jobs: create a job with its items and slots, launch, pause, resume, finish."""
import contextlib
import itertools
import random
from collections import namedtuple
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal

from django.db import connection, transaction
from django.db.models import ProtectedError, TextField
from django.db.models.functions import Cast
from django.utils import timezone

from .. import task_types
from ..extensions import launch_checks
from ..models import Corpus, Dialog, Item, Job, Slot, Turn
from ..signals import job_finished, job_launched
from .bulk import cyclic_gc_paused, decode_json_texts, encode_json, refresh_statistics

ITEM_BATCH = 5000
MAX_REDUNDANCY = 50



#: The task type a new job has when none is named (the job page, the API, `create_job`).
DEFAULT_TASK_TYPE = "rewrite"

#: Why create_job refuses a type that does not build its items from corpus turns, by where it does.
BUILT_ELSEWHERE: dict[type, str] = {
    task_types.FromPayloads: "{kind}: its items are not made from corpus turns; build the job from payloads "
    "(a payload file, annotation.services.payload_jobs.create_payload_job, or an evaluation campaign)",
    task_types.FromResponses: "{kind}: its items are the responses of another job; enable voting on the job whose "
    "responses should be voted on (annotation.services.voting.enable_voting)",
}


class JobError(ValueError):
    """A job request that cannot be carried out; the message says what to change."""

    def __init__(self, message, errors=None, field="non_field_errors"):
        super().__init__(message)
        self.errors = errors or {}  # per-setting messages, for invalid task-type settings
        self.field = field  # the request field the error is about

    def field_errors(self) -> dict:
        """{field: [message]} for the form or the API; settings errors keep their per-setting
        messages, and a field inside another ("selection.size") is nested as the API reads it."""
        if self.errors:
            return settings_errors(self.errors)
        outer, _dot, inner = self.field.partition(".")
        return {outer: {inner: [str(self)]}} if inner else {outer: [str(self)]}


def settings_errors(errors: dict) -> dict:
    """{"settings": {setting: [message]}}: the one shape of bad task-type settings, wherever the API
    or a form finds them (`TaskTypeSettingsError.errors` gives a message per setting)."""
    return {"settings": {name: [str(message)] for name, message in errors.items()}}


@dataclass(frozen=True)
class Selection:
    """Which source turns become items: every one, a random sample of them, or chosen dialogs."""

    mode: str = "all"  # "all" | "sample" | "dialogs"
    size: int | None = None  # with "sample": number of turns
    seed: int = 0  # with "sample": the same seed gives the same sample
    dialog_ids: list[str] = field(default_factory=list)  # with "dialogs": external ids


#: `progress(done, total)`: rows written so far out of all a job's items and slots (`RunProgress`).
Progress = Callable[[int, int], None]


@cyclic_gc_paused()  # tens of thousands of turn rows and payloads, none in a cycle
def create_job(
    *,
    corpus: Corpus,
    name: str,
    task_type: str = DEFAULT_TASK_TYPE,
    settings: dict | None = None,
    selection: Selection | None = None,
    redundancy: int = 1,
    reward: Decimal | str = Decimal("0.50"),
    instructions: str = "",
    claim_timeout_minutes: int = 30,
    annotators=(),
    created_by=None,
    progress: Progress | None = None,
    on_saved: Callable[[Job], None] | None = None,
) -> Job:
    """Create a draft job with one item per selected source turn and `redundancy` slots per item.

    `annotators`: in-house Workers the job is open to; empty means every annotator. `on_saved(job)`
    runs inside the transaction that writes the job, its items and slots (a creation run marks
    itself succeeded there, so a job is never seen without its items).
    """
    selection = selection or Selection()
    kind, clean_settings, reward = checked_job_request(
        corpus=corpus, name=name, task_type=task_type, settings=settings, selection=selection,
        redundancy=redundancy, reward=reward, claim_timeout_minutes=claim_timeout_minutes,
    )
    try:
        turns = _selected_turns(corpus, kind, selection, clean_settings)
    except task_types.TaskTypeSettingsError as exc:
        raise JobError(f"invalid settings: {exc}", exc.errors, field="settings") from None

    return save_job(
        item_builder=kind,
        sources=turns,
        annotators=annotators,
        progress=progress,
        on_saved=on_saved,
        name=name.strip(),
        corpus=corpus,
        task_type=kind.key,
        settings=clean_settings,
        instructions=instructions,
        redundancy=redundancy,
        reward=reward,
        claim_timeout_minutes=claim_timeout_minutes,
        created_by=created_by,
    )


def checked_job_request(
    *, corpus: Corpus, name: str, task_type: str, settings: dict | None, selection: Selection, redundancy: int,
    reward: Decimal | str, claim_timeout_minutes: int,
) -> tuple[task_types.TaskType, dict, Decimal]:
    """Every check of a corpus job's request that does not read its turns (JobError names the field):
    the type, its settings completed from the corpus, the fields, the selection and the dialogs it
    chooses. Returns (type, settings, reward). A job made in the background (`services.job_creation`)
    is refused here, in its request; whether a sample fits is known once its type has read the turns."""
    kind = task_type_or_error(task_type)
    if not isinstance(kind, task_types.FromCorpusTurns):
        raise JobError(BUILT_ELSEWHERE[task_types.item_source(kind)].format(kind=kind.label), field="task_type")
    clean_settings, reward = validated_job_fields(kind, settings, name, redundancy, reward, claim_timeout_minutes)
    try:
        clean_settings = kind.settings_for_corpus(clean_settings, corpus.meta or {})
    except task_types.TaskTypeSettingsError as exc:
        raise JobError(f"invalid settings: {exc}", exc.errors, field="settings") from None
    _source_turns_query(corpus, kind, selection)
    return kind, clean_settings, reward


def task_type_or_error(key: str) -> task_types.TaskType:
    try:
        return task_types.get(key)
    except KeyError as exc:
        raise JobError(str(exc.args[0]), field="task_type") from None


def validated_job_fields(kind, settings, name, redundancy, reward, claim_timeout_minutes) -> tuple[dict, Decimal]:
    """Check the fields every job has; return (cleaned task settings, reward). JobError names the field."""
    try:
        clean_settings = kind.clean_settings(settings)
    except task_types.TaskTypeSettingsError as exc:
        raise JobError(f"invalid settings: {exc}", exc.errors, field="settings") from None
    if not name or not name.strip():
        raise JobError("give the job a name", field="name")
    if isinstance(redundancy, bool) or not isinstance(redundancy, int) or not 1 <= redundancy <= MAX_REDUNDANCY:
        raise JobError(f"redundancy must be a whole number from 1 to {MAX_REDUNDANCY}", field="redundancy")
    reward = Decimal(str(reward))
    if reward < 0:
        raise JobError("reward cannot be negative", field="reward")
    if claim_timeout_minutes < 1:
        raise JobError("claim timeout must be at least one minute", field="claim_timeout_minutes")
    return clean_settings, reward


def save_job(
    *, item_builder, sources, annotators=(), progress: Progress | None = None, on_saved: Callable[[Job], None] | None = None,
    **job_fields,
) -> Job:
    """Write a validated job, one item per source (payload from `item_builder.build_payload`), and its
    slots, in one transaction; `progress` hears of the rows written, `on_saved(job)` runs before it commits."""
    with transaction.atomic():
        job = Job.objects.create(**job_fields)
        if annotators:
            job.annotators.set(annotators)
        _insert_items(job, item_builder, sources, progress=progress)
        _insert_slots(job, job.redundancy)
        if progress is not None:
            progress(len(sources) * (job.redundancy + 1), len(sources) * (job.redundancy + 1))
        if on_saved is not None:
            on_saved(job)
    items = len(sources) if hasattr(sources, "__len__") else job.items.count()
    refresh_statistics(items * (job.redundancy + 1), Item, Slot)  # claims are planned on fresh statistics
    return job


def _insert_items(job: Job, kind, turns, first_position: int = 0, progress: Progress | None = None) -> None:
    """One item per turn: on PostgreSQL with COPY, elsewhere with executemany, ITEM_BATCH rows at a time.

    Why not bulk_create: a job over a whole corpus has ~70,000 items, and building that many model
    instances costs several times the insert itself (see perf/bench_import.py). The rows are
    plain values, so nothing a model instance would check is skipped; constraints still hold in
    the database. Why COPY: 100,002 items took 8-9 s through executemany on PostgreSQL, 1.6 s by
    COPY (docs/measurements.md, "Creating a large job off the request").
    """
    columns = ("job_id", "turn_id", "position", "payload", "state")
    table = connection.ops.quote_name(Item._meta.db_table)
    build, job_id, state = kind.build_payload, job.id, Item.State.OPEN
    with connection.cursor() as cursor, contextlib.ExitStack() as stack:
        # psycopg's COPY ... FROM STDIN on PostgreSQL: the payload's JSON text goes into jsonb as is.
        copy = stack.enter_context(cursor.cursor.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN")) if connection.vendor == "postgresql" else None
        insert = f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join(['%s'] * len(columns))})"
        for start in range(0, len(turns), ITEM_BATCH):
            rows = [
                (job_id, turn.id, first_position + start + i, encode_json(build(turn)), state)
                for i, turn in enumerate(turns[start : start + ITEM_BATCH])
            ]
            if copy is not None:
                for row in rows:
                    copy.write_row(row)
            else:
                cursor.executemany(insert, rows)
            if progress is not None:  # the slots follow: redundancy rows per item
                progress(min(start + ITEM_BATCH, len(turns)), len(turns) * (job.redundancy + 1))


def _insert_slots(job: Job, redundancy: int, first_position: int = 0) -> None:
    """`redundancy` open slots per item of the job from `first_position` on, in one INSERT ... SELECT."""
    q = connection.ops.quote_name
    indexes = " UNION ALL ".join(f"SELECT {k} AS n" for k in range(redundancy))
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {q(Slot._meta.db_table)} (item_id, job_id, {q('index')}, position, state) "
            f"SELECT i.id, i.job_id, k.n, i.position, %s FROM {q(Item._meta.db_table)} i, ({indexes}) k "
            f"WHERE i.job_id = %s AND i.position >= %s",
            [Slot.State.OPEN, job.id, first_position],
        )


#: A source turn as task types read it (`FromCorpusTurns.source_turns`, `build_payload`).
TurnRow = namedtuple("TurnRow", ["id", "dialog_id", "index", "speaker", "text", "slot_values", "dialog_external_id"])
TURN_CHUNK = 5000


def _source_turns_query(corpus, kind, selection: Selection):
    """The turns a selection takes from the corpus, of the type's speaker; the dialogs chosen checked."""
    turns = Turn.objects.filter(dialog__corpus=corpus)
    if selection.mode == "dialogs":
        wanted = set(selection.dialog_ids)
        if not wanted:
            raise JobError("choose at least one dialog", field="selection")
        found = set(Dialog.objects.filter(corpus=corpus, external_id__in=wanted).values_list("external_id", flat=True))
        missing = sorted(wanted - found)
        if missing:
            raise JobError(f"dialogs not in corpus {corpus.name!r}: {', '.join(missing[:10])}", field="selection")
        turns = turns.filter(dialog__external_id__in=wanted)
    elif selection.mode not in ("all", "sample"):
        raise JobError("selection mode must be all, sample or dialogs", field="selection")
    if selection.mode == "sample" and (not selection.size or selection.size < 1):
        raise JobError("a sample needs a size of at least 1", field="selection")
    if kind.source_speaker is not None:
        turns = turns.filter(speaker=kind.source_speaker)
    return turns


def _check_selection_size(corpus, kind, selection: Selection, available: int) -> None:
    """JobError when the selection takes no turn, or a sample asks for more than there are."""
    if not available:
        raise JobError("the selection contains no turns to annotate", field="selection")
    if selection.mode == "sample" and selection.size is not None and selection.size > available:
        raise JobError(_sample_too_large(corpus, kind, selection.size, available), field="selection.size")


def _selected_turns(corpus, kind, selection: Selection, settings: dict) -> list:
    rows = _source_turns_query(corpus, kind, selection).order_by("dialog__position", "index").values_list(
        "id", "dialog_id", "index", "speaker", "text", Cast("slot_values", TextField()), "dialog__external_id"
    )
    chosen = list(kind.source_turns(_turn_rows(rows), settings))
    _check_selection_size(corpus, kind, selection, len(chosen))
    if selection.mode == "sample" and selection.size is not None and selection.size < len(chosen):
        keep = set(random.Random(selection.seed).sample(range(len(chosen)), selection.size))
        chosen = [t for i, t in enumerate(chosen) if i in keep]
    return chosen


def _sample_too_large(corpus, kind, size: int, available: int) -> str:
    turns = "user turns" if kind.source_speaker == "user" else "turns this task type can take"
    return (
        f"a sample of {size:,} turns is more than the {available:,} {turns} of corpus {corpus.name!r}; "
        f"ask for at most {available:,}, or take every source turn"
    )


def _turn_rows(rows):
    """TurnRows from (id, dialog_id, index, speaker, text, slot_values as JSON text, dialog's external id) rows.

    Light rows rather than model instances (see _insert_items), and the slot values read as text
    and decoded a chunk at a time: JSONField's per-row json.loads cost more than the query.
    """
    stream = rows.iterator(chunk_size=TURN_CHUNK)
    while chunk := list(itertools.islice(stream, TURN_CHUNK)):
        yield from _decoded(chunk)


def _decoded(chunk: list):
    values = decode_json_texts([row[5] for row in chunk])
    return [TurnRow._make((*row[:5], slot_values, row[6])) for row, slot_values in zip(chunk, values, strict=True)]


def launch_job(job: Job) -> Job:
    """Put a draft or paused job live. Every registered launch check (`extensions.launch_checks`, e.g.
    hits's budget check for crowd jobs) runs with the locked job first; a message refuses the launch
    with that reason and changes nothing."""
    with transaction.atomic():
        job = Job.objects.select_for_update().get(pk=job.pk)
        if job.state not in (Job.State.DRAFT, Job.State.PAUSED):
            if job.state == Job.State.LIVE:
                raise JobError("the job is already live", field="state")
            raise JobError(f"a {job.get_state_display().lower()} job cannot be launched", field="state")
        for check in launch_checks.values():
            message = check(job)
            if message is not None:
                raise JobError(message, field="state")
        job.state = Job.State.LIVE
        job.launched_at = job.launched_at or timezone.now()
        job.save(update_fields=["state", "launched_at"])
        # Its vote job, made while it was a draft, goes live with it: votes come only from its responses.
        Job.objects.filter(
            reviews=job, state=Job.State.DRAFT, task_type__in=task_types.keys_with(task_types.FromResponses)
        ).update(state=Job.State.LIVE, launched_at=job.launched_at)
        transaction.on_commit(lambda: job_launched.send(sender=Job, job=job))
    return job


def pause_job(job: Job) -> Job:
    return _transition(job, {Job.State.LIVE}, Job.State.PAUSED)


def finish_job(job: Job) -> Job:
    """Nothing more is collected; a crowd job's listings are closed at the provider (`job_finished`)."""
    job = _transition(job, {Job.State.LIVE, Job.State.PAUSED}, Job.State.FINISHED)
    transaction.on_commit(lambda: job_finished.send(sender=Job, job=job))
    return job


def _transition(job, allowed_from, to):
    with transaction.atomic():
        job = Job.objects.select_for_update().get(pk=job.pk)
        if job.state not in allowed_from:
            if job.state == to:  # a second click, or two tabs
                raise JobError(f"the job is already {job.get_state_display().lower()}", field="state")
            raise JobError(f"a {job.get_state_display().lower()} job cannot become {to}", field="state")
        job.state = to
        job.save(update_fields=["state"])
    return job


#: State changes an organizer can ask for, by the name used in URLs and buttons.
JOB_ACTIONS: dict[str, Callable[[Job], Job]] = {"launch": launch_job, "pause": pause_job, "finish": finish_job}


def update_draft_job(job: Job, *, name: str, instructions: str, reward, claim_timeout_minutes: int) -> Job:
    """A draft job's name, instructions, reward and claim timeout changed; JobError once it is live
    (workers may have seen it) or for a bad value. Its items and settings stay: make a new job for those."""
    with transaction.atomic():
        job = Job.objects.select_for_update().get(pk=job.pk)
        if job.state != Job.State.DRAFT:
            raise JobError(f"job {job.name!r} is {job.get_state_display().lower()}; only a draft can be edited", field="state")
        kind = task_type_or_error(job.task_type)
        _settings, reward = validated_job_fields(kind, job.settings, name, job.redundancy, reward, claim_timeout_minutes)
        job.name, job.instructions, job.reward, job.claim_timeout_minutes = name.strip(), instructions, reward, claim_timeout_minutes
        job.save(update_fields=["name", "instructions", "reward", "claim_timeout_minutes"])
        return job


def delete_draft_job(job: Job) -> str:
    """Delete a draft job nothing depends on (no response, no campaign or posting); returns its name.
    JobError says what holds it and what to do instead."""
    with transaction.atomic():
        job = Job.objects.select_for_update().get(pk=job.pk)
        if job.state != Job.State.DRAFT:
            raise JobError(
                f"job {job.name!r} is {job.get_state_display().lower()}; only a draft can be deleted (finish it instead)", field="state"
            )
        try:
            with transaction.atomic():
                job.delete()
        except ProtectedError as exc:
            holders = sorted({str(type(obj)._meta.verbose_name) for obj in exc.protected_objects})
            raise JobError(
                f"job {job.name!r} is used by a {', '.join(holders)}; delete or change that first, or keep the job as a draft",
                field="state",
            ) from None
        return job.name


def change_state(job: Job, action: str) -> Job:
    """Launch, pause or finish a job; JobError when the action is unknown or not allowed now."""
    try:
        service = JOB_ACTIONS[action]
    except KeyError:
        raise JobError(f"unknown job action {action!r}; use one of {', '.join(JOB_ACTIONS)}", field="action") from None
    return service(job)
