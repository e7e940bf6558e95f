"""Power as the report judges it: simulated campaigns scored by the report's own pairwise verdict.
Pure module: numpy, pandas and the pure `scoring`/`power` modules; no Django.

`power.simulated_power` answers "does a paired t-test on plain means separate the pair?"; the
leaderboard answers something else: it scores each system with the ranked statistic (Eq. 1 where
detection applies, else the mean), compares pairs with the rater-aware two-way bootstrap
(`scoring.paired_uncertainty`, the rater term scaled to what raters repeating adds), and draws a
line between two rows only where the Holm-adjusted comparisons over the whole table allow it
(`scoring.holm_rank_groups`). A planned pair counts as separated here exactly when that rule puts
the truly better system in a better tie group.

Each simulated campaign draws ratings from the fitted model (`power` module docstring) for every
system the pilot rated (the Holm family is the whole table), at the pilot's means:
- a crowd: every rating from a new rater, whose leniency is one more draw of rating noise;
- a pool of P raters (the pilot's raters repeat): P leniencies drawn once per campaign, each item's
  m raters drawn from the pool without replacement, so a rater's leniency is shared across
  instances as in the campaign the pool will rate.
Plain means are simulated (no detection predictions): Eq. 1 with detection reweights which
instances count, which a pilot of ratings does not carry.

The size is searched from the t-test's size: power(n) of a pair is close to
Phi(c * sqrt(n) - z) for some c, so each simulated point gives the n its c predicts for the target;
a few such steps, each seeded by (seed, n, m), land on the smallest n reached.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import pandas as pd
from scipy import stats

from evaluation.stats import scoring

DEFAULT_CAMPAIGNS = 120
DEFAULT_BOOTSTRAP = scoring.DEFAULT_BOOTSTRAP  # the report refuses fewer (its p-values need them)
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


def simulate_ratings(rng, means, components: Components, n: int, m: int, raters: Raters) -> pd.DataFrame:
    """One campaign's ratings (columns system, question, instance, rater, value) of the systems
    `means` (label -> true mean) on n instances, m raters per item."""
    labels = list(means)
    S = len(labels)
    c = components
    a = rng.normal(0, math.sqrt(c.instance), (1, n, 1))
    b = rng.normal(0, math.sqrt(c.system_instance), (S, n, 1))
    if raters.pool is None:
        who = np.arange(S * n * m).reshape(S, n, m)
        leniency = rng.normal(0, math.sqrt(c.rater), (S, n, m))
    else:
        if m > raters.pool:
            raise ValueError(f"a pool of {raters.pool} raters cannot give {m} different raters to an item")
        effects = rng.normal(0, math.sqrt(c.rater), raters.pool)
        who = np.argsort(rng.random((S, n, raters.pool)), axis=2)[:, :, :m]
        leniency = effects[who]
    mu = np.array([means[label] for label in labels])[:, None, None]
    y = mu + a + b + leniency + rng.normal(0, math.sqrt(c.residual), (S, n, m))
    s, i, _ = np.indices(y.shape)
    return pd.DataFrame({
        "system": np.asarray(labels, dtype=object)[s.ravel()], "question": "q", "instance": i.ravel(),
        "rater": who.ravel(), "value": y.ravel(),
    })


def report_ranks(ratings: pd.DataFrame, labels, n: int, bootstrap=DEFAULT_BOOTSTRAP, seed=scoring.DEFAULT_SEED, ci=0.95, raters_repeat=True) -> dict:
    """label -> tie-group rank, as the report (`report.build_report`) gives it for plain-mean rows.
    `raters_repeat` False (a crowd, every rating its own rater) skips the rater resamples: the
    report scales them by the share of their variance from raters repeating, which is then exactly
    0, so the verdict is the same and four times cheaper."""
    labels = list(labels)
    questions = ["q"]
    scores, counts = scoring.instance_score_matrix(ratings, labels, questions, n)
    cols = scoring.eq1_columns(scores, np.zeros(n, dtype=bool), [None] * len(labels))
    point = scoring.system_scores(cols)
    _, final = scoring.paired_uncertainty(ratings, cols, counts, point, labels, questions, bootstrap, seed, raters_known=raters_repeat)
    order = sorted(range(len(labels)), key=lambda k: (-point["final"][k], labels[k]))
    ordered = [labels[k] for k in order]
    sub = scoring.Uncertainty(final.instance[:, order], final.rater[:, order], final.n_instances[order], final.n_raters[order])
    rows = scoring.pairwise_differences(point["final"][order], sub, ordered, ci)
    groups = scoring.holm_rank_groups(ordered, rows)
    return dict(zip(ordered, groups.rank, strict=True))


def report_power(means, components: Components, pairs, n: int, m: int, raters: Raters, alpha=0.05, campaigns=DEFAULT_CAMPAIGNS, bootstrap=DEFAULT_BOOTSTRAP, seed=scoring.DEFAULT_SEED) -> list[float]:
    """For each pair (a, b) with a truly better, the share of `campaigns` simulated campaigns of n
    instances x m raters in which the report ranks a in a better tie group than b. Seeded by
    (seed, n, m): the same question gets the same answer."""
    if n < 2 or m < 1:
        raise ValueError("a campaign needs at least 2 instances and 1 rater per instance")
    rng = np.random.default_rng([seed, n, m])
    hits = np.zeros(len(pairs))
    for k in range(campaigns):
        ranks = report_ranks(simulate_ratings(rng, means, components, n, m, raters), list(means), n, bootstrap, seed + k, 1 - alpha, raters.pool is not None)
        hits += [ranks[a] < ranks[b] for a, b in pairs]
    return list(hits / campaigns)


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


def instances_needed(means, components: Components, pairs, m: int, raters: Raters, start: int, alpha=0.05, power=0.8, max_instances=100_000, campaigns=DEFAULT_CAMPAIGNS, bootstrap=DEFAULT_BOOTSTRAP, seed=scoring.DEFAULT_SEED):
    """The n at which the lowest of the pairs' report powers reaches `power`, and the power the
    fitted curve gives there; (None, power at `max_instances`) when that does not reach it.
    `start`: the t-test's n, where the search begins; each step simulates `campaigns` campaigns
    at the size the curve fitted to every point so far predicts, until it stops moving (1%) or a
    point's power is within 1.5 standard errors of the target (the curve then sets n from it)."""
    z = stats.norm.ppf(1 - alpha / 2)
    points: dict[int, float] = {}
    n = min(max(start, 2), max_instances)
    for _ in range(MAX_STEPS):
        points[n] = min(report_power(means, components, pairs, n, m, raters, alpha, campaigns, bootstrap, seed))
        following = min(math.ceil(_size(_fitted_c(points, alpha), power, alpha)), max_instances)
        settled = abs(points[n] - power) <= 1.5 * math.sqrt(power * (1 - power) / campaigns)  # within the simulation's noise
        if settled or following in points or abs(following - n) <= max(1, n // 100):
            n = following
            break
        n = following
    c = _fitted_c(points, alpha)
    if _size(c, power, alpha) > max_instances:
        return None, float(stats.norm.cdf(c * math.sqrt(max_instances) - z))
    return n, float(stats.norm.cdf(c * math.sqrt(n) - z))
