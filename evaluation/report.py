"""The full statistical report of a human-evaluation campaign, as a JSON-ready dict.

Pure module (no Django): the service loads ratings and entries from the database and hands them
here; the result is stored with the inputs' version, so pages and exports read it, never recompute.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from . import agreement, scoring

REPORT_FORMAT = 1
KINDS = ("entry", "baseline", "ground_truth")


@dataclass
class SystemSpec:
    label: str
    kind: str = "entry"  # entry | baseline | ground_truth; the last two are reference rows, not ranked
    predicted: np.ndarray | None = None  # f~ per test instance, None when the system predicts no detection
    objective: dict = field(default_factory=dict)


def _num(x):
    """JSON-safe number: numpy scalars to Python, NaN/inf to None."""
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) or math.isinf(x) else x


def build_report(
    ratings: pd.DataFrame,
    truth,
    systems: list[SystemSpec],
    questions=("appropriateness", "accuracy"),
    bootstrap=scoring.DEFAULT_BOOTSTRAP,
    seed=scoring.DEFAULT_SEED,
    ci=0.95,
    rater_ids_known=True,
    agreement_levels=("ordinal", "interval"),
) -> dict:
    """`ratings`: columns system (a label), question, instance (index into the test set), rater, value (1-5)."""
    questions = list(questions)
    labels = [s.label for s in systems]
    if len(set(labels)) != len(labels):
        raise ValueError("system labels must be unique")
    for s in systems:
        if s.kind not in KINDS:
            raise ValueError(f"system {s.label!r}: kind must be one of {', '.join(KINDS)}")
    truth = np.asarray(truth, dtype=bool)
    n_instances = len(truth)

    scores, counts = scoring.instance_score_matrix(ratings, labels, questions, n_instances)
    cols = scoring.eq1_columns(scores, truth, [s.predicted for s in systems])
    point = scoring.system_scores(cols)
    boot, boot_final = scoring.bootstrap_scores(cols, bootstrap, seed)
    q_low, q_high = scoring.percentile_interval(boot, ci)
    f_low, f_high = scoring.percentile_interval(boot_final, ci)

    competing = np.array([s.kind == "entry" for s in systems])
    idx = np.flatnonzero(competing)
    rank = np.full(len(systems), None, dtype=object)
    rank_low, rank_high, shared = rank.copy(), rank.copy(), rank.copy()
    finals_ok = len(idx) and not np.isnan(point["final"][idx]).any()
    if finals_ok:
        rank[idx] = scoring.competition_ranks(point["final"][idx])
        lo, hi = scoring.bootstrap_rank_ranges(np.nan_to_num(boot_final[:, idx], nan=-np.inf), ci)
        rank_low[idx], rank_high[idx] = lo, hi
        shared[idx] = scoring.shared_ranks(f_low[idx], f_high[idx])

    rows = []
    for s, spec in enumerate(systems):
        per_q = {}
        for q, name in enumerate(questions):
            per_q[name] = {
                "score": _num(point["score"][s, q]),
                "precision": _num(point["precision"][s, q]),
                "recall": _num(point["recall"][s, q]),
                "ci_low": _num(q_low[s, q]),
                "ci_high": _num(q_high[s, q]),
                "n": int((counts[s, q] > 0).sum()),
                "ratings": int(counts[s, q].sum()),
                "unrated_detected": int(cols.unrated_detected[s, q]),
                "ignored_ratings": int(cols.ignored_ratings[s, q]),
            }
        rows.append(
            {
                "system": spec.label,
                "kind": spec.kind,
                "weighted": bool(cols.weighted[s]),
                "questions": per_q,
                "final": _num(point["final"][s]),
                "final_ci_low": _num(f_low[s]),
                "final_ci_high": _num(f_high[s]),
                "rank": None if rank[s] is None else int(rank[s]),
                "rank_low": None if rank_low[s] is None else int(rank_low[s]),
                "rank_high": None if rank_high[s] is None else int(rank_high[s]),
                "shared_rank": None if shared[s] is None else int(shared[s]),
                "n": int((counts[s] > 0).all(axis=0).sum()),
                "objective": {k: _num(v) for k, v in spec.objective.items()},
            }
        )
    order = sorted(range(len(rows)), key=lambda k: (rows[k]["final"] is None, -(rows[k]["final"] or 0), rows[k]["system"]))

    pairwise = {name: scoring.pairwise_tests(scores[:, q], labels) for q, name in enumerate(questions)}
    pairwise["final"] = scoring.pairwise_tests(scores.mean(axis=1), labels)  # NaN unless rated on every question

    objective = pd.DataFrame([systems[k].objective for k in idx], index=[labels[k] for k in idx])
    spearman = scoring.spearman_by_metric(point["final"][idx], objective) if len(idx) else {}

    return {
        "format": REPORT_FORMAT,
        "questions": questions,
        "n_instances": n_instances,
        "n_knowledge_seeking": int(truth.sum()),
        "n_ratings": int(len(ratings)),
        "method": {
            "bootstrap": int(bootstrap),
            "seed": int(seed),
            "ci": ci,
            "ci_method": "percentile bootstrap, resampling test-set instances; same resamples for all systems",
            "system_score": "Eq. 1 S_f (detection-weighted) when the system predicts knowledge-seeking turns, else mean of instance scores",
            "final_score": "mean of the question scores",
            "ties": "competition ranking (1, 2, 2, 4), higher is better",
            "rank_range": f"{ci:.0%} interval of the bootstrap ranks among entries",
            "shared_rank": "1 + number of entries whose interval lies entirely above",
            "significance": "Wilcoxon signed-rank on instance scores of instances both systems were rated on, zero differences dropped, Holm-corrected over all pairs",
        },
        "systems": [rows[k] for k in order],
        "pairwise": pairwise,
        "spearman": spearman,
        "agreement": _agreement(ratings, labels, questions, n_instances, agreement_levels, bootstrap, seed, rater_ids_known),
        "rating_distribution": _distribution(ratings, labels, questions),
    }


def _agreement(ratings, labels, questions, n_instances, levels, bootstrap, seed, rater_ids_known):
    out = {}
    codes = pd.Index(labels).get_indexer(ratings["system"]).astype(np.int64)
    for q in questions:
        mask = (ratings["question"] == q).to_numpy()
        table = pd.DataFrame(
            {
                "item": codes[mask] * n_instances + ratings["instance"].to_numpy()[mask],
                "rater": ratings["rater"].to_numpy()[mask],
                "value": ratings["value"].to_numpy()[mask],
            }
        )
        entry = {"levels": {}, "raters": None}
        # Ratings are on the 1-5 scale: one value-count table over the Likert domain serves every
        # level (unused domain values have no weight at any level).
        prepared = agreement.value_counts_from_long(table, "ordinal", agreement.LIKERT_1_5)
        counts, domain, frame = prepared
        n_raters = frame["rater"].nunique()
        for level in levels:
            entry["levels"][level] = agreement.alpha_from_counts(counts, domain, level, bootstrap=bootstrap, seed=seed, raters=n_raters).to_dict()
        if rater_ids_known:
            diagnostics = agreement.rater_diagnostics(table, "ordinal", prepared=prepared)
            entry["raters"] = [{k: (_num(v) if isinstance(v, float) else v) for k, v in d.__dict__.items()} for d in diagnostics]
        else:
            entry["raters_note"] = "rater identities are positional (imported lists), so per-rater diagnostics are not meaningful"
        out[q] = entry
    return out


def _distribution(ratings, labels, questions):
    grouped = ratings.groupby(["system", "question", "value"], observed=True).size()
    out = {label: {q: {str(v): 0 for v in range(1, 6)} for q in questions} for label in labels}
    for (system, question, value), n in grouped.items():
        out[system][question][str(int(value))] = int(n)
    return out
