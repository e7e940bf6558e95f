"""The full statistical report of a human-evaluation campaign, as a JSON-ready dict.

Pure module (no Django): the service loads ratings and entries from the database and hands them
here; the result is stored with the inputs' version, so pages and exports read it, never recompute.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from annotation.quality import agreement
from evaluation.stats import fragility, score_sources, scoring, style
from evaluation.stats.report_format import REPORT_FORMAT

KINDS = ("entry", "baseline", "ground_truth")
SCALE = (1.0, 5.0)  # the rating scale (LIKERT_1_5)
EQ1_FLOOR = 0.0  # Eq. 1's S_f with detection counts a missed knowledge turn as 0


@dataclass
class SystemSpec:
    label: str
    kind: str = "entry"  # entry | baseline | ground_truth; the last two are reference rows, not ranked
    predicted: np.ndarray | None = None  # f~ per test instance, None when the system predicts no detection
    objective: dict = field(default_factory=dict)  # the uploaded score file's values (what the challenge published)
    computed: dict = field(default_factory=dict)  # the values Quorum computed from the outputs; kept apart, never merged
    responses: list | None = None  # the response text per test instance, for the length-score association; None when not known


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
    evaluated=None,
    fragility_mark=fragility.DEFAULT_MARK_SHARE,
    metric_order=(),
) -> dict:
    """`ratings`: columns system (a label), question, instance (index into the test set), rater, value (1-5).

    `evaluated`: the instances the campaign set out to rate (its sample), or None for all.
    `fragility_mark`: adjacent pairs held by a smaller share of the ratings are marked (`fragility`).
    `metric_order`: the order to list objective metrics in (the score file's columns); metrics it does
    not name follow in the order the systems' scores first give them. The report keeps it as
    `metric_order`, a list, since a stored JSON object's keys may come back in another order.
    """
    questions = list(questions)
    labels = [s.label for s in systems]
    if len(set(labels)) != len(labels):
        raise ValueError("system labels must be unique")
    for system in systems:
        if system.kind not in KINDS:
            raise ValueError(f"system {system.label!r}: kind must be one of {', '.join(KINDS)}")
    truth = np.asarray(truth, dtype=bool)
    n_instances = len(truth)
    evaluated_mask = None
    if evaluated is not None:
        evaluated_mask = np.zeros(n_instances, dtype=bool)
        evaluated_mask[np.asarray(list(evaluated), dtype=int)] = True

    scores, counts = scoring.instance_score_matrix(ratings, labels, questions, n_instances)
    cols = scoring.eq1_columns(scores, truth, [s.predicted for s in systems], evaluated=evaluated_mask)
    point = scoring.system_scores(cols)
    unc_q, unc_f = scoring.paired_uncertainty(ratings, cols, counts, point, labels, questions, bootstrap, seed, raters_known=rater_ids_known)
    q_low, q_high, _, _ = scoring.interval(point["score"], unc_q.instance, unc_q.rater, unc_q.n_instances, unc_q.n_raters, ci)
    f_low, f_high, f_kappa, f_df = scoring.interval(point["final"], unc_f.instance, unc_f.rater, unc_f.n_instances, unc_f.n_raters, ci)

    # Intervals of a bounded mean stay on its scale. The percentile interval widened by t_df/z can
    # reach past a bound when a row has few ratings (or all at one end); it is clipped there and
    # the row says so (`ci_clipped`), since its interval's shape then rests on too few ratings.
    floor = np.where(cols.weighted, EQ1_FLOOR, SCALE[0])
    clipped_q = (q_low < floor[:, None]) | (q_high > SCALE[1])
    clipped_f = (f_low < floor) | (f_high > SCALE[1])
    q_low, q_high = np.clip(q_low, floor[:, None], SCALE[1]), np.clip(q_high, floor[:, None], SCALE[1])
    f_low, f_high = np.clip(f_low, floor, SCALE[1]), np.clip(f_high, floor, SCALE[1])
    ci_clipped = clipped_f | clipped_q.any(axis=1)

    final = point["final"]
    rated = ~np.isnan(final)
    # Table order: final score, best first, ties by label; rows that were not rated at the end.
    order = sorted(range(len(systems)), key=lambda k: (not rated[k], -(final[k] if rated[k] else 0), labels[k]))
    ranked = [k for k in order if rated[k] and systems[k].kind == "entry"]
    compared = [k for k in order if rated[k]]

    # Pairwise comparisons of every rated row (reference rows included: "is this entry better
    # than the baseline?" is a question organizers ask), on the ranked statistic's resamples.
    sub = unc_f.columns(compared)
    # A difference of two scores lies within what their scales allow (see `scoring.pairwise_differences`).
    bounds = (floor[compared], np.full(len(compared), SCALE[1]))
    pairwise = scoring.pairwise_differences(final[compared], sub, [labels[k] for k in compared], ci, bounds=bounds)

    rank: list[int | None] = [None] * len(systems)
    rank_low: list[int | None] = [None] * len(systems)
    rank_high: list[int | None] = [None] * len(systems)
    if ranked:
        groups = scoring.holm_rank_groups([labels[k] for k in ranked], pairwise)
        for j, k in enumerate(ranked):
            rank[k], rank_low[k], rank_high[k] = groups.rank[j], groups.rank_low[j], groups.rank_high[j]

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
                "rated": bool(rated[s]),
                "questions": per_q,
                "final": _num(final[s]),
                "final_ci_low": _num(f_low[s]),
                "final_ci_high": _num(f_high[s]),
                "rank": rank[s],
                "rank_low": rank_low[s],
                "rank_high": rank_high[s],
                "n": int((counts[s] > 0).all(axis=0).sum()),
                "unrated": int(cols.unrated_detected[s].max()) if len(questions) else 0,
                "raters": int(unc_f.n_raters[s]),
                "ci_widening": _num(f_kappa[s]),
                "ci_clipped": bool(ci_clipped[s]),
                "objective": {k: _num(v) for k, v in spec.objective.items()},
                "computed_objective": {k: _num(v) for k, v in spec.computed.items()},
            }
        )

    # Each source on its own: the published values, and Quorum's recomputation beside them.
    ranked_labels = [labels[k] for k in ranked]
    metrics = _metric_order(metric_order, systems)
    published = pd.DataFrame([systems[k].objective for k in ranked], index=ranked_labels)
    recomputed = pd.DataFrame([systems[k].computed for k in ranked], index=ranked_labels)
    published = published[[m for m in metrics if m in published.columns]]
    recomputed = recomputed[[m for m in metrics if m in recomputed.columns]]
    spearman = scoring.spearman_by_metric(final[ranked], published) if ranked else {}
    spearman_computed = scoring.spearman_by_metric(final[ranked], recomputed) if ranked else {}
    raters_resampled = bool(rater_ids_known and unc_f.n_raters.max(initial=0) > 1)

    return {
        "format": REPORT_FORMAT,
        "questions": questions,
        "n_instances": n_instances,
        "n_knowledge_seeking": int(truth.sum()),
        "n_evaluated": int(n_instances if evaluated_mask is None else evaluated_mask.sum()),
        # A reference row (ground truth, baseline) no one rated is shown as not rated; it is not
        # collection still to come, as an entry's unrated instances are.
        "n_unrated": int(max((r["unrated"] for r in rows if r["rated"] or r["kind"] == "entry"), default=0)),
        "n_ratings": int(len(ratings)),
        "method": {
            "bootstrap": int(bootstrap),
            "seed": int(seed),
            "ci": ci,
            "ci_method": (
                "two-way percentile bootstrap (test-set instances and raters resampled, rater part scaled by sqrt(R/(R-1)), "
                "widened by t_df/z with Welch-Satterthwaite df); the same resamples for every system"
                if raters_resampled
                else "percentile bootstrap resampling test-set instances (rater ids unknown or a single rater); the same resamples for every system"
            ),
            "raters_resampled": raters_resampled,
            "system_score": "Eq. 1 S_f (detection-weighted) over the evaluated instances when the system predicts knowledge-seeking turns, else mean of instance scores; unrated instances are left out, not counted as 0",
            "final_score": "mean of the question scores; the ranked statistic",
            "ci_bounds": (
                f"intervals are clipped to the scale ({SCALE[0]:g}-{SCALE[1]:g}; {EQ1_FLOOR:g}-{SCALE[1]:g} for Eq. 1 S_f with detection, "
                "where a missed knowledge turn counts 0); a clipped row is marked: it has too few ratings for its interval's shape"
            ),
            "objective_scores": score_sources.CORRELATION_WORDS,
            "rank": scoring.tie_group_rule(ci),
            "rank_range": scoring.rank_range_rule(ci),
            "pairwise": (
                f"difference of final scores on the same resamples, {ci:.0%} interval, the pair's own two-sided bootstrap p (unadjusted; where fewer than "
                f"{scoring.MIN_TAIL_REPLICATES} resamples fall beyond 0, the normal tail at the difference's bootstrap standard error, never 0), "
                f"and its Holm-adjusted p over the table: 'better' and 'significant' are Holm p < {1 - ci:.2g}, the decision the tie groups read (two rows of one group can still differ so, "
                "since a line is drawn only where every row above it beats every row below; their rank ranges show it); an interval is clipped to the difference the two scales "
                "allow (marked 'clipped'), and a pair rated on both sides on fewer than "
                f"{scoring.MIN_PAIR_INSTANCES} instances gets that whole range and no p (too few to compare)"
            ),
        },
        "systems": [rows[k] for k in order],
        "pairwise": pairwise,
        "metric_order": metrics,
        "spearman": spearman,  # on the uploaded score file's values
        "spearman_computed": spearman_computed,  # on Quorum's recomputation, where it has one
        "agreement": _agreement(ratings, labels, questions, n_instances, agreement_levels, bootstrap, seed, rater_ids_known),
        "rating_distribution": _distribution(ratings, labels, questions),
        "length_association": style.length_association(style.length_rows(labels, [s.responses for s in systems], scores)),
        "fragility": fragility.report_fragility(ratings, labels, questions, n_instances, cols, [labels[k] for k in ranked], fragility_mark),
    }


def _metric_order(given, systems) -> list[str]:
    """Every objective metric of `systems`: those `given` names in its order, then the rest as first seen."""
    seen = [m for s in systems for scores in (s.objective, s.computed) for m in scores]
    return list(dict.fromkeys([*(m for m in given if m in seen), *seen]))


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
