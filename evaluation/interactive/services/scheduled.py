"""RADDLE's evaluation service (PROTOCOLS.md section 3): entries register an endpoint; on a
schedule the top-k entries by automatic score with an endpoint and no recent human evaluation get
an interactive campaign. Writes: linking an entry to a system, the schedule, and the run that the
beat task calls."""
from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from django.db import transaction
from django.utils import timezone

from evaluation.errors import EvaluationInputError
from evaluation.interactive.selectors import entry_metrics
from evaluation.interactive.services.chats import create_chat_job
from evaluation.models import DialogSystem, Entry, EntryInteractiveRun, GoalSet, InteractiveSchedule, TestSet
from quorum.lazy_modules import lazy

if TYPE_CHECKING:
    import pandas as pd

    from evaluation.stats import scoring
else:
    pd = lazy("pandas")
    scoring = lazy("evaluation.stats.scoring")


def link_entry_system(entry: Entry, system: DialogSystem | None) -> Entry:
    """Register (or, with None, remove) the endpoint an entry is evaluated through."""
    if entry.is_baseline or entry.is_ground_truth:
        raise EvaluationInputError(f"{entry.label} is a reference row, not a submission: it has no endpoint")
    Entry.objects.filter(pk=entry.pk).update(dialog_system=system)
    entry.refresh_from_db()
    return entry


def set_schedule(*, test_set: TestSet, goal_set: GoalSet, metrics: list[str], lower_is_better=(), top_k=3,
                 dialogs_per_goal=1, stale_after_days=60, enabled=True) -> InteractiveSchedule:
    """Create or replace a test set's schedule; the metrics must be ones its entries have."""
    metrics = [m.strip() for m in metrics if m and m.strip()]
    if not metrics:
        raise EvaluationInputError("choose at least one metric for the automatic score")
    known = entry_metrics(test_set)
    unknown = [m for m in [*metrics, *lower_is_better] if m not in known]
    if unknown:
        raise EvaluationInputError(f"unknown metric(s) {', '.join(unknown)}; the entries of {test_set} have: {', '.join(sorted(known)) or 'none'}")
    stray = [m for m in lower_is_better if m not in metrics]
    if stray:
        raise EvaluationInputError(f"lower-is-better metric(s) {', '.join(stray)} are not among the chosen metrics: choose them as metrics too, or drop them")
    for name, value, low, high in (("top_k", top_k, 1, 20), ("dialogs_per_goal", dialogs_per_goal, 1, 100), ("stale_after_days", stale_after_days, 1, 3650)):
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise EvaluationInputError(f"{name} must be a whole number from {low} to {high}")
    schedule, _ = InteractiveSchedule.objects.update_or_create(test_set=test_set, defaults={
        "goal_set": goal_set, "metrics": metrics, "lower_is_better": list(lower_is_better), "top_k": top_k,
        "dialogs_per_goal": dialogs_per_goal, "stale_after_days": stale_after_days, "enabled": enabled,
    })
    return schedule


def due_entries(schedule: InteractiveSchedule, now=None) -> list[Entry]:
    """The top-k submissions by automatic score (competition ranks, Eq. 2) that have a running
    endpoint and no scheduled evaluation within `stale_after_days`, best first."""
    now = now or timezone.now()
    entries = [
        e for e in schedule.test_set.entries.filter(is_baseline=False, is_ground_truth=False).select_related("team", "dialog_system")
        if all(m in e.scores_for_ranking() for m in schedule.metrics)
    ]
    if not entries:
        return []
    scores = pd.DataFrame([{m: e.scores_for_ranking()[m] for m in schedule.metrics} for e in entries], index=[e.pk for e in entries])
    overall = scoring.mrr_overall(scores, schedule.metrics, lower_is_better=schedule.lower_is_better)
    ranked = sorted(entries, key=lambda e: (-overall[e.pk], e.label))[: schedule.top_k]
    recent = set(EntryInteractiveRun.objects.filter(
        entry__in=ranked, created_at__gte=now - timedelta(days=schedule.stale_after_days)
    ).values_list("entry_id", flat=True))
    return [e for e in ranked if e.dialog_system and not e.dialog_system.paused_at and e.pk not in recent]


def run_schedule(schedule: InteractiveSchedule, now=None) -> dict:
    """One run: a chat job over the due entries' systems (every system the same goals), recorded
    per entry. {"schedule", "job" (or None), "entries": [labels]}."""
    now = now or timezone.now()
    with transaction.atomic():
        schedule = InteractiveSchedule.objects.select_for_update().select_related("test_set", "goal_set").get(pk=schedule.pk)
        due = due_entries(schedule, now)
        job = None
        if due:
            job = create_chat_job(
                name=f"Scheduled human evaluation: {schedule.test_set} {now:%Y-%m-%d %H:%M}", systems=list(dict.fromkeys(e.dialog_system for e in due if e.dialog_system is not None)),
                goal_set=schedule.goal_set, dialogs_per_goal=schedule.dialogs_per_goal,
                instructions="Chat with the system towards your goal, then say whether it succeeded and rate it.",
            )
            EntryInteractiveRun.objects.bulk_create(EntryInteractiveRun(entry=e, job=job) for e in due)
        schedule.last_run_at = now
        schedule.save(update_fields=["last_run_at"])
    return {"schedule": schedule.pk, "job": job.pk if job else None, "entries": [e.label for e in due]}


def run_due_schedules(now=None) -> list[dict]:
    """Every enabled schedule, each on its own (one failing does not stop the others)."""
    results = []
    for schedule in InteractiveSchedule.objects.filter(enabled=True).order_by("pk"):
        try:
            results.append(run_schedule(schedule, now))
        except EvaluationInputError as exc:
            results.append({"schedule": schedule.pk, "job": None, "entries": [], "error": str(exc)})
    return results
