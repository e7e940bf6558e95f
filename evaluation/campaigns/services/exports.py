"""Exports of a campaign's stored results as files (run from a command or a task, never a request)."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from evaluation.campaigns import leaderboard, plots
from evaluation.campaigns.selectors import export_directory
from evaluation.errors import EvaluationInputError
from evaluation.models import Campaign, CampaignResult, Rating
from quorum import csv_safety
from quorum.lazy_modules import lazy

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy("pandas")


def latest_result(campaign: Campaign) -> CampaignResult:
    result = CampaignResult.objects.filter(campaign=campaign, inputs_version=campaign.inputs_version).first()
    if result is None:
        raise EvaluationInputError(f"campaign {campaign.name!r} has no results for its current inputs; run compute_results first")
    return result


def instance_scores_csv(campaign: Campaign, path) -> int:
    """One row per rated (system, instance): the mean per question and the number of ratings."""
    rows = Rating.objects.filter(campaign=campaign).values_list("entry__team__team_id", "entry__entry_id", "instance", "question", "value")
    frame = pd.DataFrame(list(rows.iterator(chunk_size=20000)), columns=["team_id", "entry_id", "instance", "question", "value"])
    table = frame.groupby(["team_id", "entry_id", "instance", "question"])["value"].agg(["mean", "count"]).unstack("question")
    table.columns = [f"{q}_{stat}".replace("_mean", "") for stat, q in table.columns]
    table = table.reset_index().sort_values(["team_id", "entry_id", "instance"])
    # Team, entry and instance ids come from uploads (text); the score columns stay numeric.
    for column in ("team_id", "entry_id", "instance"):
        table[column] = table[column].map(csv_safety.safe_cell)
    # Counts stay whole numbers also where a question has no rating on an instance (NaN made them floats).
    for column in [c for c in table.columns if str(c).endswith("_count")]:
        table[column] = table[column].astype("Int64")
    table.columns = csv_safety.safe_row(table.columns)
    # Each mean whole (pandas writes a float's shortest repr), as leaderboard.csv carries its figures: rounded
    # to four places, a mean of 3 ratings recomputed into Eq. 1 missed leaderboard.csv's value by up to 3e-6.
    table.to_csv(path, index=False)
    return len(table)


def export_campaign(campaign: Campaign, directory=None, result=None) -> dict:
    """Write leaderboard.{json,csv,md}, pairwise.csv, spearman.csv, instance_scores.csv, agreement.json, scores.png and
    ratings.png for `result` (default: the campaign's current results). Returns {name: path}."""
    result = result or latest_result(campaign)
    report = result.report
    directory = Path(directory or export_directory(result))
    directory.mkdir(parents=True, exist_ok=True)
    written = {}
    for fmt in ("json", "csv", "md"):
        path = directory / f"leaderboard.{fmt}"
        path.write_text(leaderboard.render(report, fmt), encoding="utf-8")
        written[f"leaderboard.{fmt}"] = path
    for name, render in (("pairwise.csv", leaderboard.pairwise_csv), ("spearman.csv", leaderboard.spearman_csv), ("fragility.csv", leaderboard.fragility_csv)):
        written[name] = directory / name
        written[name].write_text(render(report), encoding="utf-8")
    path = directory / "agreement.json"
    path.write_text(leaderboard.agreement_json({**report, "campaign": campaign.name, "inputs_version": result.inputs_version}), encoding="utf-8")
    written["agreement.json"] = path
    written["instance_scores.csv"] = directory / "instance_scores.csv"
    instance_scores_csv(campaign, written["instance_scores.csv"])
    written["scores.png"] = directory / "scores.png"
    plots.scores_with_intervals(report, written["scores.png"])
    written["ratings.png"] = directory / "ratings.png"
    plots.rating_distributions(report, written["ratings.png"])
    return written
