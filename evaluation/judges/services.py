"""Automatic judges of a campaign: import their per-instance scores, compute their report.

One transaction each; a bad file raises EvaluationInputError naming the line, and writes nothing.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import transaction

from annotation.models import Item, Job
from evaluation.campaigns import selectors
from evaluation.campaigns.services.pairwise import request_report as request_pairwise_report
from evaluation.errors import EvaluationInputError
from evaluation.judges import scores_csv, verdicts_csv
from evaluation.models import Campaign, JudgeRun, JudgeScore, PairwiseJudgeRun, PairwiseJudgeVerdict, Rating
from quorum.lazy_modules import lazy

if TYPE_CHECKING:
    import pandas as pd

    from evaluation.stats import judge_agreement, judges
else:
    pd = lazy("pandas")
    judge_agreement = lazy("evaluation.stats.judge_agreement")
    judges = lazy("evaluation.stats.judges")


def _ranked_entries(campaign: Campaign) -> dict:
    """label -> entry for the campaign's entries (reference rows included: a judge may score them)."""
    return {entry.label: entry for entry in campaign.entries.select_related("team")}


def _judge_frame(run: JudgeRun) -> pd.DataFrame:
    rows = run.scores.values_list("entry__team__team_id", "entry__entry_id", "instance", "question", "score")
    frame = pd.DataFrame.from_records(list(rows), columns=["team", "entry", "instance", "question", "score"])
    frame.insert(0, "system", frame.pop("team") + "/" + frame.pop("entry"))
    return frame


@transaction.atomic
def compute_judge_report(run: JudgeRun, epsilon: float | None = None, alpha=0.05, scoring: str | None = None) -> dict:
    """Recompute and store the run's report against the campaign's current ratings. `scoring`: the
    alternative-annotator test's scoring function (`neg_rmse` for numeric ratings, `accuracy`).
    `epsilon` and `scoring` default to `judge_agreement`'s (read when called: the web process loads
    the statistics only when a page needs them)."""
    epsilon = judge_agreement.DEFAULT_EPSILON if epsilon is None else epsilon
    scoring = judge_agreement.DEFAULT_SCORING if scoring is None else scoring
    if scoring not in judge_agreement.SCORING_FUNCTIONS:
        raise EvaluationInputError(f"unknown scoring function {scoring!r}: one of {', '.join(judge_agreement.SCORING_FUNCTIONS)}")
    campaign = run.campaign
    ratings = selectors.ratings_frame(campaign)
    if ratings.empty:
        raise EvaluationInputError(f"campaign {campaign.name!r} has no human ratings yet: the judge has nothing to be compared with")
    ranked = [label for label, entry in _ranked_entries(campaign).items() if entry.kind == "entry"]
    truth, predicted, evaluated = selectors.detection_inputs(campaign)
    statistic = judges.ranked_statistic(ratings, campaign.questions, truth, predicted, evaluated)
    run.report = judges.build(
        ratings, _judge_frame(run), ranked, raters_are_positions=not campaign.rater_ids_known, alpha=alpha, epsilon=epsilon, scoring=scoring,
        ranked_by=statistic, detection=judges.Detection(truth, predicted, evaluated, tuple(campaign.questions)),
    )
    run.report["epsilon"] = epsilon
    run.inputs_version = campaign.inputs_version
    run.save(update_fields=["report", "inputs_version"])
    return run.report


@transaction.atomic
def import_judge_scores(campaign: Campaign, source, judge: str, name: str = "judge.csv") -> JudgeRun:
    """Scores from a CSV (`scores_csv`) as the run `judge` of the campaign, replacing a run of that
    name; its report is computed when the campaign has human ratings."""
    judge = (judge or "").strip()
    if not judge or len(judge) > 100:
        raise EvaluationInputError("give the judge a name of 1 to 100 characters (e.g. 'gpt-4o-rubric')")
    entries = _ranked_entries(campaign)
    try:
        frame = scores_csv.read(source, list(entries), campaign.test_set.size, campaign.questions, name=name)
    except scores_csv.JudgeFileError as exc:
        raise EvaluationInputError(str(exc)) from None
    JudgeRun.objects.filter(campaign=campaign, name=judge).delete()
    run = JudgeRun.objects.create(campaign=campaign, name=judge)
    JudgeScore.objects.bulk_create(
        (JudgeScore(run=run, entry=entries[s], instance=i, question=q, score=v) for s, i, q, v in frame.itertuples(index=False)),
        batch_size=5000,
    )
    if Rating.objects.filter(campaign=campaign).exists():
        compute_judge_report(run)
    return run


@transaction.atomic
def import_pairwise_verdicts(job: Job, source, judge: str, name: str = "verdicts.csv") -> PairwiseJudgeRun:
    """Verdicts from a CSV (`verdicts_csv`) as the run `judge` of a pairwise job, replacing a run of
    that name; all or nothing."""
    judge = (judge or "").strip()
    if not judge or len(judge) > 100:
        raise EvaluationInputError("give the judge a name of 1 to 100 characters (e.g. 'gpt-4o-pairwise')")
    items = dict(Item.objects.filter(job=job, gold__isnull=True).values_list("position", "id"))
    try:
        frame = verdicts_csv.read(source, items, name=name)
    except verdicts_csv.VerdictFileError as exc:
        raise EvaluationInputError(str(exc)) from None
    PairwiseJudgeRun.objects.filter(job=job, name=judge).delete()
    run = PairwiseJudgeRun.objects.create(job=job, name=judge)
    PairwiseJudgeVerdict.objects.bulk_create(
        (
            PairwiseJudgeVerdict(run=run, item_id=items[pair], preferred=preferred, probability=None if pd.isna(probability) else float(probability))
            for pair, preferred, probability in frame.itertuples(index=False)
        ),
        batch_size=5000,
    )
    request_pairwise_report(job, delay=0)  # its rank sets are part of the job's stored ranking
    return run
