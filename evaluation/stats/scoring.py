"""Scores, intervals, ranks and comparisons for the DSTC9 Track 1 human evaluation (PROTOCOLS.md §2).

Pure module: numpy, pandas, scipy; no Django.

Conventions, stated once:
- Every metric is "higher is better" unless it is named in `lower_is_better`.
- Ties get competition ranks ("1224"): equal values share the best rank of their group and the
  next rank skips, e.g. scores 0.9, 0.8, 0.8, 0.7 rank 1, 2, 2, 4. Eq. 2 sums reciprocal ranks as
  exact fractions, so entries with the same ranks in another order tie exactly.
- Only what was rated is scored: Eq. 1 runs over the evaluated instances (the campaign's sample,
  less the instances an entry still needs a rating on). The knowledge-seeking instances that were
  evaluated stand for all of them (weight |seeking| / |evaluated seeking|); instances that are not
  knowledge-seeking need no rating and keep weight 1 (they only count in f~).

One uncertainty story. The statistic that ranks (the final score: the mean over questions of Eq. 1
S_f, or of the plain mean for a row without detection predictions) is the one every uncertainty
figure is computed on, from one set of B paired resamples shared by all systems:
- intervals of each system's score;
- pairwise comparisons: the interval of the difference of two systems' final scores on the same
  resamples, its two-sided bootstrap p-value (significant when p < 1 - ci, i.e. the interval
  leaves out 0), and a Holm-adjusted p over the table for familywise readers;
- tie groups and rank ranges, from the same table read simultaneously (`holm_rank_groups`): a
  comparison counts when its Holm-adjusted p is below 1 - ci, which bounds the chance of any wrong
  "better" in the table by 1 - ci (family-wise); a line is drawn between two rows only where every
  entry above it is significantly better than every entry below it, so groups are contiguous and the
  ranks monotone down the table; an entry's rank range is read from its own rows of the pairwise
  table, 1 + the entries significantly better than it to the entries less those significantly
  worse, so it never holds a place the table rules out. It starts at the group's rank, or below it
  when an entry of its own group is significantly better (a group is not transitive).

Rater-aware intervals: a two-way bootstrap, chosen over a mixed model because it needs no
distributional assumption on 1-5 ratings, reuses the instance resampling the report already does,
and stays a matrix product per chunk (the 1M-rating bench stays fast). A replicate resamples the
instances (counts w_i, as before) and, where rater ids are known, the raters (counts m_r), and the
two deviations from the point estimate are added: the rater part reweights each rater's ratings,
as a ratio (sum m_r T_r / sum m_r C_r) so that drawing a prolific rater twice moves the level, not
the mass. The rater term enters only as much as raters repeat: the instance resamples already
count each rating's noise (its rater's effect included) as if every rating had its own rater, so
the rater deviations are scaled by the share of their variance that comes from one rater's ratings
moving together (`_repeated_share`: 0 with a new rater per rating, about 0.96 with a pool of 5),
instead of counting the rating noise twice. A pairwise difference takes the same share of its own
rater deviations (`_pair_repeated_share`): a pool that rates both systems pulls both scores alike,
the pull cancels in the difference, and what is left of it is the rating noise again; its rater
clusters are the raters of either system. Two corrections make it cover with a small fixed pool
(an in-house team of 5):
- the rater deviations are scaled by sqrt(R / (R - 1)), the bootstrap's small-sample bias of a
  variance over R clusters;
- the interval of every statistic (a score, or a pairwise difference) is the percentile interval
  of its deviations widened by t_{df} / z, with Welch-Satterthwaite degrees of freedom from its
  instance and rater variance parts, and R - 1 when the rater part dominates: with 5 raters such
  a score has 4 degrees of freedom, and a normal quantile would cover about 88%.
Without rater ids (imported positional lists) the rater part is zero and this is exactly the
instance bootstrap. Rank ranges use the two-way replicates unwidened.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from fractions import Fraction

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
    # Exact fractions: floating-point sums of 1/rank depend on the order of the terms, so (1,1,1,3)
    # and (3,1,1,1) would differ in the last bit and be ranked 1 and 2 instead of tied.
    total = [Fraction(0)] * len(scores)
    for metric in metrics:
        column = pd.to_numeric(scores[metric], errors="coerce")
        if column.isna().any():
            raise ValueError(f"metric {metric!r} has no value for entry {column[column.isna()].index[0]!r}")
        ranks = competition_ranks(column.to_numpy(), higher_is_better=metric not in lower_is_better)
        total = [t + Fraction(1, int(r)) for t, r in zip(total, ranks, strict=False)]
    return pd.Series([float(t / len(metrics)) for t in total], index=scores.index, name="overall", dtype=float)


def complete_rows(scores: pd.DataFrame, metrics) -> tuple[pd.DataFrame, list]:
    """The rows of `scores` that have a number for every metric, and the labels of the others
    (left out of Eq. 2, with a warning by the caller, instead of refusing the whole ranking)."""
    metrics = [m for m in metrics if m in scores.columns]
    values = scores[metrics].apply(pd.to_numeric, errors="coerce") if metrics else scores.iloc[:, :0]
    missing = values.isna().any(axis=1)
    return scores[~missing], list(scores.index[missing])


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
    denominators (f~ for precision, f for recall), each times the instance's weight (0 for an
    instance not evaluated). A system without detection predictions uses the plain mean over its
    rated instances: both denominators are the rated indicator."""

    numerator: np.ndarray  # [S, Q, N]
    precision_denominator: np.ndarray  # [S, Q, N]
    recall_denominator: np.ndarray  # [S, Q, N]
    weighted: np.ndarray  # [S] bool: Eq. 1 applies
    unrated_detected: np.ndarray  # [S, Q] evaluated instances that need a rating and have none yet
    ignored_ratings: np.ndarray  # [S, Q] rated instances outside f*f~ (excluded by Eq. 1)
    score_weight: np.ndarray  # [S, Q, N]: numerator = instance score * score_weight (rater bootstrap)


def eq1_columns(scores: np.ndarray, truth: np.ndarray, predicted: list, evaluated=None) -> Eq1Columns:
    """Eq. 1's columns over the evaluated instances.

    `evaluated` [N] bool marks the instances the campaign set out to rate (its sample); None means
    all. For each system, an evaluated instance that needs a rating (f*f~ = 1) and has none yet is
    left out rather than counted as 0, and the knowledge-seeking instances that remain are
    weighted up to stand for all knowledge-seeking instances (the rated detected ones for all the
    detected ones, `_seeking_weights`), so a sampled or unfinished campaign is not deflated. With every instance evaluated and rated all weights are 1 (Eq. 1 as published).
    """
    S, Q, N = scores.shape
    truth = np.asarray(truth, dtype=bool)
    if truth.shape != (N,):
        raise ValueError(f"truth must have one flag per instance ({N})")
    evaluated = np.ones(N, dtype=bool) if evaluated is None else np.asarray(evaluated, dtype=bool)
    if evaluated.shape != (N,):
        raise ValueError(f"evaluated must have one flag per instance ({N})")
    rated = ~np.isnan(scores)
    filled = np.where(rated, scores, 0.0)
    numerator = np.zeros_like(filled)
    dp = np.zeros_like(filled)
    dr = np.zeros_like(filled)
    factor = np.zeros_like(filled)
    weighted = np.zeros(S, dtype=bool)
    unrated = np.zeros((S, Q), dtype=int)
    ignored = np.zeros((S, Q), dtype=int)
    n_seeking = truth.sum()
    for s, pred in enumerate(predicted):
        if pred is None:
            factor[s] = rated[s]
            numerator[s], dp[s], dr[s] = filled[s], rated[s], rated[s]
            continue
        pred = np.asarray(pred, dtype=bool)
        if pred.shape != (N,):
            raise ValueError(f"system {s}: detection predictions must have one flag per instance ({N})")
        weighted[s] = True
        both = truth & pred
        for q in range(Q):
            missing = both & evaluated & ~rated[s, q]
            unrated[s, q] = missing.sum()
            ignored[s, q] = (rated[s, q] & ~both).sum()
            if not rated[s, q].any():
                continue  # never rated: all columns stay 0, so the score is "not rated" (NaN), not 0
            weight = np.where(truth, _seeking_weights(truth & evaluated, both, missing, n_seeking), 1.0)
            factor[s, q] = both * weight
            numerator[s, q] = filled[s, q] * factor[s, q]
            dp[s, q] = pred * weight
            dr[s, q] = truth * weight
    return Eq1Columns(numerator, dp, dr, weighted, unrated, ignored, factor)


def _seeking_weights(sampled, both, missing, n_seeking):
    """Weights [N] of the knowledge-seeking instances kept for one system and question.

    The sampled seeking instances stand for all `n_seeking`. Only those the system detected need a
    rating, so only they can be missing; the rated ones stand for their whole stratum (missing at
    random within it). Scaling the kept instances as one block instead would over-represent the
    undetected ones, which need no rating, and deflate an unfinished campaign's score."""
    if not sampled.any():
        return np.zeros_like(sampled, dtype=float)
    detected = sampled & both
    rated = detected & ~missing
    stratum = np.where(detected, detected.sum() / rated.sum() if rated.any() else 0.0, 1.0)
    return (sampled & ~missing) * stratum * (n_seeking / sampled.sum())


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


def _stacked(cols: Eq1Columns):
    S, Q, N = cols.numerator.shape
    return np.concatenate(
        [cols.numerator.reshape(S * Q, N), cols.precision_denominator.reshape(S * Q, N), cols.recall_denominator.reshape(S * Q, N)]
    ).T  # [N, 3SQ]


def bootstrap_scores(cols: Eq1Columns, replicates=DEFAULT_BOOTSTRAP, seed=DEFAULT_SEED, chunk=100):
    """Scores [B, S, Q] and finals [B, S] over `replicates` resamples of the N instances.

    One resample is a vector of counts w (how often each instance was drawn); every sum in Eq. 1
    becomes w @ column, so a chunk of resamples is one matrix product for all systems at once.
    """
    if replicates < 1000:
        raise ValueError("use at least 1000 bootstrap replicates")
    S, Q, N = cols.numerator.shape
    stacked = _stacked(cols)
    rng = np.random.default_rng(seed)
    out = np.empty((replicates, S, Q))
    for start in range(0, replicates, chunk):
        size = min(chunk, replicates - start)
        draws = rng.integers(0, N, size=(size, N))
        weights = np.bincount((draws + (np.arange(size) * N)[:, None]).ravel(), minlength=size * N).reshape(size, N)
        sums = (weights.astype(float) @ stacked).reshape(size, 3, S, Q)
        out[start:start + size] = _prf(sums[:, 0], sums[:, 1], sums[:, 2])[2]
    return out, out.mean(axis=2)


def rater_totals(ratings: pd.DataFrame, cols: Eq1Columns, counts: np.ndarray, systems, questions):
    """Per (system, question, rater): T = sum of the rater's ratings' shares of the Eq. 1 numerator
    and C = the same with every rating 1 (so sum_r T = numerator, sum_r C = its weight), and the
    rater labels; then per (system, question) the repeated share (`_repeated_share`), the
    per-rating term (`_per_rating`) and the level L = sum T / sum C they are measured from. A
    rating's share of an instance is 1/k for the k ratings of that instance."""
    S, Q, N = cols.numerator.shape
    s_codes = pd.Index(list(systems)).get_indexer(ratings["system"]).astype(np.int64)
    q_codes = pd.Index(list(questions)).get_indexer(ratings["question"]).astype(np.int64)
    i = ratings["instance"].to_numpy(dtype=np.int64)
    r_codes, raters = pd.factorize(ratings["rater"])
    R = len(raters)
    cell = (s_codes * Q + q_codes) * N + i
    share = cols.score_weight.ravel()[cell] / counts.ravel()[cell]
    key = (s_codes * Q + q_codes) * R + r_codes
    values = ratings["value"].to_numpy(dtype=float)
    T = np.bincount(key, weights=share * values, minlength=S * Q * R).reshape(S, Q, R)
    C = np.bincount(key, weights=share, minlength=S * Q * R).reshape(S, Q, R)
    with np.errstate(invalid="ignore", divide="ignore"):
        level = T.sum(-1) / C.sum(-1)  # [S, Q]: L, what every rater's pull is measured from
    per_rating = _per_rating(level, s_codes * Q + q_codes, share, values)
    return T, C, list(raters), _repeated_share(T, C, level, per_rating), per_rating, level


def _per_rating(level, column, share, values) -> np.ndarray:
    """[S, Q]: sum over ratings of (share * (value - level))^2, the rater resamples' variance as it
    would be were every rating its own rater (up to the (sum C)^2 both variances share)."""
    S, Q = level.shape
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.bincount(column, weights=(share * (values - level.ravel()[column])) ** 2, minlength=S * Q).reshape(S, Q)


def _repeated_share(T, C, level, per_rating) -> np.ndarray:
    """[S, Q]: the share of the rater resamples' variance that comes from raters repeating.

    The instance resamples already count every rating's own noise, the rater's effect included,
    as if each rating had its own rater. What they miss is that one rater's ratings move together:
    the cross terms sum_{k != l of rater r} w_k w_l sigma_r^2. Linearised, the rater resamples'
    variance of a level sum T / sum C is V_R = sum_r (T_r - L C_r)^2 / (sum C)^2 and the same with
    every rating its own rater is V_1 = sum_k (t_k - L c_k)^2 / (sum C)^2 (`_per_rating`); their
    difference is the cross terms. So the rater deviations are scaled by sqrt(1 - V_1 / V_R): 0 when
    every rating has a new rater (the rating noise is not counted twice), near 1 for a small fixed pool."""
    with np.errstate(invalid="ignore", divide="ignore"):
        per_rater = ((T - level[..., None] * C) ** 2).sum(-1)
        ratio = np.where(per_rater > 0, 1 - per_rating / np.where(per_rater > 0, per_rater, 1), 0.0)
    return np.sqrt(np.clip(np.nan_to_num(ratio), 0.0, 1.0))


def _pair_repeated_share(T, C, level, per_rating, score) -> np.ndarray:
    """[Q, S, S]: `_repeated_share` of each pair's difference of scores.

    A rater who rates both systems pulls both scores the same way, and the difference cancels the
    pull: with a shared pool of 5 the rater resamples of a difference hold mostly rating noise the
    instance resamples already count, and scaling them by each system's own share (near 1) made the
    differences' intervals about 1.4 times too wide (p < 0.05 in 1% of null pairs, not 5%). Here the
    same ratio is taken of the difference (`pair_rater_terms`), with g = score / level (1 for a
    mean, Eq. 1's 2 sum C / (d_p + d_r))."""
    with np.errstate(invalid="ignore", divide="ignore"):
        gain = np.nan_to_num(np.where(level != 0, score / level, 0.0))
        weight = gain / C.sum(-1)  # [S, Q]
    # Questions lead: the terms are per question, over the systems.
    pair_rater, pair_rating = pair_rater_terms(T.transpose(1, 0, 2), C.transpose(1, 0, 2), level.T, weight.T, per_rating.T)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(pair_rater > 0, 1 - pair_rating / np.where(pair_rater > 0, pair_rater, 1), 0.0)
    return np.sqrt(np.clip(ratio, 0.0, 1.0))


def pair_rater_terms(T, C, level, weight, per_rating) -> tuple[np.ndarray, np.ndarray]:
    """([..., S, S] V_R, [..., S, S] V_1): the rater resamples' variance of each pair's difference of
    scores, linearised, and the same with every rating its own rater, over any leading axes (the
    questions of a leaderboard, `_pair_repeated_share`; simulated campaigns, `report_power`).
    Rater r's pull on score s is weight_s (T_sr - L_s C_sr) (weight = g / sum C, g the score's
    gain over its level); V_R sums the squared differences of the two pulls over raters, V_1 the two
    systems' own per-rating terms weight^2 `per_rating` (their ratings are different ratings).
    `T`, `C` [..., S, R]; `level`, `weight`, `per_rating` [..., S]."""
    with np.errstate(invalid="ignore", divide="ignore"):
        pull = np.nan_to_num((T - level[..., None] * C) * weight[..., None])  # [..., S, R]
        own = np.nan_to_num(per_rating * weight**2)  # [..., S]
    return pair_variances(pull @ np.swapaxes(pull, -1, -2)), own[..., :, None] + own[..., None, :]


def pair_variances(gram):
    """[..., S, S] var(a - b) = G_aa + G_bb - 2 G_ab from the Gram matrix of the influences."""
    diag = np.diagonal(gram, axis1=-2, axis2=-1)
    return diag[..., :, None] + diag[..., None, :] - 2 * gram


def rater_bootstrap(cols: Eq1Columns, T: np.ndarray, C: np.ndarray, replicates=DEFAULT_BOOTSTRAP, seed=DEFAULT_SEED):
    """Scores [B, S, Q] with the instances fixed and the R raters resampled (counts m_r): the
    numerator becomes (m @ T / m @ C) * sum C, a ratio, so the level moves with who was drawn and
    the mass stays. Cheap: a [SQ, R] x [R, B] product."""
    S, Q, R = T.shape
    rng = np.random.default_rng(seed)
    m = _resample_counts(rng, replicates, R, dtype=float)  # [B, R]
    # T and C side by side: one pass over m (the same sums as two products).
    sums = m @ np.concatenate([T.reshape(S * Q, R), C.reshape(S * Q, R)]).T  # [B, 2SQ]
    with np.errstate(invalid="ignore", divide="ignore"):
        level = sums[:, :S * Q] / sums[:, S * Q:]  # [B, SQ]
    numerator = (level * C.reshape(S * Q, R).sum(axis=1)).reshape(replicates, S, Q)
    dp = cols.precision_denominator.sum(-1)
    dr = cols.recall_denominator.sum(-1)
    return _prf(numerator, dp[None], dr[None])[2]


def _resample_counts(rng, replicates: int, n: int, chunk=100, dtype=np.int64) -> np.ndarray:
    """[replicates, n]: how often each of n items was drawn in each resample of n with replacement.
    Drawn a chunk of resamples at a time (the generator's stream is the same as one by one), and
    written as `dtype` a chunk at a time (a float product then needs no second copy of them all)."""
    counts = np.empty((replicates, n), dtype=dtype)
    for start in range(0, replicates, chunk):
        size = min(chunk, replicates - start)
        draws = rng.integers(0, n, size=(size, n))
        draws += (np.arange(size) * n)[:, None]
        counts[start:start + size] = np.bincount(draws.ravel(), minlength=size * n).reshape(size, n)
    return counts


@dataclass
class Uncertainty:
    """Paired deviations from the point estimates, [B, ...]: `instance` from resampling instances,
    `rater` from resampling raters (already scaled by sqrt(R/(R-1)); zero without rater ids), and
    the sizes behind each (instances and raters per system), for the degrees of freedom."""

    instance: np.ndarray
    rater: np.ndarray
    n_instances: np.ndarray
    n_raters: np.ndarray
    # Where raters were resampled for a final score: each question's rater deviations before a
    # system's own share is applied [B, S, Q], and each pair's share [Q, S, S]
    # (`_pair_repeated_share`), from which a difference takes its rater part.
    rater_by_question: np.ndarray | None = None
    pair_share: np.ndarray | None = None
    # [S, S]: the raters who rated either system of a pair, the clusters its difference's rater
    # part comes from (a pair rated by two disjoint pools of 5 has 10, not 5).
    pair_raters: np.ndarray | None = None

    @property
    def combined(self):
        return self.instance + self.rater

    def difference_rater(self, i, j) -> np.ndarray:
        """[B, P]: the rater part of the deviations of score i[k] - score j[k], each pair k of the
        index arrays `i` and `j`."""
        if self.rater_by_question is None or self.pair_share is None:
            return self.rater[:, i] - self.rater[:, j]
        raw = self.rater_by_question[:, i, :] - self.rater_by_question[:, j, :]  # [B, P, Q]
        share = np.ascontiguousarray(self.pair_share[:, i, j].T)  # [P, Q]
        return (raw * share[None]).mean(axis=-1)

    def difference_raters(self, i, j) -> np.ndarray:
        """[P]: the rater clusters behind each difference score i[k] - score j[k]."""
        if self.pair_raters is None:
            return np.minimum(self.n_raters[i], self.n_raters[j]).astype(int)
        return self.pair_raters[i, j].astype(int)

    def columns(self, keep) -> Uncertainty:
        """The same uncertainty for the systems `keep` (indices, in that order)."""
        keep = np.asarray(keep, dtype=int)
        return Uncertainty(
            self.instance[:, keep], self.rater[:, keep], self.n_instances[keep], self.n_raters[keep],
            None if self.rater_by_question is None else self.rater_by_question[:, keep],
            None if self.pair_share is None else self.pair_share[:, keep][:, :, keep],
            None if self.pair_raters is None else self.pair_raters[keep][:, keep],
        )


def small_pool_factor(n_raters: int) -> float:
    """sqrt(R/(R-1)): the bootstrap over R clusters underestimates their variance by (R-1)/R."""
    return float(np.sqrt(n_raters / (n_raters - 1))) if n_raters > 1 else 0.0


def widening(instance_dev, rater_dev, n_instances, n_raters, ci=0.95):
    """t_{df}/z per column, df by Welch-Satterthwaite from the instance and rater variances."""
    with warnings.catch_warnings():  # a row that was never rated has only NaN replicates: NaN, quietly
        warnings.simplefilter("ignore", RuntimeWarning)
        vi = np.nanvar(instance_dev, axis=0)
        vr = np.nanvar(rater_dev, axis=0)
    return variance_widening(vi, vr, n_instances, n_raters, ci)


def variance_widening(vi, vr, n_instances, n_raters, ci=0.95):
    """`widening` from the instance and rater variances themselves (any matching shapes)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        denominator = vi**2 / np.maximum(n_instances - 1, 1) + np.where(n_raters > 1, vr**2 / np.maximum(n_raters - 1, 1), 0.0)
        df = np.where(denominator > 0, (vi + vr) ** 2 / np.where(denominator > 0, denominator, 1), np.inf)
        # Satterthwaite plugs in the estimated rater variance; when a few raters happen to agree it
        # overstates df. Where the rater part dominates, keep the df of its own estimate, R - 1
        # (tests/evaluation/test_coverage.py checks the coverage this gives with a small pool).
        rater_dominated = (n_raters > 1) & (vr > vi)
        df = np.where(rater_dominated, np.minimum(df, np.maximum(n_raters - 1, 1)), df)
    z = stats.norm.ppf(0.5 + ci / 2)
    return np.where(np.isfinite(df), stats.t.ppf(0.5 + ci / 2, np.where(np.isfinite(df), np.maximum(df, 1), 1)) / z, 1.0), df


def interval(point, instance_dev, rater_dev, n_instances, n_raters, ci=0.95):
    """Percentile interval of point + deviations, widened by t_df/z (see the module docstring)."""
    kappa, df = widening(instance_dev, rater_dev, n_instances, n_raters, ci)
    low, high = percentile_interval(instance_dev + rater_dev, ci)
    return point + kappa * low, point + kappa * high, kappa, df


def paired_uncertainty(ratings, cols: Eq1Columns, counts, point, systems, questions, replicates=DEFAULT_BOOTSTRAP, seed=DEFAULT_SEED, raters_known=True):
    """The two-way resamples of every system at once: (per question, final) `Uncertainty`, the
    deviations of the replicates from `point` (system_scores). Raters are resampled only when
    their ids are known; the rater resamples use their own stream derived from `seed`."""
    boot, boot_final = bootstrap_scores(cols, replicates, seed)
    dev_q = boot - point["score"][None]
    dev_f = boot_final - point["final"][None]
    n_inst_q = (cols.score_weight > 0).sum(-1)
    n_inst_f = n_inst_q.min(axis=1) if n_inst_q.size else np.zeros(len(systems), int)
    rater_q = np.zeros_like(dev_q)
    rater_f = np.zeros_like(dev_f)
    n_rat_q = np.zeros(n_inst_q.shape, dtype=int)
    n_rat_f = np.zeros(len(systems), dtype=int)
    if raters_known and len(ratings) and ratings["rater"].nunique() > 1:
        T, C, raters, repeated, per_rating, level = rater_totals(ratings, cols, counts, systems, questions)
        factor = small_pool_factor(len(raters))
        rboot = rater_bootstrap(cols, T, C, replicates, np.random.SeedSequence([seed, 1]).generate_state(1)[0])
        raw = factor * (rboot - point["score"][None])
        rater_q = repeated[None] * raw
        rater_f = rater_q.mean(axis=2)
        n_rat_q = (C > 0).sum(-1)
        n_rat_f = (C > 0).any(axis=1).sum(-1)
        pair_share = _pair_repeated_share(T, C, level, per_rating, point["score"])
        rated_by = (C > 0).any(axis=1).astype(int)  # [S, R]
        pair_raters = rated_by.sum(-1)[:, None] + rated_by.sum(-1)[None, :] - rated_by @ rated_by.T
        return (Uncertainty(dev_q, rater_q, n_inst_q, n_rat_q),
                Uncertainty(dev_f, rater_f, n_inst_f, n_rat_f, raw, pair_share, pair_raters))
    return Uncertainty(dev_q, rater_q, n_inst_q, n_rat_q), Uncertainty(dev_f, rater_f, n_inst_f, n_rat_f)


def percentile_interval(samples: np.ndarray, ci=0.95, axis=0):
    tail = (1 - ci) / 2 * 100
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        # The same percentiles either way; nanpercentile goes a column at a time in Python.
        samples = np.asarray(samples)
        quantiles = np.percentile if samples.size and not np.isnan(samples).any() else np.nanpercentile
        low, high = quantiles(samples, [tail, 100 - tail], axis=axis)
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


#: Below this many instances rated for both systems a pair's bootstrap says too little: with 2 the
#: resamples take 3 values, often all equal, and the t_1-widened interval, however wide, holds the
#: true difference in 78% of simulated campaigns; 88% with 3 or 4, 92.5% with 5, 91-96% beyond
#: (400 campaigns each, a new rater per rating; `tests/evaluation/test_scales.py`). Such a pair gets
#: the whole possible range and no p-value, the rule the correlations follow (MIN_CORRELATION_POINTS).
MIN_PAIR_INSTANCES = 5


#: Fewer replicates than this beyond 0 and the bootstrap's own share no longer measures the tail:
#: the p-value is then the normal tail at the estimate's distance from 0 in bootstrap standard errors.
MIN_TAIL_REPLICATES = 10


def bootstrap_p(replicates: np.ndarray, estimate: float) -> float | None:
    """Two-sided p of "no difference" from a difference's bootstrap replicates.

    Where at least MIN_TAIL_REPLICATES replicates lie on the far side of 0, it is their share,
    doubled: the bootstrap's own answer, so p < alpha exactly when the percentile interval leaves
    0 out. Beyond that B replicates cannot resolve it: a share of 0 (35 of DSTC9's 55 pairs at
    B = 1,000) would make Holm's adjustment multiply zero and call a pair better on no evidence.
    There the tail is estimated as 2 * Phi(-|estimate| / SE), SE the replicates' standard
    deviation, never below the share counted and capped at the smallest share the bootstrap could
    have counted (2 * 10 / B), so p never rises as the evidence grows."""
    replicates = replicates[~np.isnan(replicates)]
    if not len(replicates):
        return None
    beyond = min(int((replicates <= 0).sum()), int((replicates >= 0).sum()))
    if beyond >= MIN_TAIL_REPLICATES:
        return float(min(1.0, 2 * beyond / len(replicates)))
    counted = 2 * beyond / len(replicates)
    cap = 2 * MIN_TAIL_REPLICATES / len(replicates)
    se = float(np.std(replicates, ddof=1)) if len(replicates) > 1 else 0.0
    if se <= 0:  # every resample the same non-zero difference: no spread to measure, the interval excludes 0
        return float(counted)
    # Never below what was counted: a few replicates beyond 0 are evidence the normal tail may miss
    # (a skewed or heavy-tailed bootstrap, as Bradley-Terry's on few votes).
    return float(min(cap, max(counted, 2 * stats.norm.sf(abs(estimate) / se))))


def bootstrap_ps(replicates: np.ndarray, estimates) -> list[float | None]:
    """`bootstrap_p` of each column of `replicates` [B, P] against its estimate [P]: the columns
    without NaN in one pass (laid out a column to a contiguous run, so each spread is summed as
    for that column alone), a column with NaN on its own."""
    replicates = np.asfortranarray(replicates, dtype=float)
    estimates = np.asarray(estimates, dtype=float)
    B = replicates.shape[0]
    if B < 2:
        return [bootstrap_p(replicates[:, k], float(estimates[k])) for k in range(replicates.shape[1])]
    has_nan = np.isnan(replicates).any(axis=0)
    beyond = np.minimum((replicates <= 0).sum(axis=0), (replicates >= 0).sum(axis=0))
    se = np.std(replicates, axis=0, ddof=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        tail = 2 * stats.norm.sf(np.abs(estimates) / se)
    cap = 2 * MIN_TAIL_REPLICATES / B
    out: list[float | None] = []
    for k in range(replicates.shape[1]):
        if has_nan[k]:
            out.append(bootstrap_p(replicates[:, k], float(estimates[k])))
            continue
        counted = 2 * int(beyond[k]) / B
        if beyond[k] >= MIN_TAIL_REPLICATES:
            out.append(float(min(1.0, counted)))
        elif se[k] <= 0:
            out.append(float(counted))
        else:
            out.append(float(min(cap, max(counted, tail[k]))))
    return out


def possible_difference(bounds, i, j) -> tuple[float, float]:
    """The range a - b can take when each score lies within its row's (low, high) bounds."""
    low, high = bounds
    return float(low[i] - high[j]), float(high[i] - low[j])


def pairwise_differences(point, unc: Uncertainty, labels, ci=0.95, bounds=None):
    """Every pair (a above b in `labels` order) compared on the ranked statistic: difference a - b,
    its widened interval from the paired resamples, the two-sided bootstrap p-value (`bootstrap_p`
    of the widened replicates; `significant`: unadjusted, p < 1 - ci), and
    Holm's p over the table (`significant_holm`). `better` follows `significant_holm`, the decision
    the tie groups read (`holm_rank_groups`), so it never names a pair the groups keep together.

    `bounds`: (low [S], high [S]) of each row's possible score (the scale), or None. With them a
    difference's interval is clipped to what the two scores allow, [low_a - high_b, high_a - low_b]
    (`ci_clipped` says so: a percentile interval widened by t_df/z with few degrees of freedom can
    pass it), and a pair rated on both sides on fewer than MIN_PAIR_INSTANCES instances gets that
    whole range and no p-value (`too_few`). The possible range always holds 0, so clipping never
    changes a p-value or a verdict."""
    rows = _pair_rows(np.asarray(point, dtype=float), unc, labels, ci, bounds)
    alpha = 1 - ci
    tested = [k for k, row in enumerate(rows) if row["p"] is not None]
    for k, value in zip(tested, holm([rows[k]["p"] for k in tested]), strict=False):
        rows[k]["p_holm"] = float(value)
    for row in rows:
        row.setdefault("p_holm", None)
        row["significant"] = row["p"] is not None and row["p"] < alpha
        row["significant_holm"] = row["p_holm"] is not None and row["p_holm"] < alpha
        # "Better" is the tie groups' decision (Holm over the table), never the unadjusted p alone:
        # a pair the groups keep together is not called better on the same page.
        row["better"] = (row["a"] if row["difference"] > 0 else row["b"]) if row["significant_holm"] else None
    return rows


def _pair_rows(point, unc: Uncertainty, labels, ci, bounds) -> list[dict]:
    """One row per pair (i < j, i first), every pair's interval and p from one pass over [B, P]
    deviations. The deviations are laid out a pair to a contiguous column (Fortran order), so each
    column's variance, percentiles and spread are summed exactly as for that pair alone."""
    i, j = np.triu_indices(len(labels), k=1)
    if not len(i):
        return []
    d_inst = np.asfortranarray(unc.instance[:, i] - unc.instance[:, j])
    d_rater = np.asfortranarray(unc.difference_rater(i, j))
    diff = point[i] - point[j]
    n_inst = np.minimum(unc.n_instances[i], unc.n_instances[j])
    low, high, kappa, _ = interval(diff, d_inst, d_rater, n_inst, unc.difference_raters(i, j), ci)
    p_values = bootstrap_ps(diff + kappa * (d_inst + d_rater), diff)
    rows = []
    for k in range(len(i)):
        row = {"a": labels[i[k]], "b": labels[j[k]], "difference": float(diff[k]), "ci_low": float(low[k]), "ci_high": float(high[k]),
               "p": p_values[k], "ci_clipped": False, "too_few": False}
        if bounds is not None:
            floor, ceiling = possible_difference(bounds, i[k], j[k])
            if n_inst[k] < MIN_PAIR_INSTANCES:
                row = {**row, "ci_low": floor, "ci_high": ceiling, "p": None, "ci_clipped": True, "too_few": True}
            else:
                clipped = row["ci_low"] < floor or row["ci_high"] > ceiling
                row = {**row, "ci_low": max(row["ci_low"], floor), "ci_high": min(row["ci_high"], ceiling), "ci_clipped": clipped}
        rows.append(row)
    return rows


@dataclass
class RankGroups:
    """What simultaneous pairwise comparisons say about ranks (entries best first)."""
    rank: list[int]  # the first place of the entry's tie group
    rank_low: list[int]  # 1 + entries significantly better than it (Holm); never above `rank`
    rank_high: list[int]  # entries minus those significantly worse than it (Holm)


def tie_group_rule(ci=0.95) -> str:
    """The one sentence every page and export shows on how groups are made."""
    return (
        f"Rows share a rank (a tie group) unless a line separates them; a line is drawn only where every entry above it is "
        f"significantly better than every entry below it, by paired comparisons Holm-adjusted over the whole table "
        f"(family-wise error at most {1 - ci:.0%}); two rows of one group can still differ (the pairwise table's 'Better (Holm)'), "
        f"and the lower one's rank range then starts after the group's rank"
    )


def rank_range_rule(ci=0.95) -> str:
    return (
        f"places the entry's own rows of the pairwise table allow (Holm-adjusted, family-wise {ci:.0%}): from 1 plus the number "
        f"of entries significantly better than it to the number of entries less those significantly worse than it"
    )


def holm_rank_groups(labels_in_order, pairwise_rows) -> RankGroups:
    """Tie groups and rank ranges from the Holm-adjusted paired comparisons (`significant_holm`).

    A line is drawn between two neighbouring rows only where every entry above it is significantly
    better than every entry below it. A line between two truly equal entries therefore needs their
    own comparison rejected, which Holm allows with probability at most 1 - ci over the whole
    table, so equal entries are split in at most that share of campaigns. An entry's rank is its
    group's first place; its range is what its own rows of the table allow: from 1 + the entries
    significantly better than it to the number of entries less those significantly worse than it.
    Whenever every Holm rejection is right (probability >= ci) each entry's true rank lies in its
    range, all rows at once. The range never starts above the group's rank (every entry above the
    group's line beats it) and starts below it when an entry of the same group is significantly
    better: a range from the group's place would hold places the table beside it rules out.
    """
    labels = list(labels_in_order)
    position = {label: k for k, label in enumerate(labels)}
    n = len(labels)
    beats = np.zeros((n, n), dtype=bool)  # beats[i, j]: i significantly better than j (Holm)
    for row in pairwise_rows:
        if not row.get("significant_holm") or row["a"] not in position or row["b"] not in position:
            continue
        winner, loser = (row["a"], row["b"]) if row["difference"] > 0 else (row["b"], row["a"])
        beats[position[winner], position[loser]] = True
    ranks, start = [], 0
    for k in range(n):
        if k > start and beats[:k, k:].all():
            start = k
        ranks.append(start + 1)
    lows = [1 + int(beats[:, k].sum()) for k in range(n)]
    highs = [n - int(beats[k].sum()) for k in range(n)]
    return RankGroups(rank=ranks, rank_low=lows, rank_high=highs)


# ---------------------------------------------------------------------------------------------
# Paired significance and rank correlation


#: Below this many points a correlation's p-value says nothing an organizer should act on (with 3
#: points Spearman's rho is +-1 with p = 0 as often as not): it is shown as "too few".
MIN_CORRELATION_POINTS = 5


def spearman_by_metric(human: np.ndarray, objective: pd.DataFrame):
    """Spearman's rho between the human final scores and each objective metric (columns of
    `objective`, rows aligned with `human`). Needs 3+ systems with variation on both sides for rho,
    and MIN_CORRELATION_POINTS for a p-value (fewer: `too_few`, p None)."""
    out: dict[str, dict] = {}
    for metric in objective.columns:
        values = pd.to_numeric(objective[metric], errors="coerce").to_numpy(dtype=float)
        ok = ~np.isnan(values) & ~np.isnan(human)
        n = int(ok.sum())
        too_few = n < MIN_CORRELATION_POINTS
        if n < 3 or np.ptp(values[ok]) == 0 or np.ptp(human[ok]) == 0:
            out[metric] = {"rho": None, "p": None, "n": n, "too_few": too_few, "reason": "n/a (fewer than 3 systems or no variation)"}
            continue
        result = stats.spearmanr(human[ok], values[ok])
        out[metric] = {"rho": float(result.statistic), "p": None if too_few else float(result.pvalue), "n": n, "too_few": too_few}
    return out
