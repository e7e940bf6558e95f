"""Campaigns: finalists, creation, the inputs version and the stored results."""
from __future__ import annotations

import time
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import transaction
from django.db.models import Q

from evaluation.campaigns.services.inputs import refresh_inputs_version
from evaluation.errors import EvaluationInputError
from evaluation.models import Campaign, CampaignJob, CampaignResult, Entry, Rating
from evaluation.stats.objective import DSTC9_METRICS
from quorum.lazy_modules import lazy

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from evaluation.stats import report as report_module
    from evaluation.stats import scoring
else:
    np = lazy("numpy")
    pd = lazy("pandas")
    report_module = lazy("evaluation.stats.report")
    scoring = lazy("evaluation.stats.scoring")


def finalist_table(test_set, metrics, n=12, lower_is_better=()) -> pd.DataFrame:
    """Eq. 2 over the chosen metrics for every competing entry, and the best entry of each of the top-n teams.

    Returns the finalists (columns entry_pk, team_id, entry_id, overall, rank, tied_at_cutoff)."""
    entries = list(Entry.objects.filter(test_set=test_set, is_baseline=False, is_ground_truth=False).select_related("team"))
    if not entries:
        raise EvaluationInputError(f"test set {test_set.name!r} has no entries; import them first")
    scores = pd.DataFrame([e.scores_for_ranking() for e in entries], index=[e.label for e in entries])
    unknown = [m for m in metrics if m not in scores.columns]
    if unknown or not metrics:
        # Sorted, as the form's help lists them (the columns come in the database's JSON key order).
        available = ", ".join(sorted(map(str, scores.columns))) or "none (import objective scores with import_entries --scores)"
        raise EvaluationInputError(f"unknown metric(s): {', '.join(unknown) or '(none chosen)'}; available: {available}")
    # An entry without a value for a chosen metric is left out of Eq. 2 (and named), rather than
    # one missing number refusing the whole selection.
    complete, left_out = scoring.complete_rows(scores, metrics)
    if complete.empty:
        raise EvaluationInputError(f"no entry has a value for every metric {', '.join(metrics)} (import objective scores with import_entries --scores)")
    try:
        overall = scoring.mrr_overall(complete, metrics, lower_is_better=set(lower_is_better))
    except ValueError as exc:
        raise EvaluationInputError(f"{exc} (import objective scores with import_entries --scores)") from exc
    kept = [e for e in entries if e.label in overall.index]
    table = pd.DataFrame(
        {"entry_pk": [e.pk for e in kept], "team_id": [e.team.team_id for e in kept], "entry_id": [e.entry_id for e in kept], "overall": overall.loc[[e.label for e in kept]].to_numpy()}
    )
    # Only an entry with outputs can be rated; one known from its published scores alone is ranked
    # (Eq. 2 is over every entry) but passed over, and named, so the campaign is never dead on arrival.
    has_outputs = [e.outputs is not None for e in kept]
    eligible = table[has_outputs].reset_index(drop=True)
    if eligible.empty:
        raise EvaluationInputError(
            f"no ranked entry of test set {test_set.name!r} has outputs; import the entries' outputs (the entries form) first"
        )
    chosen = scoring.select_finalists(eligible, n)
    cutoff = chosen["overall"].min() if not chosen.empty else None
    without = table[[not h for h in has_outputs]]
    skipped = [f"{t}/{e}" for t, e, o in zip(without["team_id"], without["entry_id"], without["overall"], strict=True) if cutoff is None or o >= cutoff]
    chosen.attrs["left_out"] = left_out  # entries missing a metric: callers warn
    chosen.attrs["without_outputs"] = skipped  # ranked high enough but without outputs to rate: callers say so
    return chosen


select_finalists = finalist_table


def create_finalist_campaign(name, test_set, finalists, questions=None) -> Campaign:
    """A campaign rating the chosen finalists (rows of `select_finalists`) plus the test set's
    baseline and ground-truth entries as reference rows."""
    chosen = list(Entry.objects.filter(pk__in=[int(pk) for pk in finalists["entry_pk"]]))
    references = list(Entry.objects.filter(Q(is_baseline=True) | Q(is_ground_truth=True), test_set=test_set))
    return create_campaign(name, test_set, chosen + references, questions=questions)


@transaction.atomic
def create_campaign(name, test_set, entries, questions=None) -> Campaign:
    if Campaign.objects.filter(name=name).exists():
        raise EvaluationInputError(f"a campaign named {name!r} already exists; choose another name")
    questions = list(questions) if questions else None
    if questions is not None and (len(set(questions)) != len(questions) or not all(q.strip() for q in questions)):
        raise EvaluationInputError("questions must be distinct, non-empty names")
    campaign = Campaign.objects.create(name=name, test_set=test_set, **({"questions": questions} if questions else {}))
    entries = list(entries)
    wrong = [e.label for e in entries if e.test_set_id != test_set.pk]
    if wrong:
        raise EvaluationInputError(f"entries {', '.join(wrong)} belong to another test set")
    campaign.entries.set(entries)
    refresh_inputs_version(campaign)
    return campaign


def _ranked_count(campaign: Campaign) -> int:
    return campaign.entries.filter(is_baseline=False, is_ground_truth=False).count()


ADAPTIVE_UNITS = ("instance", "rating")


@transaction.atomic
def set_adaptive(campaign: Campaign, *, adaptive=True, confidence=0.95, top_k=None, budget=None, round_size=100, unit="instance") -> Campaign:
    """Write a campaign's adaptive settings, checked; refused (nothing written) once its crowd job
    exists, since the rounds, the look grid and the boundary are fixed when the job is made."""
    campaign = Campaign.objects.select_for_update().get(pk=campaign.pk)
    if CampaignJob.objects.filter(campaign=campaign).exists():
        raise EvaluationInputError(f"campaign {campaign.name!r} already has its crowd job; adaptive settings are fixed when the job is created")
    problems = _adaptive_problems(campaign, adaptive, confidence, top_k, budget, round_size)
    if unit not in ADAPTIVE_UNITS:
        problems.append(f"unit must be one of {', '.join(ADAPTIVE_UNITS)} (new items each round, or one more rater at a time)")
    if problems:
        raise EvaluationInputError("adaptive settings: " + "; ".join(problems))
    campaign.adaptive, campaign.adaptive_confidence, campaign.adaptive_top_k = adaptive, float(confidence), top_k
    campaign.adaptive_budget, campaign.adaptive_round_size, campaign.adaptive_unit = budget, round_size, unit
    campaign.save(update_fields=["adaptive", "adaptive_confidence", "adaptive_top_k", "adaptive_budget", "adaptive_round_size", "adaptive_unit"])
    return campaign


def _is_whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _adaptive_problems(campaign: Campaign, adaptive, confidence, top_k, budget, round_size) -> list[str]:
    """What is wrong with adaptive settings, one message each (empty: nothing)."""
    problems = []
    if not isinstance(adaptive, bool):
        problems.append("adaptive must be true or false")
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0.5 <= confidence <= 0.999:
        problems.append("confidence must be a number from 0.5 to 0.999, e.g. 0.95")
    ranked = _ranked_count(campaign)
    if top_k is not None and not (_is_whole(top_k) and 1 <= top_k <= max(ranked, 1)):
        problems.append(f"top k must be a whole number from 1 to the campaign's {ranked} ranked entries, or empty for every pair")
    if budget is not None and not (_is_whole(budget) and budget >= 1):
        problems.append("budget must be a whole number of ratings of at least 1, or empty for the full design")
    if not (_is_whole(round_size) and round_size >= 2):
        problems.append("round size must be a whole number of instances of at least 2")
    if adaptive is True and ranked < 2:
        problems.append(f"adaptive mode orders entries, and campaign {campaign.name!r} has {ranked} ranked entr{'y' if ranked == 1 else 'ies'}")
    return problems


def _report_inputs(campaign: Campaign):
    entries = list(campaign.entries.select_related("team").order_by("team__team_id", "entry_id"))
    if not entries:
        raise EvaluationInputError(f"campaign {campaign.name!r} has no entries")
    labels = {e.pk: e.label for e in entries}
    truth = np.array([bool(item.get("target")) for item in campaign.test_set.labels])
    systems = [
        report_module.SystemSpec(
            label=e.label,
            kind=e.kind,
            predicted=None if e.outputs is None else np.array([bool(o.get("target")) for o in e.outputs]),
            objective=dict(e.objective_scores),
            computed=dict(e.computed_scores),
            responses=None if e.outputs is None else [o.get("response") for o in e.outputs],
        )
        for e in entries
    ]
    rows = list(Rating.objects.filter(campaign=campaign).values_list("entry_id", "question", "instance", "rater", "value").iterator(chunk_size=20000))
    if not rows:
        raise EvaluationInputError(f"campaign {campaign.name!r} has no ratings yet")
    ratings = pd.DataFrame(rows, columns=["entry", "question", "instance", "rater", "value"])
    unknown = set(ratings["entry"]) - set(labels)
    if unknown:
        raise EvaluationInputError(f"campaign {campaign.name!r} has ratings of entries that are not in it (ids {sorted(unknown)})")
    ratings["system"] = ratings["entry"].map(labels)
    # A crowd campaign rates a sample of instances: only those are scored (None: every instance).
    crowd = CampaignJob.objects.filter(campaign=campaign).values_list("instances", flat=True).first()
    return ratings, truth, systems, crowd


def compute_campaign_results(campaign_id, bootstrap: int | None = None, seed: int | None = None) -> CampaignResult:
    """The stored report for the campaign's current inputs, computing it only if it is missing.
    `bootstrap` and `seed` default to `scoring`'s (read when called: the web process loads the
    statistics only when a page needs them)."""
    campaign = Campaign.objects.select_related("test_set").get(pk=campaign_id)
    version = refresh_inputs_version(campaign)
    existing = CampaignResult.objects.filter(campaign=campaign, inputs_version=version).first()
    if existing is not None:
        _leave_draft(campaign)  # results stored before campaigns moved on their own
        return existing
    ratings, truth, systems, evaluated = _report_inputs(campaign)
    started = time.perf_counter()
    try:
        body = report_module.build_report(
            ratings, truth, systems, questions=campaign.questions,
            bootstrap=scoring.DEFAULT_BOOTSTRAP if bootstrap is None else bootstrap,
            seed=scoring.DEFAULT_SEED if seed is None else seed, rater_ids_known=campaign.rater_ids_known,
            evaluated=evaluated, fragility_mark=settings.QUORUM_FRAGILITY_MARK_SHARE,
            metric_order=[*campaign.test_set.score_columns, *DSTC9_METRICS],  # computed ones in the scorer's order
        )
    except ValueError as exc:
        raise EvaluationInputError(f"campaign {campaign.name!r}: {exc}") from exc
    body["campaign"] = campaign.name
    body["inputs_version"] = version
    with transaction.atomic():
        result, _ = CampaignResult.objects.get_or_create(
            campaign=campaign, inputs_version=version, defaults={"report": body, "seconds": time.perf_counter() - started}
        )
        _leave_draft(campaign)
    return result


def _leave_draft(campaign: Campaign) -> None:
    """A draft campaign with results is no longer a draft: one with a crowd job is collecting
    ratings; one without has imported ratings that nothing adds to, so it is closed. A campaign
    already past Draft keeps its state (a crowd campaign stays collecting until closed)."""
    has_crowd_job = CampaignJob.objects.filter(campaign=campaign).exists()
    state = Campaign.State.COLLECTING if has_crowd_job else Campaign.State.CLOSED
    # A filtered update, so a concurrent launch that moved it on is not overwritten.
    if Campaign.objects.filter(pk=campaign.pk, state=Campaign.State.DRAFT).update(state=state):
        campaign.state = state


@transaction.atomic
def remove_campaign_entry(campaign: Campaign, entry: Entry) -> Campaign:
    """Take an entry out of a draft campaign (e.g. one without outputs that finalist selection
    picked before): refused once the campaign collects ratings, has a crowd job or rated the entry."""
    campaign = Campaign.objects.select_for_update().get(pk=campaign.pk)
    if campaign.state != Campaign.State.DRAFT:
        raise EvaluationInputError(f"campaign {campaign.name!r} is {campaign.get_state_display().lower()}; only a draft's entries change")
    if CampaignJob.objects.filter(campaign=campaign).exists():
        raise EvaluationInputError(f"campaign {campaign.name!r} has its crowd job; its entries are fixed (make a new campaign instead)")
    if Rating.objects.filter(campaign=campaign, entry=entry).exists():
        raise EvaluationInputError(f"{entry.label} has ratings in campaign {campaign.name!r}; it stays")
    campaign.entries.remove(entry)
    refresh_inputs_version(campaign)
    return campaign
