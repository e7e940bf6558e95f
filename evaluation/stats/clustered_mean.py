"""The mean of ratings with its interval, clustered two ways: by the item rated and by the rater (pure).

A FED set's answers are not independent draws: each dialog is rated by several raters, and each rater
rates many dialogs with their own leniency. The variance of the mean is the two-way cluster-robust
one (Cameron, Gelbach & Miller 2011): items' part plus raters' part minus their intersection (each
answer), each with its small-sample factor, from statsmodels' `cov_cluster_2groups` on the
intercept-only regression whose coefficient is the mean. When the difference comes out negative
(it can with few clusters) the larger one-way part stands in. The interval is mean ± t_df · SE with
df = min(items, raters) − 1, as the interactive leaderboard's two-way intervals take it
(`stats/interactive.py`), clipped to the scale (`clipped` says it was: such an interval is as much
the scale's end as an estimate, and the FED page, CSV and API mark it).

Clustering by item alone ignores that raters differ: with raters' leniency sd 0.3 on a 1-3 scale it
covered 81-88% at nominal 95% in the simulation of tests/evaluation/test_clustered_mean.py, where this
interval covers 95-96%.

numpy, scipy and statsmodels are imported when an interval is computed, not with the module, so a
web worker that never shows one never loads them.
"""
from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class MeanInterval:
    mean: float
    low: float | None  # None: fewer than two items, nothing to say how far the mean may be off
    high: float | None
    answers: int
    items: int
    raters: int
    df: int | None
    clipped: bool = False  # the t interval ran past an end of `bounds` and was cut there


def clustered_mean(
    values: Sequence[float], items: Sequence[Hashable], raters: Sequence[Hashable], *, ci: float = 0.95,
    bounds: tuple[float, float] | None = None,
) -> MeanInterval | None:
    """The mean of `values` (one answer each, by `raters[k]` about `items[k]`) with its `ci`
    interval clustered by item and by rater, clipped to `bounds`; None without answers."""
    if not (len(values) == len(items) == len(raters)):
        raise ValueError(f"{len(values)} values, {len(items)} items and {len(raters)} raters: give one of each per answer")
    if not values:
        return None
    import numpy as np
    from scipy import stats
    from statsmodels.regression.linear_model import OLS
    from statsmodels.stats.sandwich_covariance import cov_cluster, cov_cluster_2groups

    y = np.asarray(values, dtype=float)
    item_codes = _codes(items)
    rater_codes = _codes(raters)
    n_items, n_raters = int(item_codes.max()) + 1, int(rater_codes.max()) + 1
    mean = float(y.mean())
    if n_items < 2:
        return MeanInterval(mean, None, None, len(y), n_items, n_raters, None)
    # Fitted on the deviations from the mean (the same residuals, the same variance), so answers that
    # all agree have residuals of exactly 0 and an interval of exactly [mean, mean], not one off by
    # the least-squares solver's rounding (2.999999999999989 for a mean of 3).
    fit = OLS(y - mean, np.ones((len(y), 1))).fit()
    if n_raters > 1:
        both, by_item, by_rater = cov_cluster_2groups(fit, item_codes, rater_codes)
        variance = float(both[0, 0])
        if variance <= 0:
            variance = max(float(by_item[0, 0]), float(by_rater[0, 0]))
        df = min(n_items, n_raters) - 1
    else:  # one rater: their leniency is in every answer alike, so only the items vary
        variance = float(cov_cluster(fit, item_codes)[0, 0])
        df = n_items - 1
    half = float(stats.t.ppf(0.5 + ci / 2, df)) * math.sqrt(max(variance, 0.0))
    low, high = mean - half, mean + half
    clipped = bounds is not None and (low < bounds[0] or high > bounds[1])
    if bounds is not None:
        low, high = max(low, bounds[0]), min(high, bounds[1])
    return MeanInterval(mean, low, high, len(y), n_items, n_raters, df, clipped)


def _codes(labels: Sequence[Hashable]):
    """0..k-1 for the k distinct labels, in order of first appearance."""
    import pandas as pd

    return pd.factorize(pd.Series(list(labels), dtype=object))[0]
