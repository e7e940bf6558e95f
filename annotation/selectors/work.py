"""Reads for the annotator pages: the jobs on an annotator's home page, progress on a work page."""
import json
from dataclasses import dataclass
from typing import Any

from django.core.cache import cache
from django.db.models import Aggregate, CharField, Count, Exists, F, OuterRef, Q, Subquery, TextField, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from quorum.compiled_queries import CompiledQuery

from ..models import Item, Job, Response, Slot, Turn, Worker
from ..text.languages import detected_language
from .feedback import feedback_subquery
from .jobs import dialog_history, job_text_language, jobs_open_to


@dataclass(frozen=True)
class AnnotatorJob:
    job: Job
    answers_needed: int  # from anyone: slots open or held
    available_to_you: int  # items with an open slot that this worker has not held or done
    your_responses: int
    has_claim: bool  # the worker holds an unexpired claim in this job


def annotator_jobs(worker: Worker, now=None) -> list[AnnotatorJob]:
    """The live jobs open to this in-house worker, with the worker's own counts: first a job where
    they hold an item, then those with items for them, then those with nothing left for them (each
    group in the jobs' own order), so the page leads with the work they came for. Four queries."""
    now = now or timezone.now()
    jobs = list(jobs_open_to(worker))
    ids = [job.pk for job in jobs]
    yours = dict(
        Response.objects.filter(worker=worker, item__job_id__in=ids)
        .values("item__job_id")
        .annotate(n=Count("id"))
        .values_list("item__job_id", "n")
    )
    # An item counts if one of its open slots may be theirs: a vote slot never is its author's.
    open_to_worker = Slot.objects.filter(item_id=OuterRef("pk"), state=Slot.State.OPEN).exclude(barred_worker=worker)
    available = dict(
        Item.objects.filter(job_id__in=ids)
        .filter(Exists(open_to_worker))
        .exclude(slots__worker=worker)
        .values("job_id")
        .annotate(n=Count("id", distinct=True))
        .values_list("job_id", "n")
    )
    claimed = set(
        Slot.objects.filter(job_id__in=ids, worker=worker, state=Slot.State.CLAIMED, expires_at__gt=now).values_list(
            "job_id", flat=True
        )
    )
    rows = [
        AnnotatorJob(
            job=job,
            answers_needed=job.answers_needed,
            available_to_you=available.get(job.pk, 0),
            your_responses=yours.get(job.pk, 0),
            has_claim=job.pk in claimed,
        )
        for job in jobs
    ]
    return sorted(rows, key=lambda row: (not row.has_claim, row.available_to_you == 0))  # stable


def _worker_slots(worker_id, job_id):
    """The worker's slots in the job; `SUBMITTED_COUNT` of them is their responses there.

    A response is written only with its slot's submission (services.claims) and a submitted slot
    never reopens, so the two counts agree, and counting slots does not read each response's item
    (that join grew with the worker's history, on every work page). The state is counted, not
    filtered on: filtered, the query matches the job's (job, state, position) index as well as the
    worker's, and a planner whose statistics predate the job's first submissions (until PostgreSQL
    next analyzes the table) took the job's index and read every submitted slot of the job on every
    work page, 11 ms at 8,800 of them; filtered on the worker, only the worker's own slots are read.
    """
    return Slot.objects.filter(worker_id=worker_id, job_id=job_id)


SUBMITTED_COUNT = Count("pk", filter=Q(state=Slot.State.SUBMITTED))


def response_count(worker: Worker, job: Job) -> int:
    return _worker_slots(worker.pk, job.pk).aggregate(n=SUBMITTED_COUNT)["n"]


ITEM_COUNT_SECONDS = 30


def item_count(job: Job) -> int:
    """Items in the job, for the "item N of M" line: cached briefly, since counting a large job's
    items on every page view was the slowest query of the annotation loop (perf/bench_claims.py)."""
    key = f"quorum:job-item-count:{job.pk}"
    count = cache.get(key)
    if count is None:
        count = Item.objects.filter(job=job).count()
        cache.set(key, count, ITEM_COUNT_SECONDS)
    return count


def items_for_worker(job: Job, worker: Worker) -> int:
    """Items of a job whose slots bar this worker (a vote job's items on their own work) left out:
    what "item N of M" counts for them. Cached as briefly as `item_count`; one query through the
    partial index of barred slots."""
    if worker.pk is None or job.pk is None:  # a preview's worker and job are never saved
        return item_count(job)
    key = f"quorum:job-barred-items:{job.pk}:{worker.pk}"
    barred = cache.get(key)
    if barred is None:
        barred = Slot.objects.filter(job=job, barred_worker=worker).values("item_id").distinct().count()
        cache.set(key, barred, ITEM_COUNT_SECONDS)
    return item_count(job) - barred


def forget_item_count(job_id: int) -> None:
    """Items were added to the job (a new round): the next "item N of M" counts them."""
    cache.delete(f"quorum:job-item-count:{job_id}")


# --- The work page's one read ----------------------------------------------------------------


class _JSONRows(Aggregate):
    """The aggregated rows as JSON text, [[column, ...], ...], in no particular order.

    One subquery carries a dialog's history in the work page's read; SQLite and PostgreSQL spell
    it differently, and neither keeps the order without more syntax, so the caller sorts.
    """

    function = "JSON_GROUP_ARRAY"
    template = "%(function)s(JSON_ARRAY(%(expressions)s))"
    output_field = TextField()

    def as_postgresql(self, compiler, connection, **extra):
        return self.as_sql(
            compiler, connection, function="JSON_AGG", template="%(function)s(JSON_BUILD_ARRAY(%(expressions)s))::text", **extra
        )


def _work_slot_query(slot_id: int, worker_id: int, *, for_page: bool):
    """The queryset of `work_slot` (see there)."""
    # Every queryset here is unordered (order_by()): the models' default orderings join the job,
    # dialog and corpus tables only to sort one row, and cost more to compile and plan than to run.
    annotators = Job.annotators.through.objects.filter(job_id=OuterRef("job_id"))
    annotations: dict[str, Any] = {
        "job_restricted": Exists(annotators),
        "job_lists_worker": Exists(annotators.filter(worker_id=worker_id)),
        "done_id": Subquery(Response.objects.filter(worker_id=worker_id, item_id=OuterRef("item_id")).order_by().values("pk")[:1]),
    }
    if for_page:
        mine = _worker_slots(worker_id, OuterRef("job_id"))
        annotations["your_responses"] = Coalesce(
            Subquery(mine.order_by().values("worker_id").annotate(n=SUBMITTED_COUNT).values("n")[:1]), Value(0)
        )
        turns = Turn.objects.filter(dialog_id=OuterRef("item__turn__dialog_id"), index__lte=OuterRef("item__turn__index"))
        # The "no" votes on this worker's voted-down work in the job, so the page can tell them why.
        annotations["feedback_json"] = feedback_subquery(worker_id, _JSONRows)
        annotations["history_json"] = Subquery(
            turns.order_by().values("dialog_id").annotate(rows=_JSONRows("index", "speaker", "text")).values("rows")[:1]
        )
        annotations["corpus_language"] = Coalesce(
            F("item__job__corpus__language"), F("item__job__reviews__corpus__language"), Value(""), output_field=CharField()
        )
    return (
        Slot.objects.select_related("item__turn", "item__job__quality", "worker__user")
        .filter(pk=slot_id)
        .annotate(**annotations)
        .order_by()[:1]
    )


# Compiled once per process (quorum.compiled_queries): the loop runs this read twice per cycle, and
# building its SQL cost more than the rest of the request's Python.
_WORK_SLOT: dict[bool, CompiledQuery[Slot]] = {
    for_page: CompiledQuery(lambda slot_id, worker_id, for_page=for_page: _work_slot_query(slot_id, worker_id, for_page=for_page), slot_id=int, worker_id=int)
    for for_page in (False, True)
}


def work_slot(slot_id: int, worker_id: int, *, for_page: bool = False) -> Slot | None:
    """A work page's slot with everything the page and the services need, in one query.

    Joined: the item, its turn, its job and the job's quality policy (`selectors.policies`), the
    worker who holds the slot and their user (the page checks the login against it). Annotated,
    for the worker of the token: `job_restricted`/`job_lists_worker` (the job's annotator list),
    `done_id` (their response to this item, if any). With `for_page`, also `your_responses` (their
    responses in the job), `history_json` (the dialog up to the item's turn, see `history_of`) and
    `corpus_language` (see `text_language`).
    """
    found = _WORK_SLOT[for_page].fetch(slot_id=slot_id, worker_id=worker_id)
    slot = found[0] if found else None
    if slot is not None:
        slot.job = slot.item.job  # the same row: Slot.job is a copy of item.job
    return slot


# Where a payload keeps the text a work page shows (not its codes: a turn's speaker, a response's side).
_SHOWN_TEXT_KEYS = frozenset({"text", "utterance", "response", "question", "answer", "about", "next_turn", "body", "goal", "goal_text"})


def text_language(slot: Slot) -> str:
    """The BCP 47 tag of the text a work page shows and asks for (`job_text_language`), from the
    slot's `corpus_language` when work_slot loaded it, else by asking (an organizer's preview)."""
    language = getattr(slot, "corpus_language", None)
    if language is None:
        return job_text_language(slot.item.job, _shown_texts(slot.item.payload))
    return language or detected_language(_shown_texts(slot.item.payload))


def _shown_texts(value, key: str = ""):
    if isinstance(value, dict):
        for name, inner in value.items():
            yield from _shown_texts(inner, name)
    elif isinstance(value, list):
        for inner in value:
            yield from _shown_texts(inner, key)
    elif isinstance(value, str) and key in _SHOWN_TEXT_KEYS:
        yield value


def history_of(slot: Slot) -> list[dict]:
    """`dialog_history` of the slot's item, from `work_slot(..., for_page=True)` when it was loaded so."""
    item = slot.item
    turn = item.turn if item.turn_id is not None else None
    if turn is None:
        return []
    rows = getattr(slot, "history_json", None)
    if rows is None:
        return dialog_history(item)
    target = turn.index
    return [
        {"speaker": speaker, "text": text, "is_target": index == target}
        for index, speaker, text in sorted(json.loads(rows), key=lambda row: row[0])
    ]
