"""Power as the report judges it: simulated campaigns scored by the report's own pairwise verdict.
Pure module: numpy, scipy and the pure `scoring` module; no Django.

`power.simulated_power` answers "does a paired t-test on plain means separate the pair?"; the
leaderboard answers something else: it scores each system with the ranked statistic (Eq. 1 where
detection applies, else the mean), compares pairs with the rater-aware two-way bootstrap
(`scoring.paired_uncertainty`, the rater term scaled to what raters repeating adds), and draws a
line between two rows only where the Holm-adjusted comparisons over the whole table allow it
(`scoring.holm_rank_groups`). A planned pair counts as separated here exactly when that rule puts
the truly better system in a better tie group. The bootstrap is replaced by its linearisation
(`linear_verdicts`: the same variances, without the B resamples), so every campaign of a size is
scored at once as arrays.

Each simulated campaign draws ratings from the fitted model (`power` module docstring) for every
system the pilot rated (the Holm family is the whole table), at the pilot's means:
- a crowd: every rating from a new rater, whose leniency is one more draw of rating noise;
- a pool of P raters (the pilot's raters repeat): P leniencies drawn once per campaign, each item's
  m raters drawn from the pool without replacement, so a rater's leniency is shared across
  instances as in the campaign the pool will rate.
With `Detection` (the test set's labels and the entries' detection predictions, which a pilot
campaign knows) each campaign samples n knowledge-seeking instances, rates a system only where it
detected one, and is scored by Eq. 1 with detection resampled as the leaderboard resamples it;
without, plain means.

The size is searched from the t-test's size: power(n) of a pair is close to
Phi(c * sqrt(n) - z) for some c, so each simulated point gives the n its c predicts for the target;
a few such steps, each seeded by (seed, n, m), land on the smallest n reached.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from scipy import stats

from evaluation.stats import scoring

DEFAULT_CAMPAIGNS = 1000  # campaigns per size: the power at a size has SE 0.013 at 0.8
MAX_STEPS = 4


class Components(Protocol):
    """The variances of the rating model (`power.Components`)."""

    instance: float
    system_instance: float
    rater: float
    residual: float


@dataclass(frozen=True)
class Raters:
    """Who rates: a crowd (`pool` None, a new rater for every rating) or a pool of `pool` raters."""

    pool: int | None = None

    def describe(self) -> str:
        return "a crowd (a new rater for every rating)" if self.pool is None else f"a pool of {self.pool} raters who rate many instances each"


@dataclass(frozen=True)
class Detection:
    """Eq. 1's inputs besides the ratings, as the leaderboard reads them (`scoring.eq1_columns`): the
    test set's knowledge-seeking labels and each system's detection predictions over it (None: a
    system without predictions, ranked by its plain mean). A campaign rates a sample of the
    knowledge-seeking instances, each system only where it also detected one."""

    truth: np.ndarray  # [N] bool
    predicted: dict  # label -> [N] bool, or None

    @property
    def seeking(self) -> int:
        return int(np.asarray(self.truth, dtype=bool).sum())

    def applies(self, labels) -> bool:
        return any(self.predicted.get(label) is not None for label in labels)

    def factor(self, label) -> float:
        """S_f / mean rating at the true means: 2 TP / (P + T), detection's F1 (1 without predictions)."""
        pred = self.predicted.get(label)
        if pred is None:
            return 1.0
        truth, pred = np.asarray(self.truth, dtype=bool), np.asarray(pred, dtype=bool)
        return float(2 * (truth & pred).sum() / max(pred.sum() + truth.sum(), 1))

    def statistic(self, means: dict) -> dict:
        """label -> the ranked statistic at the true means: Eq. 1's S_f = mean x 2 TP / (P + T)."""
        return {label: mean * self.factor(label) for label, mean in means.items()}


#: Rating cells simulated at once (campaigns x systems x instances x raters): memory, not speed.
CHUNK_CELLS = 2_000_000


def linear_verdicts(rng, means, components: Components, pairs, n: int, m: int, raters: Raters, campaigns: int, alpha=0.05, detection: Detection | None = None) -> np.ndarray:
    """[campaigns, pairs] bool: in each simulated campaign of n instances x m raters, whether the
    report puts the pair's first system in a better tie group than its second.

    The report's verdict with its bootstrap replaced by the bootstrap's linearisation (the delta
    method, its B -> infinity limit), so a campaign costs O(systems x instances) instead of
    O(B x systems x instances), and all campaigns of a size are arrays at once:
    - instance part: a resample of the N test instances moves S_f = 2 num / D (D = the precision and
      recall denominators) by sum_i w_i g_i with g_i = (2 num_i - S_f D_i) / D, whose variance over
      multinomial counts is sum_i g_i^2; a pair's is sum_i (g_ai - g_bi)^2. With detection the
      instances are the sampled knowledge-seeking ones (rated where the system detected them,
      weighted N_seek / n as `eq1_columns` weights them) and the false alarms on the rest, which
      the leaderboard resamples too: detection is redrawn with the ratings;
    - rater part (a pool): the rater resample's linearisation sum_r m_r h_r, h_r = 2 (T_r - L C_r) / D,
      scaled by sqrt(R / (R - 1)) and each pair's repeated share as `scoring.paired_uncertainty` does;
    - the difference's p-value 2 Phi(-|d| / (kappa sd)), kappa = t_df / z with the report's
      Welch-Satterthwaite df (`scoring.widening`), Holm over every pair, tie groups as
      `scoring.holm_rank_groups` draws them.
    Checked against the report's bootstrap in tests/evaluation/test_planned_power.py."""
    labels = list(means)
    S = len(labels)
    index = {label: k for k, label in enumerate(labels)}
    per_campaign = max(1, CHUNK_CELLS // max(S * n * m, 1))
    out = []
    for start in range(0, campaigns, per_campaign):
        size = min(per_campaign, campaigns - start)
        F, v_inst, v_rater, n_i, n_r = _campaign_tests(rng, means, components, n, m, raters, size, detection)
        ranks = _tie_group_ranks(F, v_inst, v_rater, n_i, n_r, alpha)
        out.append(np.stack([ranks[:, index[a]] < ranks[:, index[b]] for a, b in pairs], axis=1))
    return np.concatenate(out)


def _campaign_tests(rng, means, components: Components, n, m, raters: Raters, C, detection: Detection | None):
    """Of C simulated campaigns: [C, S] final scores, [C, S, S] the instance and rater variances of
    every pair's difference, and [C, S, S] the instances behind each (the fewer of the two) and the raters (who rated either)."""
    labels = list(means)
    S = len(labels)
    c = components
    mu = np.array([means[label] for label in labels])
    # Where each system is rated (both), its score weight (sw) and Eq. 1 denominators (den) per sampled instance.
    if detection is not None and detection.applies(labels):
        truth = np.asarray(detection.truth, dtype=bool)
        seeking = np.flatnonzero(truth)
        if n > len(seeking):
            raise ValueError(f"the test set has {len(seeking)} knowledge-seeking instances to rate; {n} were asked for")
        sample = seeking[np.argsort(rng.random((C, len(seeking))), axis=1)[:, :n]]  # [C, n], as choose_instances samples
        w = len(seeking) / n
        both = np.ones((C, S, n), dtype=bool)
        weighted = np.zeros(S, dtype=bool)
        alarms = np.zeros((len(truth) - len(seeking), S))
        for k, label in enumerate(labels):
            pred = detection.predicted.get(label)
            if pred is not None:
                pred = np.asarray(pred, dtype=bool)
                weighted[k] = True
                both[:, k] = pred[sample]
                alarms[:, k] = pred[~truth]
        sw = np.where(weighted[None, :, None], w * both, 1.0)
        den = np.where(weighted[None, :, None], w * (both + 1.0), 2.0)
        false_alarms = alarms.T @ alarms  # [S, S]: non-seeking instances both systems flagged (weight 1)
    else:  # plain means: every instance rated, the same for every campaign (broadcast over them)
        both = None
        sw, den, false_alarms = np.ones((1, S, n), np.float32), np.full((1, S, n), 2.0, np.float32), np.zeros((S, S))

    def normal(variance, shape):  # single precision: the draws are most of the time, sums stay accurate enough
        return np.float32(math.sqrt(variance)) * rng.standard_normal(shape, dtype=np.float32)

    base = mu.astype(np.float32)[None, :, None] + normal(c.instance, (C, 1, n))
    if raters.pool is None:
        # system x instance plus the mean of m fresh raters' noise: one normal per item, as their sum is
        x = base + normal(c.system_instance + (c.rater + c.residual) / m, (C, S, n))
    else:
        if m > raters.pool:
            raise ValueError(f"a pool of {raters.pool} raters cannot give {m} different raters to an item")
        effects = normal(c.rater, (C, raters.pool))
        who = distinct_raters(rng, raters.pool, m, (C, S, n))
        base = base + normal(c.system_instance, (C, S, n))
        y = base[..., None] + np.take_along_axis(effects[:, None, None, :], who, axis=3) + normal(c.residual, (C, S, n, m))
        x = y.mean(axis=3)
    if both is not None:
        x = np.where(both, x, np.float32(0.0))

    D = den.sum(2) + np.diagonal(false_alarms)[None]  # [C, S] (or [1, S])
    F, g = _influence(sw * x, den, D)  # g: [C, S, n]
    f = F / D  # a false alarm's influence is -f (its numerator 0, its denominator 1)
    v_inst = scoring.pair_variances((g @ g.transpose(0, 2, 1)).astype(float) + false_alarms[None] * f[:, :, None] * f[:, None, :])
    n_inst = np.broadcast_to((sw > 0).sum(2), (C, S))
    v_rater = np.zeros_like(v_inst)
    n_r = np.zeros((C, S, S), dtype=int)
    if raters.pool is not None:
        v_rater, n_r = _rater_part(y, who, sw, D, raters.pool, m)
    n_i = np.minimum(n_inst[:, :, None], n_inst[:, None, :])
    return F, v_inst, v_rater, n_i, n_r


def _influence(numerator, denominator, total):
    """(S_f = 2 sum num / D, g_i = (2 num_i - S_f D_i) / D): Eq. 1's S_f from instance columns
    (`denominator` = the precision and recall denominators added) and each instance's influence,
    the linearisation of an instance resample (sum_i g_i = 0)."""
    F = 2 * numerator.sum(-1) / total
    return F, (2 * numerator - F[..., None] * denominator) / total[..., None]


def linear_instance_variances(cols: scoring.Eq1Columns) -> np.ndarray:
    """[S, S] the instance bootstrap's variance of each pair's difference of S_f (first question),
    linearised: what `scoring.bootstrap_scores` estimates with B resamples."""
    numerator = cols.numerator[:, 0]
    denominator = cols.precision_denominator[:, 0] + cols.recall_denominator[:, 0]
    _, g = _influence(numerator, denominator, denominator.sum(-1))
    return scoring.pair_variances(g @ g.T)


def distinct_raters(rng, pool: int, m: int, shape) -> np.ndarray:
    """[*shape, m] m different raters of a pool of `pool` for every cell, a uniform m-subset each
    (Floyd's algorithm, vectorised: memory in m, not in the pool's size)."""
    chosen = np.empty((*shape, m), dtype=np.int64)
    for k, j in enumerate(range(pool - m, pool)):
        t = rng.integers(0, j + 1, shape)
        taken = (chosen[..., :k] == t[..., None]).any(axis=-1)
        chosen[..., k] = np.where(taken, j, t)
    return chosen


def _rater_part(y, who, sw, D, pool: int, m: int):
    """([C, S, S] the rater resamples' variance of each pair's difference, [C, S, S] the raters who
    rated either system of a pair) for a pool: per system and rater T (the rater's shares of the
    numerator) and C (the shares), the linearised resample h_r = 2 (T_r - L C_r) / D, scaled as
    `scoring.paired_uncertainty` scales a difference's: sqrt(R/(R-1)) and the pair's repeated share
    (`scoring._pair_repeated_share`), whose square takes the pair's per-rating terms off its variance:
    V_R - V_1 of `scoring.pair_rater_terms`, the terms that share is the ratio of."""
    n_campaigns, S, n, _ = y.shape
    share = np.broadcast_to((sw / m)[..., None], y.shape)  # a rating's share of its instance's score weight
    key = ((np.arange(n_campaigns)[:, None, None, None] * S + np.arange(S)[None, :, None, None]) * pool + who).ravel()
    size = n_campaigns * S * pool
    T = np.bincount(key, weights=(share * y).ravel(), minlength=size).reshape(n_campaigns, S, pool)
    C = np.bincount(key, weights=share.ravel(), minlength=size).reshape(n_campaigns, S, pool)
    with np.errstate(invalid="ignore", divide="ignore"):
        level = T.sum(2) / C.sum(2)  # [C, S]
        per_rating = ((share * (y - level[..., None, None])) ** 2 * (share > 0)).sum((2, 3))
    used = (C > 0).any(axis=1).sum(1)  # [C]: raters in the campaign
    factor = np.array([scoring.small_pool_factor(int(r)) for r in used])
    # Each pull weighted by 2 / D (Eq. 1's gain over its level, per unit of C) and the small-pool factor.
    pair_rater, pair_rating = scoring.pair_rater_terms(T, C, level, factor[:, None] * 2 / D, per_rating)
    pair = np.maximum(pair_rater - pair_rating, 0.0)
    rated_by = (C > 0).astype(float)
    counts = rated_by.sum(2)
    either = counts[:, :, None] + counts[:, None, :] - rated_by @ rated_by.transpose(0, 2, 1)
    return pair, either.astype(int)


def _tie_group_ranks(F, v_inst, v_rater, n_i, n_r, alpha) -> np.ndarray:
    """[C, S] each system's tie-group rank in each campaign, as the report draws groups: every pair's
    p-value 2 Phi(-|d| / (kappa sd)) (kappa = t_df / z, `scoring.variance_widening`), Holm over
    all pairs, a line only where every system above it beats every one below (Holm)."""
    n_campaigns, S = F.shape
    kappa, _df = scoring.variance_widening(v_inst, v_rater, n_i, n_r, 1 - alpha)
    d = F[:, :, None] - F[:, None, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        spread = kappa * np.sqrt(v_inst + v_rater)
        p = np.where(spread > 0, 2 * stats.norm.sf(np.abs(d) / np.where(spread > 0, spread, 1)), np.where(d == 0, 1.0, 0.0))
    upper = np.triu_indices(S, 1)
    flat = p[:, upper[0], upper[1]]  # [C, pairs]
    order = np.argsort(flat, axis=1, kind="stable")
    sorted_p = np.take_along_axis(flat, order, axis=1)
    adjusted = np.minimum(1.0, np.maximum.accumulate(sorted_p * (flat.shape[1] - np.arange(flat.shape[1])), axis=1))
    holm = np.empty_like(flat)
    np.put_along_axis(holm, order, adjusted, axis=1)
    significant = np.zeros((n_campaigns, S, S), dtype=bool)
    significant[:, upper[0], upper[1]] = holm < alpha
    significant |= significant.transpose(0, 2, 1)
    beats = significant & (d > 0)  # [C, i, j]: i significantly better than j
    table = np.argsort(-F, axis=1, kind="stable")  # best first (ties: label order)
    ordered = np.take_along_axis(np.take_along_axis(beats, table[:, :, None], axis=1), table[:, None, :], axis=2)
    ranks_in_table = np.ones((n_campaigns, S), dtype=int)
    start = np.zeros(n_campaigns, dtype=int)
    for k in range(1, S):
        line = ordered[:, :k, k:].all(axis=(1, 2))
        start = np.where(line, k, start)
        ranks_in_table[:, k] = start + 1
    ranks = np.empty_like(ranks_in_table)
    np.put_along_axis(ranks, table, ranks_in_table, axis=1)
    return ranks


def report_power(means, components: Components, pairs, n: int, m: int, raters: Raters, alpha=0.05, campaigns=DEFAULT_CAMPAIGNS, seed=scoring.DEFAULT_SEED, detection: Detection | None = None) -> list[float]:
    """For each pair (a, b) with a truly better, the share of `campaigns` simulated campaigns of n
    instances x m raters in which the report ranks a in a better tie group than b
    (`linear_verdicts`). Seeded by (seed, n, m): the same question gets the same answer."""
    if n < 2 or m < 1:
        raise ValueError("a campaign needs at least 2 instances and 1 rater per instance")
    rng = np.random.default_rng([seed, n, m])
    return list(linear_verdicts(rng, means, components, pairs, n, m, raters, campaigns, alpha, detection).mean(axis=0))


def _fitted_c(points: dict[int, float], alpha: float) -> float:
    """c of power(n) = Phi(c sqrt(n) - z) from the simulated points {n: power}, each weighted by
    its Fisher information about c (n phi^2 / (p (1 - p))): points near the middle count most."""
    z = stats.norm.ppf(1 - alpha / 2)
    total = weight = 0.0
    for n, p in points.items():
        p = min(max(p, 0.01), 0.995)
        q = stats.norm.ppf(p)
        w = n * stats.norm.pdf(q) ** 2 / (p * (1 - p))
        total += w * (q + z) / math.sqrt(n)
        weight += w
    return total / weight


def _size(c: float, power: float, alpha: float) -> float:
    z = stats.norm.ppf(1 - alpha / 2)
    return math.inf if c <= 0 else max(2.0, ((stats.norm.ppf(power) + z) / c) ** 2)


def instances_needed(means, components: Components, pairs, m: int, raters: Raters, start: int, alpha=0.05, power=0.8, max_instances=100_000, campaigns=DEFAULT_CAMPAIGNS, seed=scoring.DEFAULT_SEED, detection: Detection | None = None):
    """The n at which the lowest of the pairs' report powers reaches `power`, and the power the
    fitted curve gives there; (None, power at `max_instances`) when that does not reach it.
    `start`: the t-test's n, where the search begins; each step simulates `campaigns` campaigns
    at the size the curve fitted to every point so far predicts, until it stops moving (1%) or a
    point's power is within 1.5 standard errors of the target (the curve then sets n from it).
    With detection a campaign rates at most the test set's knowledge-seeking instances."""
    if detection is not None and detection.applies(list(means)):
        max_instances = min(max_instances, detection.seeking)
    z = stats.norm.ppf(1 - alpha / 2)
    points: dict[int, float] = {}
    n = min(max(start, 2), max_instances)
    for _ in range(MAX_STEPS):
        points[n] = min(report_power(means, components, pairs, n, m, raters, alpha, campaigns, seed, detection))
        size = _size(_fitted_c(points, alpha), power, alpha)
        following = max_instances if size >= max_instances else math.ceil(size)
        settled = abs(points[n] - power) <= 1.5 * math.sqrt(power * (1 - power) / campaigns)  # within the simulation's noise
        if settled or following in points or abs(following - n) <= max(1, n // 100):
            n = following
            break
        n = following
    c = _fitted_c(points, alpha)
    if _size(c, power, alpha) > max_instances:
        return None, float(stats.norm.cdf(c * math.sqrt(max_instances) - z))
    return n, float(stats.norm.cdf(c * math.sqrt(n) - z))
