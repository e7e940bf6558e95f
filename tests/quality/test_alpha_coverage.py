"""How often alpha's 95% bootstrap interval covers the true alpha, by simulation with known truth
(tests/quality/alpha_simulation.py: population alpha r^2 at every level), and what a reader sees on
data too small for an interval.

Band: 1,000 data sets a design give a coverage with binomial SE 0.0069 at 95%; the band 0.93-0.97 is
about 2.9 SE either side, so an interval at its nominal 95% passes and one covering 90% (too short)
or 99% (too wide: a 99% interval sold as 95%) fails; the last two tests show the check failing so.
The full table over 5-200 units, 2-5 raters and three levels is `python -m perf.alpha_coverage`
(docs/measurements.md, "Coverage of alpha's interval")."""
import numpy as np
import pytest

from annotation.quality import agreement
from tests.quality.alpha_simulation import coverage, marginal_for, simulated_counts

REPS = 1000
BAND = (0.93, 0.97)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
@pytest.mark.parametrize("true_alpha", [0.2, 0.8])
def test_the_simulated_ratings_have_the_alpha_they_claim(level, true_alpha):
    domain, marginal = marginal_for(level)
    counts = simulated_counts(np.random.default_rng(1), 200_000, 3, true_alpha, marginal)
    found = agreement.alpha_from_counts(counts, domain, level, bootstrap=0).alpha
    assert found == pytest.approx(true_alpha, abs=0.01)


# Designs of the size an organizer publishes: a pilot of 30 items with two raters who mostly agree
# (the percentile interval covered 85% here), a Likert question over 50 items, a large nominal one.
DESIGNS = [(30, 2, "interval", 0.8), (50, 3, "ordinal", 0.5), (200, 3, "nominal", 0.5)]


@pytest.mark.slow
@pytest.mark.parametrize("design", DESIGNS, ids=lambda d: f"{d[0]}x{d[1]}-{d[2]}-{d[3]}")
def test_the_interval_covers_the_true_alpha_at_its_nominal_95(design):
    found = coverage(np.random.default_rng(sum(design[:2])), design, REPS)
    assert found["intervals"] > 0.8 * REPS  # withheld only where the data show almost no disagreement
    assert BAND[0] <= found["coverage"] <= BAND[1]
    assert found["outside"] == 0  # the estimate always inside its own interval


@pytest.mark.slow
def test_the_check_fails_an_interval_that_covers_too_little(monkeypatch):
    """The percentile interval on 10 units, which Quorum gave before: it covers about 89%."""
    monkeypatch.setattr(agreement, "MIN_INTERVAL_UNITS", 2)
    monkeypatch.setattr(agreement, "MIN_DISAGREEING_UNITS", 1)
    found = coverage(np.random.default_rng(4), (10, 3, "interval", 0.5), REPS, method="percentile")
    assert found["coverage"] < BAND[0]


@pytest.mark.slow
def test_the_check_fails_an_interval_that_covers_too_much():
    """A 99% interval presented as a 95% one: it covers 99% and wastes the organizer's money."""
    found = coverage(np.random.default_rng(5), DESIGNS[1], REPS, ci=0.99)
    assert found["coverage"] > BAND[1]


# Seven items, two raters, a 1-5 scale: five items agreed on, two disputed. The percentile bootstrap
# read "-0.857 [-0.857, 1.000]": the estimate at the end of its own interval.
SEVEN_ITEMS = [[0, 1, 0, 1, 0], [0, 0, 2, 0, 0], [0, 0, 2, 0, 0], [0, 0, 2, 0, 0], [0, 0, 2, 0, 0], [1, 0, 0, 0, 1], [0, 0, 2, 0, 0]]


def test_too_few_units_give_no_interval_and_say_why():
    domain, _ = marginal_for("ordinal")
    found = agreement.alpha_from_counts(np.array(SEVEN_ITEMS), domain, "ordinal")
    assert found.alpha == pytest.approx(-0.857, abs=0.001)  # the estimate itself is unchanged
    assert found.ci_low is None and found.ci_high is None
    assert found.display() == "-0.857 (no interval: too few units, 7 of the 30 needed)"


def test_units_that_almost_all_agree_give_no_interval_and_say_why():
    """40 items, only 2 with any disagreement: most resamples hold one or none of them."""
    counts = np.array([[2, 0]] * 20 + [[0, 2]] * 18 + [[1, 1]] * 2)
    found = agreement.alpha_from_counts(counts, np.array([0.0, 1.0]), "nominal")
    assert found.ci_low is None
    assert found.ci_withheld == "no interval: 2 units with any disagreement, 3 needed"
    assert found.display() == f"{found.alpha:.3f} (no interval: 2 units with any disagreement, 3 needed)"
    assert found.to_dict()["ci_withheld"] == found.ci_withheld
    assert agreement.alpha_from_counts(counts, np.array([0.0, 1.0]), "nominal", bootstrap=0).ci_withheld == ""  # none asked for


def test_at_the_minimum_the_estimate_is_inside_its_interval():
    domain, marginal = marginal_for("ordinal")
    rng = np.random.default_rng(8)
    for _ in range(50):
        found = agreement.alpha_from_counts(simulated_counts(rng, agreement.MIN_INTERVAL_UNITS, 3, 0.5, marginal), domain, "ordinal")
        if found.ci_low is not None:
            assert found.ci_low < found.alpha < found.ci_high
            assert found.ci_method == "bca"


def test_bca_levels_match_scipy_on_the_same_resamples():
    """scipy.stats.bootstrap's BCa given the same bootstrap distribution (its jackknife runs over every
    unit; ours over the kinds of unit, weighted): the same interval."""
    from scipy import stats

    domain, marginal = marginal_for("interval")
    counts = simulated_counts(np.random.default_rng(2), 60, 3, 0.5, marginal)
    ours = agreement.alpha_from_counts(counts, domain, "interval", bootstrap=2000, seed=3)
    samples = agreement.bootstrap_alphas(counts, domain, "interval", 2000, seed=3)

    def statistic(index, axis=-1):
        picked = counts[np.asarray(index, dtype=int)]
        return agreement._alpha_from_coincidences(
            np.stack([agreement._unit_coincidences(p) for p in picked.reshape(-1, *picked.shape[-2:])]), "interval", domain,
        ).reshape(picked.shape[:-2])

    earlier = stats.bootstrap((np.arange(len(counts)),), statistic, n_resamples=0, method="BCa", vectorized=True,
                              bootstrap_result=type("Earlier", (), {"bootstrap_distribution": samples})())
    assert (ours.ci_low, ours.ci_high) == pytest.approx(tuple(earlier.confidence_interval), abs=1e-9)
