"""Reads of campaigns: their stored results and files, crowd progress, pilots for the planner,
adaptive looks, their background runs; pairwise jobs' votes and their stored ranking report; test sets'
objective scoring runs."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from statistics import NormalDist
from typing import TYPE_CHECKING

from django.conf import settings
from django.db.models import Count, Exists, OuterRef, Q, Subquery
from django.db.models.functions import Coalesce

from annotation import task_types
from annotation.models import Job, Response, RunStatus, Slot
from annotation.selectors.attempts import AttemptState, attempt_state, state_of
from evaluation.campaigns import ratings_csv
from evaluation.campaigns.leaderboard import older_format
from evaluation.models import (
    Campaign,
    CampaignJob,
    CampaignLook,
    CampaignResult,
    CampaignResultsRun,
    CampaignRun,
    Entry,
    ObjectiveScoringRun,
    PairwiseReport,
    Rating,
    TestSet,
)
from evaluation.stats import versions
from quorum.lazy_modules import lazy

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from evaluation.stats import fragility, report_power
else:
    np = lazy("numpy")
    pd = lazy("pandas")
    fragility = lazy("evaluation.stats.fragility")
    report_power = lazy("evaluation.stats.report_power")


def campaigns():
    return (
        Campaign.objects.select_related("test_set__challenge").defer(*(f"test_set__{name}" for name in TestSet.FILES))
        .order_by("-created_at")
    )


#: A stored result is current only when today's report format computed it: the campaign's inputs
#: version names the format, but it is stored, and stays as it was until the inputs change, so a
#: result computed before a method changed (the rank ranges of format 7) would read as current. A
#: report that names no format (none has since format 2) is not judged by it.
CURRENT_FORMAT = Q(report__format=versions.RATINGS.current) | ~Q(report__has_key="format")


def older_method(result: CampaignResult | None) -> bool:
    """The result was computed by an older report format than today's (`leaderboard.older_format`)."""
    return result is not None and older_format(result.report or {})


def shows_older_method(campaign: Campaign) -> bool:
    """The campaign has no result of today's method for its inputs and the latest one it shows was
    computed by an older report format (without reading the report itself)."""
    rows = CampaignResult.objects.filter(campaign=campaign)
    if rows.filter(CURRENT_FORMAT, inputs_version=campaign.inputs_version).exists():
        return False
    stored = rows.order_by("-computed_at").values_list("report__format", flat=True).first()
    return versions.standing(versions.RATINGS, stored).older


def current_result(campaign: Campaign):
    """The stored result for the campaign's current inputs, computed by today's report format, or
    None (then the page says it is being computed or stale, and shows the latest older result if any)."""
    return CampaignResult.objects.filter(CURRENT_FORMAT, campaign=campaign, inputs_version=campaign.inputs_version).first()


def latest_result(campaign: Campaign):
    return CampaignResult.objects.filter(campaign=campaign).order_by("-computed_at").first()


def campaigns_with_status():
    """Campaigns with `n_ratings`, `results_status` (current | stale | none) and `shown_computed_at`
    (when the result the campaign shows was computed), in three queries' worth of SQL."""
    current = CampaignResult.objects.filter(CURRENT_FORMAT, campaign=OuterRef("pk"), inputs_version=OuterRef("inputs_version"))
    any_result = CampaignResult.objects.filter(campaign=OuterRef("pk"))
    # The ratings are counted in a subquery: a join grouped by every selected column made the
    # database sort each campaign's ratings (124k for DSTC9's) by whole rows.
    n_ratings = Rating.objects.filter(campaign=OuterRef("pk")).order_by().values("campaign").annotate(n=Count("pk")).values("n")
    rows = campaigns().select_related("results_run").annotate(
        n_ratings=Coalesce(Subquery(n_ratings), 0), has_current=Exists(current), has_any=Exists(any_result),
        shown_computed_at=Coalesce(Subquery(current.values("computed_at")[:1]), Subquery(any_result.order_by("-computed_at").values("computed_at")[:1])),
    )
    return rows


def results_status(campaign) -> str:
    if getattr(campaign, "has_current", False):
        return "current"
    return "stale" if getattr(campaign, "has_any", False) else "none"


def results_run_state(campaign: Campaign, shown_at) -> AttemptState | None:
    """The campaign's latest results computation next to the result it shows, computed at
    `shown_at` (None: no result); None when no computation was recorded. One query."""
    return attempt_state(CampaignResultsRun.objects.filter(campaign=campaign), shown_at)


def listed_results_run(campaign: Campaign) -> AttemptState | None:
    """`results_run_state` of a campaign from `campaigns_with_status`, whose row and shown result's
    time came with it (no query)."""
    try:
        row = campaign.results_run
    except CampaignResultsRun.DoesNotExist:
        row = None
    return state_of(row, getattr(campaign, "shown_computed_at", None))


def _shown(campaign, pick):
    """(what `pick` takes from the current stored result, False), else from the latest older one
    (stale: True); (None, False) without any. The one rule of which result a campaign shows."""
    rows = CampaignResult.objects.filter(campaign=campaign)
    current = pick(rows.filter(CURRENT_FORMAT, inputs_version=campaign.inputs_version))
    if current is not None:
        return current, False
    latest = pick(rows.order_by("-computed_at"))
    return latest, latest is not None


def shown_result(campaign):
    """(result, stale): the current stored result, else the latest older one flagged stale; (None, False) without any."""
    return _shown(campaign, lambda rows: rows.first())


def shown_result_at(campaign) -> tuple[datetime | None, bool]:
    """(computed_at, stale) of the result `shown_result` gives, without reading its report: what a
    line beside it needs (the results computation's progress). (None, False) without any."""
    return _shown(campaign, lambda rows: rows.values_list("computed_at", flat=True).first())


def test_sets():
    """Test sets with their challenge, entry count and whether their logs are stored, oldest first
    (the order of the upload forms). Their files (megabytes of JSON) are not read: whoever needs
    them loads them, and the counts are subqueries, not a grouping of whole rows."""
    n_entries = Entry.objects.filter(test_set=OuterRef("pk")).order_by().values("test_set").annotate(n=Count("pk")).values("n")
    return (
        TestSet.objects.select_related("challenge").defer(*TestSet.FILES)
        .annotate(n_entries=Coalesce(Subquery(n_entries), 0), has_logs=~Q(logs=[]))
        .order_by("pk")
    )


def finalist_metric_names(test_sets) -> list[dict]:
    """Per test set (in the order given), the metric names its competing entries have scores for,
    uploaded or computed, sorted: what the finalist selection can rank by, told before a wrong
    name is refused."""
    names: dict[int, set[str]] = {t.pk: set() for t in test_sets}
    competing = Entry.objects.filter(test_set__in=list(names), is_baseline=False, is_ground_truth=False)
    for test_set_id, uploaded, computed in competing.values_list("test_set_id", "objective_scores", "computed_scores"):
        names[test_set_id].update(uploaded or {}, computed or {})
    return [{"test_set": t, "names": sorted(names[t.pk])} for t in test_sets]


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
    rows = Rating.objects.filter(campaign=campaign).values_list("entry__team__team_id", "entry__entry_id", "instance", "question", "rater", "value")
    frame = pd.DataFrame.from_records(list(rows), columns=["team", "entry", "instance", "question", "rater", "value"])
    frame.insert(0, "system", frame.pop("team") + "/" + frame.pop("entry"))
    return frame


def detection_inputs(campaign):
    """What Eq. 1 needs besides the ratings, as the report reads it: (truth [N] bool, label ->
    detection predictions [N] bool or None for an entry without them, the instances the crowd job
    set out to rate or None for all)."""
    truth = np.array([bool(item.get("target")) for item in campaign.test_set.labels])
    predicted = {
        e.label: None if e.outputs is None else np.array([bool(o.get("target")) for o in e.outputs])
        for e in campaign.entries.select_related("team")
    }
    evaluated = CampaignJob.objects.filter(campaign=campaign).values_list("instances", flat=True).first()
    return truth, predicted, evaluated


def campaign_pilot(campaign):
    """A campaign's ratings as a planner's pilot: (ratings, entry labels to plan for, rows rated,
    whether raters are people, what Eq. 1 needs: the test set's labels and the entries' detection
    predictions, `report_power.Detection`, None when the test set has no knowledge-seeking
    instance). ValueError when it has no ratings."""
    ratings = ratings_frame(campaign)
    if ratings.empty:
        raise ValueError(f"campaign {campaign.name!r}: has no ratings yet to plan from")
    entries = list(campaign.entries.select_related("team"))
    truth, predicted, _evaluated = detection_inputs(campaign)
    detection = report_power.Detection(truth, predicted) if truth.any() else None
    return ratings, [e.label for e in entries if e.kind == "entry"], len(entries), campaign.rater_ids_known, detection


def csv_pilot(source, name):
    """A pilot ratings CSV (`ratings_csv`), the same five things, detection only when the file has
    `predicted` flags; RatingsFileError names the line."""
    ratings, truth, systems, _questions = ratings_csv.read(source, name=name)
    predicted = {s.label: s.predicted for s in systems}
    detection = report_power.Detection(truth, predicted) if truth.any() and any(p is not None for p in predicted.values()) else None
    return ratings, [s.label for s in systems if s.kind == "entry"], len(systems), True, detection


# --- Pairwise comparisons (any task type that defines `comparison`) ------------------------------


def pairwise_jobs():
    """Jobs whose task type compares systems pairwise, newest first."""
    keys = task_types.keys_with(task_types.ComparesSystems)
    return Job.objects.filter(task_type__in=keys).order_by("-created_at")


def pairwise_records(job) -> list[dict]:
    """One dict per counted, decided response of a comparing job: a, b, outcome, instance (the
    payload's context id, else the item, so one context's pairs resample together), left (the side
    shown on the left, None when not recorded), text_a, text_b, item (its id)."""
    kind = task_types.capability(task_types.get(job.task_type), task_types.ComparesSystems)
    if kind is None:
        return []
    rows = Response.objects.counted().filter(item__job=job, item__gold__isnull=True)
    out = []
    for item_id, payload, answers in rows.values_list("item_id", "item__payload", "answers").iterator(chunk_size=5000):
        found = kind.comparison(payload, answers)
        if found is None:
            continue
        a, b, outcome, instance = found
        left, text_a, text_b = kind.presentation(payload, answers) or (None, "", "")
        out.append({"a": a, "b": b, "outcome": outcome, "instance": instance or f"item-{item_id}", "left": left, "text_a": text_a, "text_b": text_b,
                    "item": item_id})
    return out


def pairwise_comparisons(job) -> list[tuple]:
    """(system_a, system_b, outcome, instance) of every counted response of a pairwise job."""
    return [(r["a"], r["b"], r["outcome"], r["instance"]) for r in pairwise_records(job)]


@dataclass(frozen=True)
class StoredPairwiseReport:
    """What a pairwise job's page, downloads and API show: the latest stored report (None before the
    first), the computation under way (pending or running), and a failure newer than the report."""

    shown: PairwiseReport | None
    under_way: PairwiseReport | None
    failed: PairwiseReport | None

    @property
    def body(self) -> dict | None:
        """The stored report's body (`services.pairwise.build_report`); None before the first report.
        Its fragility rows are read again from the stored board, so a report stored before a pair was
        listed once (rank 1 and adjacent) reads as today's (`fragility.display_rows`)."""
        body = self.shown.report if self.shown is not None else None
        if body is None:
            return None
        controls = body.get("controls")
        if controls and controls.get("fragility") is not None:
            body = {**body, "controls": {**controls, "fragility_rows": fragility.display_rows(controls["fragility"])}}
        return body

    @property
    def older_method(self) -> bool:
        """The shown report was computed by an older method than today's (`versions.PAIRWISE`)."""
        return self.shown is not None and versions.standing(versions.PAIRWISE, self.shown.method).older

    @property
    def older_method_note(self) -> str:
        """What every output says first of a report an older method computed ("" for a current one):
        whether its recomputation is under way (queued or running), else that it is to be asked for."""
        if self.shown is None:
            return ""
        then = "It is being computed again" if self.under_way is not None else "Compute it again to replace it"
        return versions.standing(versions.PAIRWISE, self.shown.method).note(then)


def stored_pairwise_report(job) -> StoredPairwiseReport:
    """One query: the job's reports (at most one succeeded, one failed, one running and one pending
    are kept, `services.pairwise.compute_report`)."""
    reports = list(PairwiseReport.objects.filter(job=job).order_by("-created_at", "-pk"))
    shown = next((r for r in reports if r.status == RunStatus.SUCCEEDED), None)
    under_way = next((r for r in reports if r.status in (RunStatus.PENDING, RunStatus.RUNNING)), None)
    failed = next((r for r in reports if r.status == RunStatus.FAILED), None)
    if failed is not None and shown is not None and failed.created_at < shown.created_at:
        failed = None  # a failure before the shown report: that report is newer
    return StoredPairwiseReport(shown=shown, under_way=under_way, failed=failed)


def pairwise_reports(job):
    """The job's kept report computations (the API follows one by id), newest first."""
    return PairwiseReport.objects.filter(job=job).order_by("-created_at", "-pk")


# --- Adaptive campaigns ----------------------------------------------------------------------------

PAIR_STATE_TEXT = {"resolved": "resolved: {better} ahead", "tied": "settled as a tie", "open": "still open"}


def adaptive_status(campaign, crowd=None):
    """What the page shows of an adaptive campaign: its looks, each pair's state at the last look,
    the ratings spent against the budget and the full design, and why it stopped; None otherwise.
    `crowd` is `crowd_progress(campaign)` when the caller has it (its slot count is the spend)."""
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
        # In rating units the job's items start with one rater; the design's raters per instance are the order's.
        raters = len(job.round_order) // max(len(job.instances), 1) if campaign.adaptive_unit == "rating" else job.job.redundancy
        full_design = sum(len(job.instances) - len(job.skipped.get(label, [])) for label in labels) * raters
    return {
        "looks": looks,
        "last": last,
        "pairs": pairs,
        "spent": crowd["slots"] if crowd else 0,  # responses asked for: what the budget counts
        "collected": crowd["submitted"] if crowd else 0,
        "budget": campaign.adaptive_budget,
        "full_design": full_design,
        "stopped": last is not None and last.decision != CampaignLook.Decision.CONTINUE,
        "plan": job,
        # The critical value a single look would use at the campaign's confidence (1.960 at 0.95),
        # beside the group-sequential one of the looks.
        "one_look_critical_value": NormalDist().inv_cdf(0.5 + campaign.adaptive_confidence / 2),
    }


# --- Background runs a campaign page started (planner runs, human-evaluation imports) -------------


def latest_run(campaign, kind: str):
    """The campaign's latest run of `kind` (a `CampaignRun.Kind`), or None: the page shows it with
    its live progress, then its result or error."""
    return campaign_runs(campaign).filter(kind=kind).first()


def campaign_runs(campaign):
    """The campaign's runs of every kind, newest first (the API lists them and follows one by id)."""
    return CampaignRun.objects.filter(campaign=campaign).order_by("-created_at", "-pk")


# --- Objective scoring runs of a test set ---------------------------------------------------------


def scoring_runs(test_set):
    """The test set's `score_entries` runs, newest first: the first is the latest."""
    return ObjectiveScoringRun.objects.filter(test_set=test_set).order_by("-created_at", "-pk")
