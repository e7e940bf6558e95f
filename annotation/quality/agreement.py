"""Krippendorff's alpha for rating data given as a long table (item, rater, value).

Pure module: numpy, pandas and the `krippendorff` package, no Django.

- The point estimate is `krippendorff.alpha` on the table's value counts, with the level of
  measurement always passed explicitly. For ordinal data the value domain is explicit too
  (default: the 1-5 Likert scale), because ordinal distances are defined over the domain.
- The bootstrap (resampling units with replacement, fixed seed) and the leave-one-rater-out
  diagnostics need thousands of alphas; they use the same coincidence-matrix formula, written
  once here in matrix form (`_alpha_from_coincidences`), which the tests check against
  `krippendorff.alpha`. Units are collapsed to their distinct value-count patterns, so that a
  bootstrap replicate is one multinomial draw over patterns instead of a pass over every unit.
  Units that go together (the parts of one rewrite, decided by the same votes) are resampled as
  clusters instead (`bootstrap_alphas_by_cluster`): a replicate is then a multinomial draw over the
  distinct kinds of cluster.
- Every alpha Quorum shows comes from here: a job's agreement per question and its vote agreement
  (annotation's selectors), a campaign's report, the FED sets, the agreement command and API.
- Alpha is undefined when no unit has two values (nothing to pair) or when a single value is used
  (no variation: expected disagreement is 0). The result then says so instead of carrying NaN.
- A bootstrap resample can hold one value only (every resampled unit unanimous on it) when the
  data's disagreement sits in a few units. Its alpha is counted as 1: it shows no disagreement, as
  Hayes & Krippendorff's bootstrap (KALPHA, 2007) scores it, whose expected disagreement is the
  data's. Dropping such resamples, as this module once did, kept only those holding the
  disagreement: with one disputed response of 7 a third were dropped and the interval ended at the
  estimate ("0.454 [0.308, 0.454]"). `AlphaResult.unanimous_resamples` says what share they were.
- The interval is the bias-corrected and accelerated (BCa) one over those resamples, as
  scipy.stats.bootstrap computes it (`bca_levels`; the tests check it against scipy): alpha's
  resampling distribution is skewed and its median off the estimate, so the percentile interval
  fell short (86-95% at 30 units, mean 92%, over 27 simulated designs; BCa 90-97.5%, mean 94%:
  docs/measurements.md, "Coverage of alpha's interval"; the simulation with known truth is
  tests/quality/alpha_simulation.py).
- No interval is given for fewer than MIN_INTERVAL_UNITS units, or fewer than MIN_DISAGREEING_UNITS
  units with any disagreement: there no bootstrap interval covers near 95% (BCa 51-87% at 5 units,
  70-96% at 10, 84-98% at 20; an estimate of 1 with no disagreement read "[1.000, 1.000]").
  `ci_withheld` says so in words, which `display()` and the pages show. Clustered units (the vote
  agreement) have their own minimum, in clusters: MIN_INTERVAL_CLUSTERS clusters and
  MIN_DISAGREEING_UNITS clusters holding any disagreement (simulated votes with known alpha, resampled
  by response: BCa 62-91% at 10 responses, 80-97% at 20, 87-96% at 30; from 50 on mostly 93-97%, but
  89-92% at a low alpha with few votes against and up to 99% at a high one: docs/measurements.md, "Coverage of the vote agreement's
  interval"; tests/quality/vote_simulation.py).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from statistics import NormalDist
from typing import TYPE_CHECKING

from quorum.lazy_modules import lazy

if TYPE_CHECKING:
    import krippendorff
    import numpy as np
    import pandas as pd
else:
    krippendorff = lazy("krippendorff")
    np = lazy("numpy")
    pd = lazy("pandas")


LEVELS = ("nominal", "ordinal", "interval", "ratio")
INTERVAL_METHODS = ("bca", "percentile")
LIKERT_1_5 = (1, 2, 3, 4, 5)
NO_VARIATION = "n/a (no variation)"
NO_PAIRABLE = "n/a (no pairable values)"
DEFAULT_BOOTSTRAP = 1000
# Below these the 95% bootstrap interval covers far less than 95% (docs/measurements.md, "Coverage of
# alpha's interval"), so none is given: units resampled, and units whose values differ at all.
MIN_INTERVAL_UNITS = 30
MIN_DISAGREEING_UNITS = 3
# The same for units resampled in clusters (the vote agreement's responses): clusters resampled, and
# clusters holding a unit whose values differ (docs/measurements.md, "Coverage of the vote agreement's interval").
MIN_INTERVAL_CLUSTERS = 50
DEFAULT_SEED = 20210101


@dataclass
class AlphaResult:
    level: str
    alpha: float | None
    undefined: bool = False
    reason: str = ""
    ci_low: float | None = None
    ci_high: float | None = None
    ci_level: float = 0.95
    bootstrap: int = 0
    seed: int | None = None
    units: int = 0
    pairable_values: int = 0
    raters: int = 0
    ci_method: str = ""  # bca or percentile, when there is an interval
    ci_withheld: str = ""  # why there is no interval although one was asked for
    unanimous_resamples: float | None = None  # share of bootstrap resamples with one value only (alpha 1)

    def display(self, digits=3) -> str:
        if self.undefined:
            return self.reason
        text = f"{self.alpha:.{digits}f}"
        if self.ci_low is not None:
            text += f" [{self.ci_low:.{digits}f}, {self.ci_high:.{digits}f}]"
        elif self.ci_withheld:
            text += f" ({self.ci_withheld})"
        return text

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class RaterDiagnostic:
    rater: str
    ratings: int
    shared_items: int
    correlation_with_rest: float | None
    mean_deviation: float | None
    mean_abs_deviation: float | None
    alpha_without: float | None
    alpha_without_reason: str = ""


@dataclass
class AgreementReport:
    result: AlphaResult
    raters: list[RaterDiagnostic] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"alpha": self.result.to_dict(), "raters": [asdict(r) for r in self.raters]}


# ---------------------------------------------------------------------------------------------
# Input: long table -> value counts


def _check_level(level):
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}; got {level!r}")


CSV_COLUMNS = ("item", "rater", "value")


def check_csv_columns(columns) -> None:
    """A ratings CSV for agreement has exactly item, rater, value: a column it does not know (say
    "value2") would otherwise be ignored without a word. ValueError naming what is wrong."""
    columns = [str(c) for c in columns]
    unknown = [c for c in columns if c not in CSV_COLUMNS]
    missing = [c for c in CSV_COLUMNS if c not in columns]
    if unknown or missing:
        said = ([f"unknown column(s) {', '.join(unknown)}"] if unknown else []) + ([f"missing {', '.join(missing)}"] if missing else [])
        raise ValueError(f"{'; '.join(said)}: the header must be {','.join(CSV_COLUMNS)}")


def _as_frame(table) -> pd.DataFrame:
    frame = table if isinstance(table, pd.DataFrame) else pd.DataFrame(list(table), columns=["item", "rater", "value"])
    missing = {"item", "rater", "value"} - set(frame.columns)
    if missing:
        raise ValueError(f"the table needs the columns item, rater, value; missing: {', '.join(sorted(missing))}")
    frame = frame[["item", "rater", "value"]].dropna(subset=["value"])
    duplicated = frame.duplicated(subset=["item", "rater"])
    if duplicated.any():
        row = frame[duplicated].iloc[0]
        raise ValueError(f"rater '{row['rater']}' rated item '{row['item']}' more than once; keep one value per rater and item")
    return frame


def _domain_for(level, values: np.ndarray, value_domain) -> np.ndarray:
    if value_domain is None:
        # The scale is the values present. For the ordinal metric this is no loss: a point of the
        # scale nobody used has no marginal mass, so it adds nothing to any distance.
        value_domain = np.unique(values)
    domain = np.asarray(value_domain, dtype=float)
    if len(domain) and not np.all(np.diff(domain) > 0):
        raise ValueError("value_domain must be sorted ascending without repeats")
    outside = ~np.isin(values, domain)
    if outside.any():
        raise ValueError(f"value {values[outside][0]:g} is outside the value domain {domain.tolist()}")
    return domain


def value_counts_from_long(table, level, value_domain=None):
    """(value_counts[N, V], domain[V], frame) for the items of a long table, all items kept."""
    _check_level(level)
    frame = _as_frame(table)
    values = pd.to_numeric(frame["value"], errors="raise").to_numpy(dtype=float)
    domain = _domain_for(level, values, value_domain)
    item_codes, _ = pd.factorize(frame["item"], sort=False)
    value_codes = np.searchsorted(domain, values)
    n_items, n_values = int(item_codes.max(initial=-1)) + 1, len(domain)
    flat = np.bincount(item_codes * n_values + value_codes, minlength=n_items * n_values)
    return flat.reshape(n_items, n_values), domain, frame.assign(_item=item_codes, _value=value_codes)


# ---------------------------------------------------------------------------------------------
# Coincidence-matrix form of alpha (vectorised over bootstrap replicates)


def _unit_coincidences(counts: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """Sum over units of o_ck = (m_c m_k - [c=k] m_c) / (m_u - 1); units with m_u < 2 add nothing."""
    m = counts.sum(axis=1)
    keep = m >= 2
    counts, m = counts[keep].astype(float), m[keep]
    w = 1.0 / (m - 1)
    if weights is not None:
        w = w * weights[keep]
    scaled = counts * w[:, None]
    return scaled.T @ counts - np.diag(scaled.sum(axis=0))


def _distances(level, domain: np.ndarray, n_v: np.ndarray) -> np.ndarray:
    """Distance matrices d[..., V, V]; n_v may be [V] or [B, V] (ordinal distances depend on it)."""
    a, b = domain[:, None], domain[None, :]
    if level == "nominal":
        d = (a != b).astype(float)
    elif level == "interval":
        d = (a - b) ** 2
    elif level == "ratio":
        total = a + b
        d = np.divide(a - b, total, out=np.zeros(np.broadcast(a, b).shape), where=total != 0) ** 2
    else:  # ordinal: (sum of n_g for g between c and k) - (n_c + n_k) / 2, squared
        cum = np.concatenate([np.zeros(n_v.shape[:-1] + (1,)), np.cumsum(n_v, axis=-1)], axis=-1)
        idx = np.arange(len(domain))
        lo, hi = np.minimum.outer(idx, idx), np.maximum.outer(idx, idx)
        between = cum[..., hi + 1] - cum[..., lo]
        return (between - (n_v[..., lo] + n_v[..., hi]) / 2.0) ** 2
    return d if n_v.ndim == 1 else np.broadcast_to(d, n_v.shape[:-1] + d.shape)


def _alpha_from_coincidences(o: np.ndarray, level: str, domain: np.ndarray) -> np.ndarray:
    """Alpha for one coincidence matrix [V, V] or a stack [B, V, V]; NaN where undefined."""
    n_v = o.sum(axis=-2)
    n = n_v.sum(axis=-1)
    d = _distances(level, domain, n_v)
    e_num = n_v[..., :, None] * n_v[..., None, :] - n_v[..., :, None] * np.eye(len(domain))
    observed = (o * d).sum(axis=(-2, -1))
    expected = (e_num * d).sum(axis=(-2, -1)) / np.where(n > 1, n - 1, np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(expected > 0, 1.0 - observed / np.where(expected > 0, expected, 1.0), np.nan)


def _undefined_reason(counts: np.ndarray) -> str:
    pairable = counts[counts.sum(axis=1) >= 2]
    if len(pairable) == 0:
        return NO_PAIRABLE
    if np.count_nonzero(pairable.sum(axis=0)) < 2:
        return NO_VARIATION
    return ""


# ---------------------------------------------------------------------------------------------
# Public API


def alpha(table, level, value_domain=None, bootstrap=DEFAULT_BOOTSTRAP, seed=DEFAULT_SEED, ci=0.95) -> AlphaResult:
    """Krippendorff's alpha of a long table (item, rater, value), with a bootstrap CI over units.

    `level` is required: one of nominal, ordinal, interval, ratio. `bootstrap=0` skips the CI.
    """
    counts, domain, frame = value_counts_from_long(table, level, value_domain)
    return alpha_from_counts(counts, domain, level, bootstrap=bootstrap, seed=seed, ci=ci, raters=frame["rater"].nunique())


def alpha_from_counts(
    counts, domain, level, bootstrap=DEFAULT_BOOTSTRAP, seed=DEFAULT_SEED, ci=0.95, raters=0, clusters=None, method="bca",
    cluster_words=("cluster", "clusters"),
) -> AlphaResult:
    """Alpha of a units x values count matrix, with its bootstrap interval (BCa unless `method` says
    "percentile").

    `clusters` (one key per row of `counts`) resamples groups of units together, for units that are
    not independent of each other: the parts of one rewrite that one vote decides. Without it each
    unit is resampled on its own, as Krippendorff's bootstrap does. `cluster_words` (singular, plural)
    name the clusters where the interval is withheld for too few of them ("responses")."""
    _check_level(level)
    if method not in INTERVAL_METHODS:
        raise ValueError(f"method must be one of {', '.join(INTERVAL_METHODS)}; got {method!r}")
    if bootstrap and bootstrap < 1000:
        raise ValueError("use at least 1000 bootstrap replicates (or 0 for none)")
    counts = np.asarray(counts)
    if clusters is not None:
        clusters = np.asarray(clusters)[counts.sum(axis=1) >= 2]
    pairable = counts[counts.sum(axis=1) >= 2]
    base = dict(level=level, units=len(pairable), pairable_values=int(pairable.sum()), raters=int(raters), ci_level=ci)
    reason = _undefined_reason(counts)
    if reason:
        return AlphaResult(alpha=None, undefined=True, reason=reason, **base)
    value = float(krippendorff.alpha(value_counts=pairable, value_domain=domain, level_of_measurement=level))
    result = AlphaResult(alpha=value, **base)
    if bootstrap:
        result.ci_withheld = interval_withheld(pairable, clusters, cluster_words if clusters is not None else ("unit", "units"))
    if bootstrap and not result.ci_withheld:
        flat, frequency = _resampling_rows(pairable, clusters)
        samples = _resampled_alphas(flat, frequency, domain, level, bootstrap, seed)
        # Every resampled unit is pairable, so an undefined alpha is a resample with one value only:
        # no disagreement, alpha 1 (see the module's docstring), never dropped.
        unanimous = ~np.isfinite(samples)
        samples = np.where(unanimous, 1.0, samples)
        tail = (1 - ci) / 2
        levels = np.array([tail, 1 - tail])
        if method == "bca":
            jackknife = _jackknife_alphas(flat, frequency, domain, level)
            levels = bca_levels(samples, value, np.where(np.isfinite(jackknife), jackknife, 1.0), frequency, ci)
        result.ci_low, result.ci_high = (float(x) for x in np.percentile(samples, 100 * levels))
        result.bootstrap, result.seed, result.ci_method = int(bootstrap), seed, method
        result.unanimous_resamples = float(unanimous.mean())
    return result


def interval_withheld(pairable: np.ndarray, clusters: np.ndarray | None = None, words=("unit", "units")) -> str:
    """Why these pairable units are too few for a 95% interval, in words; empty when they are not.

    Resampling a handful of units, or units of which only a few disagree at all, gives intervals
    that cover the true alpha as little as 51% of the time at 5 units and 84% at 20 (alpha sits at
    the interval's end when no resample can reach beyond it), so below the minimum none is given.
    With `clusters` (units resampled together) the minimum counts clusters, MIN_INTERVAL_CLUSTERS of
    them, and `words` name a cluster (singular, plural)."""
    groups = np.arange(len(pairable)) if clusters is None else clusters
    minimum = MIN_INTERVAL_UNITS if clusters is None else MIN_INTERVAL_CLUSTERS
    resampled = len(np.unique(groups))
    if resampled < minimum:
        return f"no interval: too few {words[1]}, {resampled} of the {minimum} needed"
    disagreeing = len(np.unique(groups[(pairable > 0).sum(axis=1) > 1]))
    if disagreeing < MIN_DISAGREEING_UNITS:
        return f"no interval: {disagreeing} {words[disagreeing != 1]} with any disagreement, {MIN_DISAGREEING_UNITS} needed"
    return ""


def bca_levels(samples: np.ndarray, estimate: float, jackknife: np.ndarray, weights: np.ndarray, ci: float) -> np.ndarray:
    """The two percentile levels (fractions) of the bias-corrected and accelerated interval (Efron &
    Tibshirani 1993, 14.3), as scipy.stats.bootstrap's BCa computes them: z0 from the share of
    resamples below the estimate (ties counted half), the acceleration from the jackknife.

    Written here rather than called from scipy because scipy's jackknife evaluates alpha once per
    unit left out, over every unit (n times n work): here units with the same value counts (or
    clusters of the same kind) leave out the same thing, so `jackknife` holds one alpha per kind
    and `weights` how many units (clusters) are of it. Every resample on one side of the estimate
    (z0 infinite) has no bias correction; the percentile levels are returned then."""
    tail = (1 - ci) / 2
    share_below = (np.count_nonzero(samples < estimate) + np.count_nonzero(samples <= estimate)) / (2 * len(samples))
    if not 0 < share_below < 1:
        return np.array([tail, 1 - tail])
    normal = NormalDist()
    z0 = normal.inv_cdf(share_below)
    weights = np.asarray(weights, dtype=float)
    spread = weights @ jackknife / weights.sum() - jackknife
    squares = weights @ spread**2
    acceleration = float(weights @ spread**3) / (6 * squares**1.5) if squares > 0 else 0.0
    levels = []
    for z in (normal.inv_cdf(tail), normal.inv_cdf(1 - tail)):
        levels.append(normal.cdf(z0 + (z0 + z) / (1 - acceleration * (z0 + z))))
    return np.array(levels)


def _resampling_rows(pairable: np.ndarray, clusters) -> tuple[np.ndarray, np.ndarray]:
    """(coincidences [K, V*V] of each distinct kind of resampled row, how many rows are of each kind):
    rows are units, or clusters of units when `clusters` names one per unit."""
    if clusters is None:
        patterns, frequency = _distinct_rows(pairable)
        return _pattern_coincidences(patterns), frequency
    pattern_of_unit, patterns = _pattern_keys(pairable)
    cluster_codes, _keys = pd.factorize(np.asarray(clusters), sort=True)
    n_clusters, n_patterns = int(cluster_codes.max(initial=-1)) + 1, len(patterns)
    holdings = np.bincount(cluster_codes * n_patterns + pattern_of_unit, minlength=n_clusters * n_patterns)
    kinds, frequency = _distinct_rows(holdings.reshape(n_clusters, n_patterns))
    return kinds @ _pattern_coincidences(patterns), frequency


def _jackknife_alphas(flat: np.ndarray, frequency: np.ndarray, domain, level) -> np.ndarray:
    """Alpha with one row of each kind left out [K] (NaN where what is left has no variation)."""
    v = len(domain)
    left = (frequency @ flat)[None, :] - flat
    return _alpha_from_coincidences(left.reshape(len(flat), v, v), level, domain)


def _distinct_rows(counts: np.ndarray):
    """Distinct rows and their frequencies; rows are packed into one integer key when they fit
    (a 1-D sort is far faster than np.unique(axis=0) on a million rows)."""
    base = int(counts.max(initial=0)) + 1
    if counts.shape[1] * np.log2(max(base, 2)) < 62:
        keys = counts.astype(np.int64) @ (base ** np.arange(counts.shape[1], dtype=np.int64))
        _, first, frequency = np.unique(keys, return_index=True, return_counts=True)
        return counts[first], frequency
    return np.unique(counts, axis=0, return_counts=True)


def bootstrap_alphas(counts, domain, level, replicates=DEFAULT_BOOTSTRAP, seed=DEFAULT_SEED, chunk=250) -> np.ndarray:
    """Alphas of `replicates` resamples of the pairable units (with replacement), seeded.

    Units with the same value counts contribute the same coincidences, so a resample is a
    multinomial draw of how often each distinct pattern occurs: exact, and independent of N.
    """
    counts = np.asarray(counts)
    flat, frequency = _resampling_rows(counts[counts.sum(axis=1) >= 2], None)
    return _resampled_alphas(flat, frequency, domain, level, replicates, seed, chunk)


def bootstrap_alphas_by_cluster(counts, clusters, domain, level, replicates=DEFAULT_BOOTSTRAP, seed=DEFAULT_SEED, chunk=250) -> np.ndarray:
    """Alphas of `replicates` resamples of whole clusters of pairable units (with replacement), seeded.

    A cluster is the units it holds of each value-count pattern; clusters that hold the same are
    interchangeable, so a resample is a multinomial draw over the distinct kinds of cluster, as
    `bootstrap_alphas` draws over the distinct patterns of units."""
    counts = np.asarray(counts)
    keep = counts.sum(axis=1) >= 2
    flat, frequency = _resampling_rows(counts[keep], np.asarray(clusters)[keep])
    return _resampled_alphas(flat, frequency, domain, level, replicates, seed, chunk)


def _pattern_coincidences(patterns: np.ndarray) -> np.ndarray:
    """The coincidences [K, V*V] one unit of each pattern adds."""
    return np.stack([_unit_coincidences(p[None, :]).ravel() for p in patterns])


def _resampled_alphas(flat: np.ndarray, frequency: np.ndarray, domain, level, replicates, seed, chunk=250) -> np.ndarray:
    """Alphas of resamples that draw, with replacement, as many rows of `flat` (coincidences [K, V*V])
    as `frequency` holds in all, each row as often as its frequency makes likely."""
    rng = np.random.default_rng(seed)
    out = np.empty(replicates)
    n, v = int(frequency.sum()), len(domain)
    for start in range(0, replicates, chunk):
        size = min(chunk, replicates - start)
        draws = rng.multinomial(n, frequency / n, size=size)  # [b, K]
        out[start:start + size] = _alpha_from_coincidences((draws @ flat).reshape(size, v, v), level, domain)
    return out


def _pattern_keys(counts: np.ndarray):
    """Integer id of each row's value-count pattern, and one row per distinct pattern."""
    base = int(counts.max(initial=0)) + 1
    if counts.shape[1] * np.log2(max(base, 2)) < 62:
        keys = counts.astype(np.int64) @ (base ** np.arange(counts.shape[1], dtype=np.int64))
        _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        return inverse.ravel(), counts[first]
    patterns, inverse = np.unique(counts, axis=0, return_inverse=True)
    return inverse.ravel(), patterns


def rater_diagnostics(table, level, value_domain=None, prepared=None) -> list[RaterDiagnostic]:
    """Per rater: correlation of the rater's values with the mean of the other raters on shared
    items, mean (signed and absolute) deviation from that mean, and alpha without the rater.

    `prepared` is the output of `value_counts_from_long` for the same table, to avoid redoing it.
    Vectorised: removing one value from a unit changes its coincidences by an amount that depends
    only on the unit's pattern and the value, so each rater's change is a histogram over
    (pattern, value) times a small table of changes.
    """
    _check_level(level)
    counts, domain, frame = prepared if prepared is not None else value_counts_from_long(table, level, value_domain)
    value_codes = frame["_value"].to_numpy()
    values = domain[value_codes]
    items = frame["_item"].to_numpy()
    m = counts.sum(axis=1)
    total = counts @ domain
    others_n = m[items] - 1
    shared = others_n > 0
    others_mean = np.where(shared, (total[items] - values) / np.where(shared, others_n, 1), 0.0)
    rater_codes, rater_names = pd.factorize(frame["rater"], sort=True)
    R, V = len(rater_names), len(domain)

    def per_rater(x):
        return np.bincount(rater_codes, weights=np.where(shared, x, 0.0), minlength=R)

    n_shared = per_rater(np.ones(len(values)))
    sx, sy = per_rater(values), per_rater(others_mean)
    sxx, syy, sxy = per_rater(values * values), per_rater(others_mean * others_mean), per_rater(values * others_mean)
    sdev, sabs = per_rater(values - others_mean), per_rater(np.abs(values - others_mean))
    with np.errstate(invalid="ignore", divide="ignore"):
        cov = sxy - sx * sy / n_shared
        var_x, var_y = sxx - sx * sx / n_shared, syy - sy * sy / n_shared
        corr = cov / np.sqrt(var_x * var_y)
    eps = 1e-12 * np.maximum(1.0, n_shared)
    corr_ok = (n_shared >= 2) & (var_x > eps) & (var_y > eps)

    # Alpha without each rater, from per-(pattern, value) coincidence changes.
    pattern_of_unit, patterns = _pattern_keys(counts)
    K = len(patterns)
    change = np.zeros((K, V, V * V))
    for k, pattern in enumerate(patterns):
        before = _unit_coincidences(pattern[None, :]).ravel()
        for v in np.flatnonzero(pattern):
            after = pattern.copy()
            after[v] -= 1
            change[k, v] = _unit_coincidences(after[None, :]).ravel() - before
    combo = pattern_of_unit[items] * V + value_codes
    histogram = np.bincount(rater_codes * (K * V) + combo, minlength=R * K * V).reshape(R, K * V)
    o_all = _unit_coincidences(counts)
    o_without = o_all[None] + (histogram @ change.reshape(K * V, V * V)).reshape(R, V, V)
    without = _alpha_from_coincidences(o_without, level, domain)
    ratings = np.bincount(rater_codes, minlength=R)

    out = []
    for r, name in enumerate(rater_names):
        has = n_shared[r] > 0
        out.append(
            RaterDiagnostic(
                rater=str(name),
                ratings=int(ratings[r]),
                shared_items=int(n_shared[r]),
                correlation_with_rest=float(corr[r]) if corr_ok[r] else None,
                mean_deviation=float(sdev[r] / n_shared[r]) if has else None,
                mean_abs_deviation=float(sabs[r] / n_shared[r]) if has else None,
                alpha_without=float(without[r]) if np.isfinite(without[r]) else None,
                alpha_without_reason="" if np.isfinite(without[r]) else _reason_without(counts, items[rater_codes == r], value_codes[rater_codes == r]),
            )
        )
    return out


def _reason_without(counts, items, value_codes):
    reduced = counts.copy()
    np.subtract.at(reduced, (items, value_codes), 1)
    return _undefined_reason(reduced) or NO_VARIATION


def agreement_report(table, level, value_domain=None, bootstrap=DEFAULT_BOOTSTRAP, seed=DEFAULT_SEED, with_raters=True) -> AgreementReport:
    result = alpha(table, level, value_domain=value_domain, bootstrap=bootstrap, seed=seed)
    raters = rater_diagnostics(table, level, value_domain) if with_raters else []
    return AgreementReport(result=result, raters=raters)
