"""Reads for the evaluation app. Campaign pages read stored results; the one statistic computed on
request is a pairwise job's Bradley-Terry ranking, which takes milliseconds."""
from pathlib import Path

from django.conf import settings

from annotation import task_types
from annotation.models import Job, Response

from . import bradley_terry
from .models import Campaign, CampaignResult, JudgeRun, Rating, TestSet


def campaigns():
    return Campaign.objects.select_related("test_set__challenge").order_by("-created_at")


def current_result(campaign: Campaign):
    """The stored result for the campaign's current inputs, or None (then the page says it is
    being computed or stale, and shows the latest older result if any)."""
    return CampaignResult.objects.filter(campaign=campaign, inputs_version=campaign.inputs_version).first()


def latest_result(campaign: Campaign):
    return CampaignResult.objects.filter(campaign=campaign).order_by("-computed_at").first()


def campaigns_with_status():
    """Campaigns with `n_ratings` and `results_status` (current | stale | none), in three queries' worth of SQL."""
    from django.db.models import Count, Exists, OuterRef

    current = CampaignResult.objects.filter(campaign=OuterRef("pk"), inputs_version=OuterRef("inputs_version"))
    any_result = CampaignResult.objects.filter(campaign=OuterRef("pk"))
    rows = campaigns().annotate(n_ratings=Count("ratings", distinct=True), has_current=Exists(current), has_any=Exists(any_result))
    return rows


def results_status(campaign) -> str:
    if getattr(campaign, "has_current", False):
        return "current"
    return "stale" if getattr(campaign, "has_any", False) else "none"


def shown_result(campaign):
    """(result, stale): the current stored result, else the latest older one flagged stale; (None, False) without any."""
    current = current_result(campaign)
    if current is not None:
        return current, False
    latest = latest_result(campaign)
    return latest, latest is not None


def test_sets():
    """Test sets with their challenge and entry count, oldest first (the order of the upload forms)."""
    from django.db.models import Count

    return TestSet.objects.select_related("challenge").annotate(n_entries=Count("entries")).order_by("pk")


def export_directory(result: CampaignResult) -> Path:
    """Where a result's files are written (by the task that computes it): one folder per campaign
    and inputs version, so the page offers the files of the result it shows."""
    return Path(settings.QUORUM_EXPORT_DIR) / "evaluation" / f"campaign-{result.campaign_id}" / result.inputs_version[:12]


def exported_file(result: CampaignResult, name: str):
    """The path of one written file of the result, or None when it was not written (yet)."""
    path = export_directory(result) / name
    return path if path.is_file() else None


def crowd_progress(campaign):
    """The campaign's crowd job with item and slot counts, or None for a campaign of imported ratings."""
    from django.db.models import Count, Q

    from annotation.models import Slot

    from .models import CampaignJob

    crowd = CampaignJob.objects.select_related("job").filter(campaign=campaign).first()
    if crowd is None:
        return None
    counts = Slot.objects.filter(job_id=crowd.job_id).aggregate(
        slots=Count("id"), submitted=Count("id", filter=Q(state=Slot.State.SUBMITTED)), items=Count("item_id", distinct=True)
    )
    return {"job": crowd.job, "instances": len(crowd.instances), "skipped": crowd.skipped, **counts}


def has_ratings(campaign) -> bool:
    """Whether the campaign holds any rating (imported, or collected by its crowd job)."""
    return Rating.objects.filter(campaign=campaign).exists()


def ratings_frame(campaign):
    """The campaign's ratings as a frame (system, instance, question, rater, value), system as the
    entry's label: what `power.fit` and `judges.build` read."""
    import pandas as pd

    rows = Rating.objects.filter(campaign=campaign).values_list("entry__team__team_id", "entry__entry_id", "instance", "question", "rater", "value")
    frame = pd.DataFrame.from_records(list(rows), columns=["team", "entry", "instance", "question", "rater", "value"])
    frame.insert(0, "system", frame.pop("team") + "/" + frame.pop("entry"))
    return frame


def campaign_pilot(campaign):
    """A campaign's ratings as a planner's pilot: (ratings, entry labels to plan for, rows rated,
    whether raters are people). ValueError when it has no ratings."""
    ratings = ratings_frame(campaign)
    if ratings.empty:
        raise ValueError(f"campaign {campaign.name!r}: has no ratings yet to plan from")
    entries = list(campaign.entries.select_related("team"))
    return ratings, [e.label for e in entries if e.kind == "entry"], len(entries), campaign.rater_ids_known


def csv_pilot(source, name):
    """A pilot ratings CSV (`ratings_csv`), the same four things; RatingsFileError names the line."""
    from . import ratings_csv

    ratings, _truth, systems, _questions = ratings_csv.read(source, name=name)
    return ratings, [s.label for s in systems if s.kind == "entry"], len(systems), True


def judge_runs(campaign):
    """The campaign's automatic judges with their stored reports, each marked stale when the
    campaign's inputs changed since the report was computed (`judge_report` recomputes it)."""
    runs = list(JudgeRun.objects.filter(campaign=campaign))
    for run in runs:
        run.stale = bool(run.report) and run.inputs_version != campaign.inputs_version
    return runs


# --- Pairwise comparisons (any task type that defines `comparison`) ------------------------------


def pairwise_jobs():
    """Jobs whose task type compares systems pairwise, newest first."""
    keys = task_types.keys_with(task_types.ComparesSystems)
    return Job.objects.filter(task_type__in=keys).order_by("-created_at")


def pairwise_comparisons(job) -> list[tuple]:
    """(system_a, system_b, outcome, instance) of every counted response of a pairwise job; the
    instance is the payload's context id, else the item, so one context's pairs resample together."""
    kind = task_types.capability(task_types.get(job.task_type), task_types.ComparesSystems)
    if kind is None:
        return []
    rows = Response.objects.counted().filter(item__job=job, item__gold__isnull=True)
    out = []
    for item_id, payload, answers in rows.values_list("item_id", "item__payload", "answers").iterator(chunk_size=5000):
        found = kind.comparison(payload, answers)
        if found is not None:
            a, b, outcome, instance = found
            out.append((a, b, outcome, instance or f"item-{item_id}"))
    return out


def pairwise_ranking(job, n_resamples=bradley_terry.DEFAULT_BOOTSTRAP, seed=bradley_terry.DEFAULT_SEED):
    """The Bradley-Terry ranking of a pairwise job with bootstrap intervals, or None without
    comparisons. Computed on request: a fit of a few systems and 1,000 resamples takes milliseconds."""
    comparisons = pairwise_comparisons(job)
    if not comparisons:
        return None
    return bradley_terry.bootstrap(comparisons, n_resamples=n_resamples, seed=seed)


def dialog_systems():
    from .models import DialogSystem

    return DialogSystem.objects.select_related("challenge").order_by("name")


def goal_sets():
    from django.db.models import Count

    from .models import GoalSet

    return GoalSet.objects.annotate(n_goals=Count("goals")).order_by("name")


def interactive_jobs():
    return Job.objects.filter(task_type__in=task_types.keys_with(task_types.RelaysChat)).order_by("-pk")


def interactive_ranking(job, bootstrap=None, seed=None):
    """The interactive leaderboard of a chat job (intervals, tie groups) and its counted dialogs."""
    from . import interactive, scoring

    dialogs = interactive_dialogs(job)
    result = interactive.system_results(
        dialogs, bootstrap=bootstrap or scoring.DEFAULT_BOOTSTRAP, seed=scoring.DEFAULT_SEED if seed is None else seed
    )
    return result, dialogs


#: Chats flagged by the offensive-word filter count only once an organizer keeps them.
UNCOUNTED_SCREENINGS = ("pending", "dropped")


def interactive_dialogs(job) -> list[dict]:
    """The counted dialogs of a chat job with their system's name, goal and entity database;
    flagged ones only once kept."""
    from .models import DialogSystem, UserGoal

    responses = list(
        Response.objects.counted().filter(item__job=job).exclude(chat_screening__review__in=UNCOUNTED_SCREENINGS).select_related("item").order_by("pk")
    )
    names = dict(DialogSystem.objects.filter(public_id__in={r.item.payload["endpoint"] for r in responses}).values_list("public_id", "name"))
    goal_ids = {int(r.item.payload["goal_id"]) for r in responses if str(r.item.payload.get("goal_id", "")).isdigit()}
    databases = {g.pk: g.goal_set.database for g in UserGoal.objects.filter(pk__in=goal_ids).select_related("goal_set")}
    return [
        {
            "system": names.get(r.item.payload["endpoint"], r.item.payload["endpoint"]),
            "answers": r.answers, "goal": r.item.payload.get("goal") or {}, "goal_text": r.item.payload.get("goal_text", []),
            "database": (databases.get(int(r.item.payload["goal_id"])) if str(r.item.payload.get("goal_id", "")).isdigit() else None) or {},
            "goal_id": str(r.item.payload.get("goal_id", "")), "response_id": r.pk, "worker": r.worker_id,
        }
        for r in responses
    ]


def _waiting_first():
    """Order of a review queue: flagged rows still waiting for a decision first."""
    from django.db.models import Case, IntegerField, Value, When

    return Case(When(review="pending", then=Value(0)), default=Value(1), output_field=IntegerField())


def chat_screenings(job) -> dict:
    """A chat job's offensive-word queue: its flagged chats (waiting ones first, with their system's
    name) and how many wait, were kept and were dropped."""
    from .models import ChatScreening, DialogSystem

    queue = list(ChatScreening.objects.filter(response__item__job=job).select_related("response__item").order_by(_waiting_first(), "response_id"))
    names = dict(DialogSystem.objects.values_list("public_id", "name"))
    for s in queue:
        s.system = names.get(s.response.item.payload.get("endpoint"), "?")
    counts = {state: sum(s.review == state for s in queue) for state in ("pending", "kept", "dropped")}
    return {"queue": queue, **counts}


def fed_sets():
    from django.db.models import Count, Q

    from .models import FedSet

    return FedSet.objects.select_related("job", "chat_job").annotate(
        n_candidates=Count("candidates"), n_pending=Count("candidates", filter=Q(candidates__review="pending")),
        n_dropped=Count("candidates", filter=Q(candidates__review="dropped")),
    )


def fed_review_queue(fed_set):
    """The set's flagged candidates, waiting ones first."""
    return fed_set.candidates.exclude(review="clean").order_by(_waiting_first(), "position")


def fed_results(fed_set) -> list[dict]:
    """Per system: for each FED question the mean of the counted answers (N/A left out), how many
    answers it rests on and how many were N/A; and how many items were rated."""
    from .models import FedCandidate

    if fed_set.job_id is None:
        return []
    questions = [f["name"] for f in task_types.get(fed_set.job.task_type).answer_fields(fed_set.job.settings)]
    system_of = dict(FedCandidate.objects.filter(fed_set=fed_set, item__isnull=False).values_list("item_id", "system"))
    sums = {}
    for item_id, answers in Response.objects.counted().filter(item__job=fed_set.job).values_list("item_id", "answers").iterator():
        per = sums.setdefault(system_of.get(item_id, "?"), {"items": set(), **{q: [0, 0, 0] for q in questions}})
        per["items"].add(item_id)
        for q in questions:
            if isinstance(answers.get(q), int):
                per[q][0] += answers[q]
                per[q][1] += 1
            elif f"{q}_na_reason" in answers:
                per[q][2] += 1
    rows = []
    for system in sorted(sums):
        per = sums[system]
        rows.append({
            "system": system, "items": len(per["items"]),
            "questions": [{"name": q, "mean": round(per[q][0] / per[q][1], 4) if per[q][1] else None, "n": per[q][1], "na": per[q][2]} for q in questions],
        })
    return rows


def entry_metrics(test_set) -> list[str]:
    """The objective metrics the test set's entries have scores for, sorted: what a schedule's
    automatic score may be computed over."""
    return sorted({m for scores in test_set.entries.values_list("objective_scores", flat=True) for m in scores})


def interactive_leaderboard(test_set) -> dict:
    """A test set's submissions by automatic score (Eq. 2 over its schedule's metrics) with their
    latest scheduled human evaluation: date, success, grounded success and the final score with its
    interval from that run's chat job. {"schedule", "rows"}."""
    import pandas as pd

    from . import scoring
    from .models import EntryInteractiveRun, InteractiveSchedule

    schedule = InteractiveSchedule.objects.filter(test_set=test_set).first()
    entries = list(test_set.entries.filter(is_baseline=False, is_ground_truth=False).select_related("team", "dialog_system"))
    automatic = {}
    if schedule:
        scored = [e for e in entries if all(m in e.objective_scores for m in schedule.metrics)]
        if scored:
            frame = pd.DataFrame([{m: e.objective_scores[m] for m in schedule.metrics} for e in scored], index=[e.pk for e in scored])
            automatic = scoring.mrr_overall(frame, schedule.metrics, lower_is_better=schedule.lower_is_better).to_dict()
    latest = {}
    for run in EntryInteractiveRun.objects.filter(entry__in=entries).select_related("job").order_by("created_at"):
        latest[run.entry_id] = run
    results_by_job = {}
    rows = []
    for e in entries:
        row = {"entry": e.label, "automatic": automatic.get(e.pk), "system": e.dialog_system.name if e.dialog_system else None, "human": None}
        run = latest.get(e.pk)
        if run is not None:
            if run.job_id not in results_by_job:
                results_by_job[run.job_id] = {r["system"]: r for r in interactive_ranking(run.job)[0]["systems"]}
            human = results_by_job[run.job_id].get(e.dialog_system.name if e.dialog_system else "")
            row["human"] = {"date": run.created_at, "job": run.job_id, "final": None, **(human or {})}
        rows.append(row)
    rows.sort(key=lambda r: (r["automatic"] is None, -(r["automatic"] or 0), r["entry"]))
    screened = [chat_screenings(job_id) for job_id in results_by_job]
    left_out = {state: sum(c[state] for c in screened) for state in UNCOUNTED_SCREENINGS}
    return {"schedule": schedule, "rows": rows, "left_out": left_out}


# --- Adaptive campaigns ----------------------------------------------------------------------------

PAIR_STATE_TEXT = {"resolved": "resolved: {better} ahead", "tied": "settled as a tie", "open": "still open"}


def adaptive_status(campaign, crowd=None):
    """What the page shows of an adaptive campaign: its looks, each pair's state at the last look,
    the ratings spent against the budget and the full design, and why it stopped; None otherwise.
    `crowd` is `crowd_progress(campaign)` when the caller has it (its slot count is the spend)."""
    from .models import CampaignJob, CampaignLook

    if not campaign.adaptive:
        return None
    looks = list(CampaignLook.objects.filter(campaign=campaign).order_by("number"))
    last = looks[-1] if looks else None
    for look in looks:
        look.resolved = sum(p["state"] == "resolved" for p in look.pairs)
        look.tied = sum(p["state"] == "tied" for p in look.pairs)
    pairs = [{**p, "state_text": PAIR_STATE_TEXT[p["state"]].format(better=p["better"])} for p in (last.pairs if last else [])]
    job = CampaignJob.objects.select_related("job").filter(campaign=campaign).first()
    full_design = None
    if job is not None:
        labels = [e.label for e in campaign.entries.select_related("team")]
        full_design = sum(len(job.instances) - len(job.skipped.get(label, [])) for label in labels) * job.job.redundancy
    return {
        "looks": looks,
        "last": last,
        "pairs": pairs,
        "spent": crowd["slots"] if crowd else 0,
        "budget": campaign.adaptive_budget,
        "full_design": full_design,
        "stopped": last is not None and last.decision != CampaignLook.Decision.CONTINUE,
        "plan": job,
    }
