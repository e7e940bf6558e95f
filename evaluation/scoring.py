"""Scores, intervals, ranks and tests for the DSTC9 Track 1 human evaluation (PROTOCOLS.md §2).

Pure module: numpy, pandas, scipy; no Django.

Conventions, stated once:
- Every metric is "higher is better" unless it is named in `lower_is_better`.
- Ties get competition ranks ("1224"): equal values share the best rank of their group and the
  next rank skips, e.g. scores 0.9, 0.8, 0.8, 0.7 rank 1, 2, 2, 4.
- Bootstrap: percentile intervals from B resamples of the test-set instances (with replacement,
  fixed seed). The same resamples serve every system, so systems are compared on paired data.
- Paired significance: Wilcoxon signed-rank test (scipy.stats.wilcoxon, zero differences
  dropped, two-sided) on the instance scores of the instances both systems were rated on; p-values
  are Holm-corrected over all pairs of one question (and separately over the final score).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

DEFAULT_BOOTSTRAP = 1000
DEFAULT_SEED = 20210101


# ---------------------------------------------------------------------------------------------
# Ranks, the overall objective score, finalists


def competition_ranks(values, higher_is_better=True) -> np.ndarray:
    """Competition ranks (1, 2, 2, 4) of `values`; NaN is an error, not a silent last place."""
    values = np.asarray(values, dtype=float)
    if np.isnan(values).any():
        raise ValueError("cannot rank missing values")
    key = -values if higher_is_better else values
    return stats.rankdata(key, method="min").astype(int)


def mrr_overall(scores: pd.DataFrame, metrics, lower_is_better=()) -> pd.Series:
    """S_overall(e) = (1/|M|) * sum_i 1/rank_i(e) over the metrics M (PROTOCOLS Eq. 2).

    `scores` has one row per entry and one column per metric.
    """
    metrics = list(metrics)
    if not metrics:
        raise ValueError("choose at least one metric")
    unknown = [m for m in metrics if m not in scores.columns]
    if unknown:
        raise ValueError(f"unknown metric(s): {', '.join(unknown)}; available: {', '.join(map(str, scores.columns))}")
    total = np.zeros(len(scores))
    for metric in metrics:
        column = pd.to_numeric(scores[metric], errors="coerce")
        if column.isna().any():
            raise ValueError(f"metric {metric!r} has no value for entry {column[column.isna()].index[0]!r}")
        total += 1.0 / competition_ranks(column.to_numpy(), higher_is_better=metric not in lower_is_better)
    return pd.Series(total / len(metrics), index=scores.index, name="overall")


def select_finalists(entries: pd.DataFrame, n: int) -> pd.DataFrame:
    """The best entry of each of the top-`n` teams.

    `entries` has columns team_id, entry_id, overall. Within a team the highest overall wins
    (a tie goes to the entry listed first after sorting by entry_id); teams are ordered by their best
    overall, ties broken by team_id so the choice is reproducible. The result carries `rank`
    (competition rank among teams) and `tied_at_cutoff` (a team left out has the same score as the
    last finalist: the organizer should decide).
    """
    if n < 1:
        raise ValueError("the number of finalists must be at least 1")
    ordered = entries.sort_values(["team_id", "overall", "entry_id"], ascending=[True, False, True], kind="stable")
    best = ordered.drop_duplicates("team_id").sort_values(["overall", "team_id"], ascending=[False, True], kind="stable")
    best = best.assign(rank=competition_ranks(best["overall"].to_numpy()))
    chosen = best.head(n).copy()
    left_out = best.iloc[n:]
    chosen["tied_at_cutoff"] = bool(len(left_out)) and bool(np.isclose(left_out["overall"].iloc[0], chosen["overall"].iloc[-1]))
    return chosen.reset_index(drop=True)


def holm(pvalues) -> np.ndarray:
    """Holm's step-down adjustment: p_(i) * (m - i + 1), made monotone, capped at 1."""
    p = np.asarray(pvalues, dtype=float)
    m = len(p)
    if m == 0:
        return p
    order = np.argsort(p, kind="stable")
    adjusted = np.minimum(1.0, np.maximum.accumulate(p[order] * (m - np.arange(m))))
    out = np.empty(m)
    out[order] = adjusted
    return out


# ---------------------------------------------------------------------------------------------
# Instance scores and Eq. 1


def instance_score_matrix(ratings: pd.DataFrame, systems, questions, n_instances):
    """Mean rating per (system, question, instance) as an array [S, Q, N] (NaN = not rated),
    and the number of ratings behind each mean. `ratings` has columns system, question, instance, value."""
    s_codes = pd.Index(list(systems)).get_indexer(ratings["system"])
    q_codes = pd.Index(list(questions)).get_indexer(ratings["question"])
    instances = ratings["instance"].to_numpy()
    if (s_codes < 0).any():
        raise ValueError(f"ratings name a system that is not in the campaign: {ratings['system'][s_codes < 0].iloc[0]!r}")
    if (q_codes < 0).any():
        raise ValueError(f"ratings name an unknown question: {ratings['question'][q_codes < 0].iloc[0]!r}")
    if len(instances) and (instances.min() < 0 or instances.max() >= n_instances):
        raise ValueError(f"instance indices must lie in 0..{n_instances - 1}")
    S, Q, N = len(systems), len(questions), n_instances
    key = (s_codes.astype(np.int64) * Q + q_codes) * N + instances
    sums = np.bincount(key, weights=ratings["value"].to_numpy(dtype=float), minlength=S * Q * N)
    counts = np.bincount(key, minlength=S * Q * N)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
    return means.reshape(S, Q, N), counts.reshape(S, Q, N)


@dataclass
class Eq1Columns:
    """Per system and question, over the N test instances: numerator s*f*f~ and the two
    denominators (f~ for precision, f for recall). A system without detection predictions uses the
    plain mean over its rated instances: both denominators are the rated indicator."""

    numerator: np.ndarray  # [S, Q, N]
    precision_denominator: np.ndarray  # [S, Q, N]
    recall_denominator: np.ndarray  # [S, Q, N]
    weighted: np.ndarray  # [S] bool: Eq. 1 applies
    unrated_detected: np.ndarray  # [S, Q] detected knowledge-seeking turns without ratings
    ignored_ratings: np.ndarray  # [S, Q] rated instances outside f*f~ (excluded by Eq. 1)


def eq1_columns(scores: np.ndarray, truth: np.ndarray, predicted: list) -> Eq1Columns:
    S, Q, N = scores.shape
    truth = np.asarray(truth, dtype=bool)
    if truth.shape != (N,):
        raise ValueError(f"truth must have one flag per instance ({N})")
    rated = ~np.isnan(scores)
    filled = np.where(rated, scores, 0.0)
    numerator = np.empty_like(filled)
    dp = np.empty_like(filled)
    dr = np.empty_like(filled)
    weighted = np.zeros(S, dtype=bool)
    unrated = np.zeros((S, Q), dtype=int)
    ignored = np.zeros((S, Q), dtype=int)
    for s, pred in enumerate(predicted):
        if pred is None:
            numerator[s], dp[s], dr[s] = filled[s], rated[s], rated[s]
            continue
        pred = np.asarray(pred, dtype=bool)
        if pred.shape != (N,):
            raise ValueError(f"system {s}: detection predictions must have one flag per instance ({N})")
        weighted[s] = True
        both = truth & pred
        numerator[s] = filled[s] * both
        dp[s] = pred
        dr[s] = truth
        unrated[s] = (both & ~rated[s]).sum(axis=-1)
        ignored[s] = (rated[s] & ~both).sum(axis=-1)
    return Eq1Columns(numerator, dp.astype(float), dr.astype(float), weighted, unrated, ignored)


def _prf(num, dp, dr):
    """S_p, S_r, S_f from sums (any matching shapes); NaN where a denominator is 0."""
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(dp > 0, num / np.where(dp > 0, dp, 1), np.nan)
        r = np.where(dr > 0, num / np.where(dr > 0, dr, 1), np.nan)
        f = np.where(p + r > 0, 2 * p * r / np.where(p + r > 0, p + r, 1), np.where((p == 0) & (r == 0), 0.0, np.nan))
    return p, r, f


def system_scores(cols: Eq1Columns):
    """Point estimates [S, Q] of S_p, S_r, S_f (Eq. 1), the score per question (S_f, which is the
    plain mean for an unweighted system) and the final score [S] = mean over questions."""
    p, r, f = _prf(cols.numerator.sum(-1), cols.precision_denominator.sum(-1), cols.recall_denominator.sum(-1))
    return {"precision": p, "recall": r, "score": f, "final": f.mean(axis=1)}


def bootstrap_scores(cols: Eq1Columns, replicates=DEFAULT_BOOTSTRAP, seed=DEFAULT_SEED, chunk=100):
    """Scores [B, S, Q] and finals [B, S] over `replicates` resamples of the N instances.

    One resample is a vector of counts w (how often each instance was drawn); every sum in Eq. 1
    becomes w @ column, so a chunk of resamples is one matrix product for all systems at once.
    """
    if replicates < 1000:
        raise ValueError("use at least 1000 bootstrap replicates")
    S, Q, N = cols.numerator.shape
    stacked = np.concatenate(
        [cols.numerator.reshape(S * Q, N), cols.precision_denominator.reshape(S * Q, N), cols.recall_denominator.reshape(S * Q, N)]
    ).T  # [N, 3SQ]
    rng = np.random.default_rng(seed)
    out = np.empty((replicates, S, Q))
    for start in range(0, replicates, chunk):
        size = min(chunk, replicates - start)
        draws = rng.integers(0, N, size=(size, N))
        weights = np.bincount((draws + (np.arange(size) * N)[:, None]).ravel(), minlength=size * N).reshape(size, N)
        sums = (weights.astype(float) @ stacked).reshape(size, 3, S, Q)
        out[start:start + size] = _prf(sums[:, 0], sums[:, 1], sums[:, 2])[2]
    return out, out.mean(axis=2)


def percentile_interval(samples: np.ndarray, ci=0.95, axis=0):
    tail = (1 - ci) / 2 * 100
    with np.errstate(invalid="ignore"):
        low, high = np.nanpercentile(samples, [tail, 100 - tail], axis=axis)
    return low, high


def bootstrap_rank_ranges(finals: np.ndarray, ci=0.95):
    """For systems [B, S] of bootstrap finals: competition rank in each replicate, and its
    `ci` interval (lowest and highest rank actually observed within the central mass)."""
    better = (finals[:, None, :] > finals[:, :, None]).sum(axis=2)  # [B, S]: systems strictly better
    ranks = better + 1
    tail = (1 - ci) / 2
    low = np.quantile(ranks, tail, axis=0, method="inverted_cdf")
    high = np.quantile(ranks, 1 - tail, axis=0, method="inverted_cdf")
    return low.astype(int), high.astype(int)


def shared_ranks(ci_low, ci_high) -> np.ndarray:
    """Rank that treats overlapping intervals as ties: 1 + the number of systems whose interval
    lies entirely above this system's interval. Systems with overlapping intervals share ranks."""
    low, high = np.asarray(ci_low), np.asarray(ci_high)
    return 1 + (low[None, :] > high[:, None]).sum(axis=1)


# ---------------------------------------------------------------------------------------------
# Paired significance and rank correlation


def paired_wilcoxon(a: np.ndarray, b: np.ndarray):
    """Wilcoxon signed-rank test on the instances both arrays have (non-NaN). Returns
    (p, n_shared, mean_difference a-b); p = 1 when no difference is nonzero, None when nothing is shared."""
    both = ~np.isnan(a) & ~np.isnan(b)
    n = int(both.sum())
    if n == 0:
        return None, 0, None
    diff = a[both] - b[both]
    mean_diff = float(diff.mean())
    if not np.any(diff != 0):
        return 1.0, n, mean_diff
    result = stats.wilcoxon(diff, zero_method="wilcox", alternative="two-sided")
    return float(result.pvalue), n, mean_diff


def pairwise_tests(per_instance: np.ndarray, labels):
    """All pairs of rows of `per_instance` [S, N] (NaN = not rated), Holm-corrected."""
    rows = []
    for i in range(len(labels)):
        for j in range(i + 1, len(labels)):
            p, n, diff = paired_wilcoxon(per_instance[i], per_instance[j])
            rows.append({"a": labels[i], "b": labels[j], "n_shared": n, "mean_difference": diff, "p": p})
    tested = [k for k, row in enumerate(rows) if row["p"] is not None]
    adjusted = holm([rows[k]["p"] for k in tested])
    for k, value in zip(tested, adjusted):
        rows[k]["p_holm"] = float(value)
    for row in rows:
        row.setdefault("p_holm", None)
        row["significant_0.05"] = row["p_holm"] is not None and row["p_holm"] < 0.05
    return rows


def spearman_by_metric(human: np.ndarray, objective: pd.DataFrame):
    """Spearman's rho between the human final scores and each objective metric (columns of
    `objective`, rows aligned with `human`). Needs 3+ systems with variation on both sides."""
    out = {}
    for metric in objective.columns:
        values = pd.to_numeric(objective[metric], errors="coerce").to_numpy(dtype=float)
        ok = ~np.isnan(values) & ~np.isnan(human)
        if ok.sum() < 3 or np.ptp(values[ok]) == 0 or np.ptp(human[ok]) == 0:
            out[metric] = {"rho": None, "p": None, "n": int(ok.sum()), "reason": "n/a (fewer than 3 systems or no variation)"}
            continue
        result = stats.spearmanr(human[ok], values[ok])
        out[metric] = {"rho": float(result.statistic), "p": float(result.pvalue), "n": int(ok.sum())}
    return out
