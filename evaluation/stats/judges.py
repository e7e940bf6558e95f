"""The report of an automatic judge against a campaign's human ratings. Pure: pandas, numpy; no Django.

Inputs are two frames: the human ratings (system, instance, question, rater, value) and the judge's
scores (system, instance, question, score). An item is a system's instance; its human score is the
mean of its ratings over the questions the campaign asks (the ranked quantity is the mean over
questions), its judge score the judge's mean over the same questions. The report has:
- agreement: correlations at item level (per question and over questions) and system level
  (`judge_agreement.correlations`);
- the alternative-annotator test on the items (`judge_agreement.alt_test`): raters are the
  campaign's workers, or positions ('pos1'...) for imported lists, which the report says, since a
  position is not one person;
- per system, the human-only interval of the mean human score on the rated instances and the
  PPI++ interval that adds the judge's scores on the instances no human rated (`ppi`); the same for
  the paired differences of systems adjacent in the PPI order. Plain means: Eq. 1's detection
  weighting is the leaderboard's business, not the judge's;
- rank sets with a stated coverage (`ranksets`, Chatzi et al. 2024), prediction-powered beside
  human-only: on the instances where every system has a human and a judge score (labelled) and
  those where every system has only the judge's (unlabelled); an instance rated for some systems
  only is left out, so both tables rank the same systems on the same instances.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from evaluation.stats import judge_agreement, ppi, ranksets, scoring


def ranked_statistic(ratings: pd.DataFrame, questions, truth, predicted: dict, evaluated=None) -> dict:
    """label -> the leaderboard's final score of each system the humans rated (`report.build_report`:
    Eq. 1 S_f over the evaluated instances where `predicted[label]` holds detection predictions,
    else the mean of instance scores; the mean over `questions`)."""
    labels = [label for label in predicted if label in set(ratings["system"])]
    flags = np.asarray(truth, dtype=bool)
    sample = None if evaluated is None else np.isin(np.arange(len(flags)), np.asarray(list(evaluated), dtype=int))
    scores = scoring.instance_score_matrix(ratings, labels, list(questions), len(flags))[0]
    final = scoring.system_scores(scoring.eq1_columns(scores, flags, [predicted[label] for label in labels], evaluated=sample))["final"]
    return {label: float(value) for label, value in zip(labels, final, strict=True) if not np.isnan(value)}


def _items(ratings: pd.DataFrame, judge: pd.DataFrame):
    """(human item means, judge item means) indexed by (system, instance)."""
    human = ratings.groupby(["system", "instance", "question"])["value"].mean().groupby(["system", "instance"]).mean()
    scored = judge.groupby(["system", "instance"])["score"].mean()
    return human, scored


def _interval_pair(human, judge_scores, alpha):
    y, f, fu = ppi.split(human, judge_scores)
    if len(y) < 2:
        return None
    human_only = ppi.mean_interval(y, f, fu, alpha=alpha, lam=0)
    combined = ppi.mean_interval(y, f, fu, alpha=alpha) if len(fu) > 1 else human_only
    return {
        "human_only": human_only.as_dict(),
        "ppi": combined.as_dict(),
        "width_ratio": combined.width / human_only.width if human_only.width else None,
    }


def build(
    ratings: pd.DataFrame, judge: pd.DataFrame, systems, raters_are_positions=False, alpha=0.05, epsilon=judge_agreement.DEFAULT_EPSILON,
    scoring=judge_agreement.DEFAULT_SCORING, ranked_by: dict | None = None,
) -> dict:
    """The report (module docstring); `systems` are the ranked systems' labels, in any order.
    `ranked_by`: label -> the leaderboard's statistic (`ranked_statistic`) that orders the systems;
    None orders them by the PPI estimate of the mean (no test set to apply Eq. 1 to)."""
    human, scored = _items(ratings, judge)
    both = pd.concat({"human": human, "judge": scored}, axis=1)
    rated = both.dropna()
    per_question = {}
    for question, rows in ratings.groupby("question"):
        h = rows.groupby(["system", "instance"])["value"].mean()
        j = judge[judge["question"] == question].set_index(["system", "instance"])["score"]
        joined = pd.concat({"human": h, "judge": j}, axis=1).dropna()
        per_question[str(question)] = judge_agreement.correlations(joined["judge"], joined["human"])
    system_means = both.groupby(level="system").mean()
    agreement = {
        "items": judge_agreement.correlations(rated["judge"], rated["human"]),
        "per_question": per_question,
        "systems": judge_agreement.correlations(system_means["judge"], system_means["human"]),
    }

    by_rater = ratings.groupby(["rater", "system", "instance"])["value"].mean()
    human_by_rater = {str(rater): {(s, int(i)): v for (s, i), v in rows.droplevel("rater").items()} for rater, rows in by_rater.groupby(level="rater")}
    judge_items = {(s, int(i)): v for (s, i), v in scored.items()}
    try:
        alt = judge_agreement.alt_test(human_by_rater, judge_items, epsilon=epsilon, scoring=scoring)
    except ValueError as exc:
        alt = {"skipped": str(exc)}

    # Per system: every instance the judge or a human scored; NaN where one of them did not.
    table = both.reset_index()
    rows, estimates = [], {}
    for system in systems:
        mine = table[table["system"] == system]
        intervals = _interval_pair(mine["human"].to_numpy(), mine["judge"].to_numpy(), alpha)
        if intervals is None:
            rows.append({"system": system, "skipped": "fewer than two instances with both a human and a judge score"})
            continue
        estimates[system] = ranked_by[system] if ranked_by and system in ranked_by else intervals["ppi"]["estimate"]
        rows.append({"system": system, **intervals, "leaderboard_score": ranked_by.get(system) if ranked_by else None})
    order = sorted(estimates, key=lambda s: (-estimates[s], s))
    rows.sort(key=lambda row: (row["system"] not in estimates, -estimates.get(row["system"], 0.0), row["system"]))
    pairs = _adjacent_pairs(both, order, alpha) if len(both) else []
    return {
        "alpha": alpha,
        "items_scored_by_judge": int(scored.notna().sum()),
        "items_rated_by_humans": int(human.notna().sum()),
        "agreement": agreement,
        "alt_test": alt,
        "raters_are_positions": bool(raters_are_positions),
        "systems": rows,
        "ranked_by": (
            "the leaderboard's final score on the human ratings (Eq. 1 where the system predicts knowledge-seeking turns, else the mean)"
            if ranked_by else "the PPI estimate of the mean score"
        ),
        "pairs": pairs,
        "rank_sets": _rank_sets(both, list(systems), alpha),
    }


def _rank_sets(both: pd.DataFrame, systems: list, alpha: float) -> dict:
    """Prediction-powered and human-only rank sets of the systems' mean human scores, or {"skipped": why}."""
    if len(systems) < 2 or not len(both):
        return {"skipped": "fewer than two systems with scores"}
    wide = both.unstack(level="system")
    present = [s for s in systems if s in wide["judge"].columns and s in wide["human"].columns]
    if len(present) < 2:
        return {"skipped": "fewer than two systems with both human and judge scores"}
    human, judge = wide["human"][present], wide["judge"][present]
    judged = judge.notna().all(axis=1)
    labelled = judged & human.notna().all(axis=1)
    unlabelled = judged & human.isna().all(axis=1)
    try:
        result = ranksets.ratings_rank_sets(present, human[labelled].to_numpy(), judge[labelled].to_numpy(), judge[unlabelled].to_numpy(), alpha=alpha)
    except ValueError as exc:
        return {"skipped": str(exc)}
    result["left_out"] = int(len(wide) - labelled.sum() - unlabelled.sum())
    return result


def _adjacent_pairs(both: pd.DataFrame, order: list, alpha: float) -> list[dict]:
    """The PPI interval of each adjacent pair's difference in `order`, on the instances both have."""
    wide = both.unstack(level="system")
    pairs = []
    for a, b in zip(order, order[1:], strict=False):
        difference_human = wide["human"][a] - wide["human"][b]
        difference_judge = wide["judge"][a] - wide["judge"][b]
        intervals = _interval_pair(difference_human.to_numpy(), difference_judge.to_numpy(), alpha)
        if intervals is not None:
            pairs.append({"a": a, "b": b, **intervals, "resolved": bool(intervals["ppi"]["low"] > 0 or intervals["ppi"]["high"] < 0)})
    return pairs
