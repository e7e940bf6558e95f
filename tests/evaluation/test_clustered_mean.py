"""The FED results' interval (evaluation/stats/clustered_mean.py): a mean of ratings clustered by item
and by rater. Checked by hand on a small table, and by simulation with known truth: dialogs of
differing quality, raters of differing leniency drawn anew for each campaign, three raters a dialog,
answers on the FED scales; the truth is the population's mean answer. The interval must cover it at
its nominal 95% — neither less (organizers would publish differences that are noise) nor more
(they would pay for raters they did not need)."""
import math
import random

import pytest
from scipy import stats

from evaluation.stats.clustered_mean import clustered_mean

REPS = 1500  # binomial SE of a 95% coverage: 0.0056
BAND = (0.935, 0.968)


def test_by_hand_two_way_variance_is_items_plus_raters_minus_each_answer():
    # Two dialogs, two raters, each rater rates both: a 2 x 2 table.
    values, items, raters = [1, 2, 3, 3], ["d1", "d1", "d2", "d2"], ["r1", "r2", "r1", "r2"]
    found = clustered_mean(values, items, raters)
    mean = 2.25
    e = [v - mean for v in values]
    by_item = 2 / 1 * ((e[0] + e[1]) ** 2 + (e[2] + e[3]) ** 2) / 16
    by_rater = 2 / 1 * ((e[0] + e[2]) ** 2 + (e[1] + e[3]) ** 2) / 16
    each = 4 / 3 * sum(x * x for x in e) / 16
    variance = by_item + by_rater - each
    assert variance > 0
    half = stats.t.ppf(0.975, 1) * math.sqrt(variance)  # df = min(2, 2) - 1
    assert found.mean == pytest.approx(mean)
    assert (found.low, found.high) == pytest.approx((mean - half, mean + half))
    assert (found.answers, found.items, found.raters, found.df) == (4, 2, 2, 1)


def test_the_scale_bounds_the_interval_and_one_item_has_none():
    wide = clustered_mean([1, 3, 1, 3, 1, 3], ["a", "a", "b", "b", "c", "c"], ["x", "y", "x", "y", "x", "y"], bounds=(1, 3))
    assert 1 <= wide.low and wide.high <= 3
    one = clustered_mean([2, 3], ["a", "a"], ["x", "y"])
    assert one.mean == 2.5 and (one.low, one.high, one.df) == (None, None, None)
    assert clustered_mean([], [], []) is None
    with pytest.raises(ValueError, match="one of each per answer"):
        clustered_mean([1, 2], ["a"], ["x", "y"])


def _answer(latent, top):
    return min(max(round(latent), 1), top)


def _truth(centre, item_sd, rater_sd, noise_sd, top, draws=300_000):
    rng = random.Random(99)
    total = sum(_answer(centre + rng.gauss(0, item_sd) + rng.gauss(0, rater_sd) + rng.gauss(0, noise_sd), top) for _ in range(draws))
    return total / draws


def _coverage(items, pool, centre, item_sd, rater_sd, noise_sd, top, two_way=True, seed=7):
    truth = _truth(centre, item_sd, rater_sd, noise_sd, top)
    rng = random.Random(seed)
    covered = 0
    for _ in range(REPS):
        quality = [rng.gauss(0, item_sd) for _ in range(items)]
        leniency = [rng.gauss(0, rater_sd) for _ in range(pool)]
        values, item_ids, rater_ids = [], [], []
        for i in range(items):
            for r in rng.sample(range(pool), 3):
                values.append(_answer(centre + quality[i] + leniency[r] + rng.gauss(0, noise_sd), top))
                item_ids.append(i)
                rater_ids.append(r if two_way else 0)
        found = clustered_mean(values, item_ids, rater_ids, bounds=(1, top))
        covered += found.low <= truth <= found.high
    return covered / REPS


@pytest.mark.parametrize(
    "items, pool, centre, item_sd, rater_sd, noise_sd, top",
    [
        (40, 12, 2.0, 0.5, 0.3, 0.6, 3),  # a three-point FED question, a pool of a dozen raters
        (40, 6, 2.0, 0.5, 0.3, 0.6, 3),  # few raters: their leniency weighs most
        (20, 9, 3.2, 0.8, 0.4, 0.8, 5),  # overall, 1-5, a small set
        (40, 12, 2.0, 0.5, 0.0, 0.6, 3),  # raters who do not differ: the interval is not needlessly wide
    ],
)
def test_coverage_is_nominal_with_known_truth(items, pool, centre, item_sd, rater_sd, noise_sd, top):
    coverage = _coverage(items, pool, centre, item_sd, rater_sd, noise_sd, top)
    assert BAND[0] <= coverage <= BAND[1], coverage


def test_clustering_by_dialog_alone_would_cover_too_little():
    """Why raters are a cluster too: with their leniency ignored the same intervals fall short."""
    assert _coverage(40, 6, 2.0, 0.5, 0.3, 0.6, 3, two_way=False) < 0.9
