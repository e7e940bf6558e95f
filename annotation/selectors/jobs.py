"""Reads for jobs: what an annotator may see, what an organizer follows."""
from collections.abc import Iterable
from dataclasses import dataclass

from django.db.models import Avg, Count, F, OuterRef, Q, Subquery, Window
from django.db.models.functions import RowNumber

from ..models import CheckOverride, Item, Job, Response, Slot, Turn, Worker
from ..text.languages import detected_language


def job_text_language(job: Job, texts: Iterable[str] = ()) -> str:
    """The BCP 47 tag of a job's corpus text, for the `lang` of work and review pages: its corpus's
    language (a vote job's: the voted job's corpus's); for a job of payloads, found from `texts`,
    the text a page shows of it."""
    source = job.reviews if job.reviews_id and job.reviews is not None else job
    if source.corpus_id and source.corpus is not None:
        return source.corpus.language
    return detected_language(texts)


def jobs_open_to(worker: Worker):
    """Live jobs this in-house worker may work on, with how many answers they still need from
    anyone: slots open or held by someone (a held item is not answered yet)."""
    jobs = Job.objects.filter(state=Job.State.LIVE).filter(Q(annotators__isnull=True) | Q(annotators=worker)).distinct()
    unanswered = Q(items__slots__state__in=[Slot.State.OPEN, Slot.State.CLAIMED])
    return jobs.annotate(answers_needed=Count("items__slots", filter=unanswered)).order_by("-launched_at")


def worker_responses(worker: Worker, job: Job | None = None):
    """The worker's responses, newest first, each with `your_item`: which of their own items in its
    job it was (1 for their first), the number the work page's "Item N of M" showed them. The item's
    own position would not agree: raters see items in their own order, and vote items are numbered
    across re-collections.

    Each also has `decision_reason`: when a reviewer turned it down (rejected or excluded it, and the
    decision stands), the reason they gave ("" if none was recorded), else None. The worker is owed
    the why; who decided is not read. Same query."""
    qs = Response.objects.filter(worker=worker).select_related("item__job")
    if job is not None:
        qs = qs.filter(item__job=job)
    ordinal = Window(RowNumber(), partition_by=[F("item__job_id")], order_by=[F("submitted_at").asc(), F("id").asc()])
    # The latest decision that put the response where it is now; an undone one no longer holds.
    decision = CheckOverride.objects.filter(
        response=OuterRef("pk"), new_status=OuterRef("status"), undo__isnull=True,
        new_status__in=[Response.Status.REJECTED, Response.Status.EXCLUDED],
    ).order_by("-created_at", "-pk")
    return qs.annotate(your_item=ordinal, decision_reason=Subquery(decision.values("reason")[:1])).order_by("-submitted_at", "-id")


def worker_response_total(worker: Worker) -> int:
    return Response.objects.filter(worker=worker).count()


def dialog_history(item: Item) -> list[dict]:
    """The dialog up to and including the item's turn: [{"speaker", "text", "is_target"}]."""
    turn = item.turn if item.turn_id is not None else None
    if turn is None:
        return []
    turns = Turn.objects.filter(dialog_id=turn.dialog_id, index__lte=turn.index).order_by("index").values("speaker", "text", "index")
    return [{"speaker": t["speaker"], "text": t["text"], "is_target": t["index"] == turn.index} for t in turns]


@dataclass(frozen=True)
class JobProgress:
    items_total: int
    items_complete: int
    items_accepted: int  # items with at least one accepted response: what an export can use now
    slots_total: int
    slots_submitted: int
    slots_claimed: int
    responses_by_status: dict
    mean_seconds_per_response: float | None
    mean_active_seconds: float | None
    workers: int

    @property
    def fraction(self) -> float:
        return self.slots_submitted / self.slots_total if self.slots_total else 0.0


def job_progress(job: Job) -> JobProgress:
    items = Item.objects.filter(job=job).aggregate(total=Count("id"), complete=Count("id", filter=Q(state=Item.State.COMPLETE)))
    accepted = Response.objects.filter(item__job=job, status=Response.Status.ACCEPTED).values("item_id").distinct().count()
    slots = Slot.objects.filter(job=job).aggregate(
        total=Count("id"),
        submitted=Count("id", filter=Q(state=Slot.State.SUBMITTED)),
        claimed=Count("id", filter=Q(state=Slot.State.CLAIMED)),
    )
    responses = Response.objects.filter(item__job=job)
    by_status = dict(responses.values_list("status").annotate(n=Count("id")).values_list("status", "n"))
    timing = responses.aggregate(
        active=Avg("active_seconds"),
        elapsed=Avg("work_seconds"),
        workers=Count("worker", distinct=True),
    )
    return JobProgress(
        items_total=items["total"],
        items_complete=items["complete"],
        items_accepted=accepted,
        slots_total=slots["total"],
        slots_submitted=slots["submitted"],
        slots_claimed=slots["claimed"],
        responses_by_status=by_status,
        mean_seconds_per_response=timing["elapsed"],
        mean_active_seconds=timing["active"],
        workers=timing["workers"],
    )
