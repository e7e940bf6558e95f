"""Reads for the organizer's overview (dashboard and API lists): counts in one query per list."""
from datetime import timedelta

from django.db.models import Count, Exists, IntegerField, OuterRef, Q, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from ..models import Corpus, ExportRun, ImportRun, Item, Job, JobCreationRun, RunStatus, Slot, Speaker

#: How long a failed job creation stays on the dashboard (unless asked for again sooner).
FAILED_CREATION_SHOWN_DAYS = 7


def corpora_with_counts():
    """Corpora, newest first, each with `dialog_count`, `turn_count` and `user_turn_count` (what a
    sample of most task types draws from), all in the one aggregate query."""
    return Corpus.objects.annotate(
        dialog_count=Count("dialogs", distinct=True),
        turn_count=Count("dialogs__turns"),
        user_turn_count=Count("dialogs__turns", filter=Q(dialogs__turns__speaker=Speaker.USER)),
    ).order_by("-created_at", "-id")


def corpus_counts(corpus_id: int) -> Corpus | None:
    """One corpus with the counts of `corpora_with_counts` (None if it is gone)."""
    return corpora_with_counts().filter(pk=corpus_id).first()


def _count_for_job(model, **filters):
    rows = model.objects.filter(job=OuterRef("pk"), **filters).order_by().values("job").annotate(n=Count("pk")).values("n")
    return Coalesce(Subquery(rows[:1], output_field=IntegerField()), Value(0))


def jobs_with_progress():
    """Jobs, newest first, with `item_count`, `slots_total` and `slots_submitted` (for a progress bar)."""
    return (
        Job.objects.select_related("corpus")
        .annotate(
            item_count=_count_for_job(Item),
            slots_total=_count_for_job(Slot),
            slots_submitted=_count_for_job(Slot, state=Slot.State.SUBMITTED),
        )
        .order_by("-created_at", "-id")
    )


def job_creations_to_show(now=None, limit=10):
    """Every organizer's job creations that have no job yet, newest first and at most `limit`, as the
    imports and exports beside them: those under way, and those that failed in the last
    FAILED_CREATION_SHOWN_DAYS days and were not asked for again since (a later creation of the same
    name from the same corpus, by any organizer: creations are shared, so one asked for again by a
    colleague replaces the failure). Each with its `created_by`, named on the row."""
    now = now or timezone.now()
    asked_again = JobCreationRun.objects.filter(corpus=OuterRef("corpus"), name=OuterRef("name"), created_at__gt=OuterRef("created_at"))
    failed = Q(status=RunStatus.FAILED, finished_at__gte=now - timedelta(days=FAILED_CREATION_SHOWN_DAYS)) & ~Q(Exists(asked_again))
    return (
        JobCreationRun.objects.filter(Q(status__in=[RunStatus.PENDING, RunStatus.RUNNING]) | failed)
        .select_related("corpus", "created_by")
        .order_by("-created_at", "-id")[:limit]
    )


def recent_import_runs(limit=10):
    return ImportRun.objects.select_related("corpus").order_by("-created_at", "-id")[:limit]


def recent_export_runs(limit=10):
    return ExportRun.objects.select_related("job").order_by("-created_at", "-id")[:limit]


def worker_recent_responses(worker, limit=50):
    """A worker's latest responses for the worker page, with job, status and the checks' evidence."""
    from ..models import Response

    return (
        Response.objects.filter(worker=worker)
        .select_related("item__job")
        .only("id", "status", "checks", "submitted_at", "active_seconds", "telemetry", "item__id", "item__gold", "item__job__id", "item__job__name")
        .order_by("-submitted_at", "-id")[:limit]
    )
