"""Ratings with a known Krippendorff's alpha, for measuring how often an interval covers it.

The model: each unit has a true value drawn from `marginal`; each rater gives it with probability
r, or else a value drawn afresh from `marginal`. Two values of one unit are then both true (equal)
with probability r^2 and otherwise two independent draws from the marginal, so the disagreement
observed within units is (1 - r^2) times the disagreement expected by chance, for any distance:
the population alpha is r^2 at every level of measurement and every number of raters
(`test_alpha_coverage` checks it on a large draw). Pure: numpy only, no Django.
"""
import numpy as np

from annotation.quality import agreement

NOMINAL_MARGINAL = np.array([0.5, 0.3, 0.2])  # three labels, one common
LIKERT_MARGINAL = np.array([0.1, 0.2, 0.3, 0.25, 0.15])  # a 1-5 scale


def marginal_for(level: str) -> tuple[np.ndarray, np.ndarray]:
    """(value domain, marginal) of the simulated scale at a level of measurement."""
    if level == "nominal":
        return np.arange(len(NOMINAL_MARGINAL), dtype=float), NOMINAL_MARGINAL
    return np.arange(1, len(LIKERT_MARGINAL) + 1, dtype=float), LIKERT_MARGINAL


def simulated_counts(rng, units: int, raters: int, true_alpha: float, marginal: np.ndarray) -> np.ndarray:
    """Value counts [units, values] of `raters` raters rating every unit, population alpha `true_alpha`."""
    size = len(marginal)
    true = rng.choice(size, size=units, p=marginal)
    noise = rng.choice(size, size=(units, raters), p=marginal)
    values = np.where(rng.random((units, raters)) < np.sqrt(true_alpha), true[:, None], noise)
    return (values[..., None] == np.arange(size)).sum(axis=1)


def coverage(rng, design, reps: int, **options) -> dict:
    """How often the interval of `reps` simulated data sets covers the true alpha. `design` is
    (units, raters, level, true alpha); `options` go to `agreement.alpha_from_counts`. Returns what
    `tally_coverage` does."""
    units, raters, level, true_alpha = design
    domain, marginal = marginal_for(level)
    data_sets = (simulated_counts(rng, units, raters, true_alpha, marginal) for _ in range(reps))
    return tally_coverage(data_sets, true_alpha, domain, level, **options)


def tally_coverage(data_sets, true_alpha: float, domain: np.ndarray, level: str, **options) -> dict:
    """How often the intervals of `data_sets` (value counts, or (value counts, clusters) to resample
    clusters of units) cover `true_alpha`: the share covered among the intervals given, how many were
    given, how many data sets had no alpha (no variation) and how many had their estimate not strictly
    inside their own interval."""
    tally = {"covered": 0, "intervals": 0, "undefined": 0, "outside": 0}
    for rep, data in enumerate(data_sets):
        counts, clusters = data if isinstance(data, tuple) else (data, None)
        result = agreement.alpha_from_counts(counts, domain, level, seed=rep, clusters=clusters, **options)
        if result.undefined:
            tally["undefined"] += 1
        elif result.ci_low is not None:
            tally["intervals"] += 1
            tally["covered"] += result.ci_low <= true_alpha <= result.ci_high
            tally["outside"] += not result.ci_low < result.alpha < result.ci_high
    return {**tally, "coverage": tally["covered"] / tally["intervals"] if tally["intervals"] else None}
