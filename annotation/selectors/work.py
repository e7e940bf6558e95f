"""Reads for the annotator pages: the jobs on an annotator's home page, progress on a work page."""
from dataclasses import dataclass

from django.core.cache import cache
from django.db.models import Count
from django.utils import timezone

from ..models import Item, Job, Response, Slot, Worker
from .jobs import jobs_open_to


@dataclass(frozen=True)
class AnnotatorJob:
    job: Job
    open_slots: int  # open to anyone
    available_to_you: int  # items with an open slot that this worker has not held or done
    your_responses: int
    has_claim: bool  # the worker holds an unexpired claim in this job


def annotator_jobs(worker: Worker, now=None) -> list[AnnotatorJob]:
    """The live jobs open to this in-house worker, with the worker's own counts. Four queries."""
    now = now or timezone.now()
    jobs = list(jobs_open_to(worker))
    ids = [job.pk for job in jobs]
    yours = dict(
        Response.objects.filter(worker=worker, item__job_id__in=ids)
        .values("item__job_id")
        .annotate(n=Count("id"))
        .values_list("item__job_id", "n")
    )
    available = dict(
        Item.objects.filter(job_id__in=ids, slots__state=Slot.State.OPEN)
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
    return [
        AnnotatorJob(
            job=job,
            open_slots=job.open_slots,
            available_to_you=available.get(job.pk, 0),
            your_responses=yours.get(job.pk, 0),
            has_claim=job.pk in claimed,
        )
        for job in jobs
    ]


def response_of(worker: Worker, item: Item) -> Response | None:
    return Response.objects.filter(worker=worker, item=item).select_related("slot").first()


def response_count(worker: Worker, job: Job) -> int:
    return Response.objects.filter(worker=worker, item__job=job).count()


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
