"""Prediction-powered rank sets by seeded simulation with known truth.

Coverage of the full true ranking (every system's true rank inside its set at once) at nominal
90% must lie in [0.85, 0.95] where the systems tie, the case that sets the level: 400 runs give a
binomial standard error of 0.015 at 0.90, so the band is 3.3 standard errors each side. Checked
for the prediction-powered sets with an unbiased and with a biased judge and for the human-only
sets, in two settings: two well-separated tiers with ties inside, and all five systems tied. Apart
from ties no valid method can sit at nominal (a miss needs a wrong statement, and systems far apart
give none): there the sets must shrink to single ranks. Widths against human-only and against
the chi-square ellipsoid the module used before (Chatzi et al.'s own construction).

Unfinished campaigns (`own_instances_estimate`): each system on its own random instances, human
scores on its own random subset of them, the judge on all; the same band at exact ties, with a
difficulty shared across systems weak and strong (strong, the covariance of shared instances is
what holds the level). At near ties no valid set sits at nominal: a band around
1 - (alpha - beta) / 2, the level the method attains there (the test's docstring says why)."""
import numpy as np
import pytest
from scipy import stats

from evaluation.stats import ranksets

NOMINAL = 0.90
RUNS = 400
BAND = (0.85, 0.95)
TIERS = np.array([3.0, 3.0, 3.6, 3.6, 3.6])
ALL_TIED = np.full(5, 3.3)
NEAR = np.array([3.00, 3.10, 3.30, 3.35, 3.60])
SEPARATED = np.array([3.0, 3.4, 3.8, 4.2, 4.6])
JUDGE_BIAS = np.array([0.0, 0.4, 0.0, -0.2, 0.0])  # the judge favours system 1 and disfavours system 3


def _true_ranks(means):
    return np.array([int((means > m).sum()) + 1 for m in means])  # tied systems share their best rank


def _campaign(rng, means, n=150, N=1500):
    """Human scores [n + N, S] and two judges': unbiased (human + noise) and biased (compressed, per-system bias)."""
    total = n + N
    human = means + rng.normal(0, 0.5, size=(total, 1)) + rng.normal(0, 0.8, size=(total, len(means)))
    unbiased = human + rng.normal(0, 0.3, size=human.shape)
    biased = 3 + 0.6 * (human - 3) + JUDGE_BIAS + rng.normal(0, 0.3, size=human.shape)
    return human[:n], unbiased, biased


def _sets(Y, F, Fu, lam):
    estimate, covariance, _ = ranksets.mean_estimate(Y, F, Fu, lam)
    return np.array(ranksets.rank_sets(estimate, covariance, alpha=1 - NOMINAL))


def _ellipsoid(Y, F, Fu, lam):
    """The sets the module gave before: every pairwise difference bounded by the chi-square ellipsoid."""
    estimate, covariance, _ = ranksets.mean_estimate(Y, F, Fu, lam)
    c = np.sqrt(stats.chi2.ppf(NOMINAL, df=len(estimate)))
    sd = np.sqrt(np.maximum(np.diag(covariance)[:, None] + np.diag(covariance)[None, :] - 2 * covariance, 0))
    above = estimate[:, None] - estimate[None, :] > c * sd
    return np.stack([1 + above.sum(0), len(estimate) - above.sum(1)], axis=1)


def _covered(sets, truth):
    return bool(np.all((sets[:, 0] <= truth) & (truth <= sets[:, 1])))


def _size(sets):
    return float(np.mean(sets[:, 1] - sets[:, 0] + 1))


def _simulate(means, seed, runs=RUNS, n=150, ellipsoid=False):
    rng = np.random.default_rng(seed)
    truth = _true_ranks(means)
    covered = {"human_only": 0, "unbiased": 0, "biased": 0, "ellipsoid": 0}
    size = {name: [] for name in covered}
    for _ in range(runs):
        Y, unbiased, biased = _campaign(rng, means, n=n)
        for name, sets in (
            ("human_only", _sets(Y, unbiased[:n], unbiased[n:], "human")),
            ("unbiased", _sets(Y, unbiased[:n], unbiased[n:], "ppi")),
            ("biased", _sets(Y, biased[:n], biased[n:], "ppi")),
            *((("ellipsoid", _ellipsoid(Y, biased[:n], biased[n:], "ppi")),) if ellipsoid else ()),
        ):
            covered[name] += _covered(sets, truth)
            size[name].append(_size(sets))
    return {name: covered[name] / runs for name in covered}, {name: float(np.mean(v)) if v else None for name, v in size.items()}


@pytest.mark.parametrize(("means", "seed"), [(TIERS, 2024), (ALL_TIED, 7)], ids=["separated-tiers", "all-tied"])
def test_rating_rank_sets_cover_the_true_ranking_at_nominal_where_systems_tie(means, seed):
    coverage, _ = _simulate(means, seed)
    for name in ("human_only", "unbiased", "biased"):
        assert BAND[0] <= coverage[name] <= BAND[1], (name, coverage)


def test_apart_the_sets_are_single_ranks_and_narrower_than_the_ellipsoid_and_human_only():
    coverage, size = _simulate(SEPARATED, 3, runs=60)
    assert min(coverage[name] for name in ("human_only", "unbiased", "biased")) >= 0.97  # no wrong statement is there to make
    assert size["unbiased"] < 1.15 and size["biased"] < 1.15
    coverage, size = _simulate(NEAR, 5, runs=150, ellipsoid=True)
    assert size["biased"] < size["ellipsoid"]
    assert size["biased"] < 0.85 * size["human_only"] and size["unbiased"] < 0.85 * size["human_only"]
    assert min(coverage.values()) >= NOMINAL  # distinct means: a miss needs a statement of the wrong sign


def test_the_judge_alone_would_misrank_and_the_rectifier_fixes_it():
    rng = np.random.default_rng(7)
    truth = _true_ranks(NEAR)
    Y, _, biased = _campaign(rng, NEAR, n=150, N=20000)
    judge_only = np.argsort(-biased[150:].mean(0))
    assert judge_only[0] == 1  # system 1 (true 4th) placed first by the biased judge
    result = ranksets.ratings_rank_sets(list("ABCDE"), Y, biased[:150], biased[150:], alpha=0.1)
    assert result["ppi"][1]["estimate"] == pytest.approx(NEAR[1], abs=0.2)
    assert _covered(np.array([(r["rank_low"], r["rank_high"]) for r in result["ppi"]]), truth)


def _rows(names, a, b, a_wins, part):
    return [(names[x], names[y], "a" if won else "b") for x, y, won in zip(a[part], b[part], a_wins[part], strict=True)]


def _pairwise_runs(strengths, judge_favours, seed, runs=RUNS, n=300, N=2700):
    """Coverage and mean size of win-rate rank sets; one Bradley-Terry vote per comparison, pairs
    drawn uniformly; the judge agrees with the vote 80% of the time and, when biased, otherwise
    picks system `judge_favours` whenever it is in the pair."""
    S = len(strengths)
    names = [f"s{k}" for k in range(S)]
    pairs = np.array([(i, j) for i in range(S) for j in range(i + 1, S)])
    win = 1 / (1 + np.exp(-(strengths[:, None] - strengths[None, :])))
    true_rate = (win.sum(1) - 0.5) / (S - 1)
    truth = np.array([int((true_rate > r + 1e-12).sum()) + 1 for r in true_rate])
    rng = np.random.default_rng(seed)
    covered = {"ppi": 0, "human_only": 0}
    size = {"ppi": [], "human_only": []}
    for _ in range(runs):
        drawn = pairs[rng.integers(len(pairs), size=n + N)]
        a, b = drawn[:, 0], drawn[:, 1]
        human_a = rng.random(n + N) < win[a, b]
        agrees = rng.random(n + N) < 0.8
        judge_a = np.where(agrees, human_a, ~human_a)
        if judge_favours is not None:
            judge_a = np.where(~agrees & (a == judge_favours), True, np.where(~agrees & (b == judge_favours), False, judge_a))
        labelled, unlabelled = slice(0, n), slice(n, None)
        result = ranksets.pairwise_rank_sets(
            names, _rows(names, a, b, human_a, labelled), _rows(names, a, b, judge_a, labelled), _rows(names, a, b, judge_a, unlabelled),
            alpha=1 - NOMINAL,
        )
        for name in covered:
            sets = np.array([(r["rank_low"], r["rank_high"]) for r in result[name]])
            covered[name] += _covered(sets, truth)
            size[name].append(_size(sets))
    return {k: v / runs for k, v in covered.items()}, {k: float(np.mean(v)) for k, v in size.items()}


@pytest.mark.parametrize(
    ("strengths", "judge_favours", "seed"),
    [([0.0, 0.0, 1.0, 1.0], None, 11), ([0.0, 0.0, 0.0, 0.0], 1, 12)],
    ids=["tiers-unbiased-judge", "all-tied-judge-favours-s1"],
)
def test_pairwise_win_rate_rank_sets_cover_at_nominal_where_systems_tie(strengths, judge_favours, seed):
    coverage, size = _pairwise_runs(np.array(strengths), judge_favours, seed=seed, runs=400)
    assert BAND[0] <= coverage["ppi"] <= BAND[1] and BAND[0] <= coverage["human_only"] <= BAND[1], coverage
    if len(set(strengths)) > 1:  # all tied, every set is (rightly) nearly all the ranks
        assert size["ppi"] < size["human_only"]


def test_rank_sets_by_hand():
    # Far apart with small variance: every rank known; two equal: they share ranks 1-2.
    assert ranksets.rank_sets([3.0, 2.0, 1.0], np.eye(3) * 1e-4) == [(1, 1), (2, 2), (3, 3)]
    assert ranksets.rank_sets([2.0, 2.0, 0.0], np.eye(3) * 1e-4) == [(1, 2), (1, 2), (3, 3)]


def test_the_critical_value_matches_the_exact_normal_quantile():
    # Two systems: the statements are D > c and -D > c with D standard normal and neither shifted (both
    # differences are within c_beta of zero), so the critical value is z_{1 - (alpha - beta)/2}; a
    # difference just either side of it decides the sets.
    z = stats.norm.ppf(1 - 0.1 * (1 - ranksets.FIRST_STEP_SHARE) / 2)
    below = ranksets.rank_sets([(z - 0.02) * np.sqrt(2), 0.0], np.eye(2), alpha=0.1)
    above = ranksets.rank_sets([(z + 0.02) * np.sqrt(2), 0.0], np.eye(2), alpha=0.1)
    assert below == [(1, 2), (1, 2)] and above == [(1, 1), (2, 2)]


def test_bad_input_is_refused_with_a_reason():
    with pytest.raises(ValueError, match="at least two instances"):
        ranksets.ratings_rank_sets(["A", "B"], [[1, 2]], [[1, 2]], [[1, 2]] * 5)
    with pytest.raises(ValueError, match="every system needs a score"):
        ranksets.ratings_rank_sets(["A", "B"], [[1, np.nan], [2, 3]], [[1, 2], [2, 3]], [[1, 2]] * 5)
    with pytest.raises(ValueError, match="not the humans' pair"):
        ranksets.pairwise_rank_sets(["x", "y", "z"], [("x", "y", "a")] * 2, [("x", "z", "a")] * 2, [("x", "y", "b")] * 3)
    with pytest.raises(ValueError, match="never compared"):
        ranksets.pairwise_rank_sets(["x", "y", "z"], [("x", "y", "a")] * 2, [("x", "y", "a")] * 2, [("x", "y", "b")] * 3)
    with pytest.raises(ValueError, match="share of the win"):
        ranksets.pairwise_rank_sets(["x", "y"], [("x", "y", 1.5)] * 2, [("x", "y", "a")] * 2, [("x", "y", "b")] * 3)


def test_a_judges_pair_named_the_other_way_round_is_the_same_pair():
    human = [("x", "y", "a"), ("x", "y", "b"), ("x", "y", 0.5)]
    same = ranksets.pairwise_tables(["x", "y"], human, [("x", "y", "a"), ("x", "y", 0.25), ("x", "y", "tie")], [("x", "y", "b")] * 3)
    turned = ranksets.pairwise_tables(["x", "y"], human, [("y", "x", "b"), ("y", "x", 0.75), ("y", "x", "tie")], [("x", "y", "b")] * 3)
    assert np.array_equal(same[1], turned[1])


def test_own_instances_estimate_on_one_common_set_is_the_paired_estimate():
    rng = np.random.default_rng(6)
    quality = rng.normal([3.0, 3.2, 2.9], 1.0, (400, 3))
    judge = quality + rng.normal(0.2, 0.5, (400, 3))
    human = np.where(np.arange(400)[:, None] < 120, quality, np.nan)
    for lam in ("ppi", "tuned", "human"):
        paired = ranksets.mean_estimate(quality[:120], judge[:120], judge[120:], lam)
        own = ranksets.own_instances_estimate(human, judge, lam)
        for mine, theirs in zip(own, paired, strict=True):
            assert np.allclose(mine, theirs, rtol=0, atol=1e-12), lam


def test_own_instances_estimate_keeps_each_systems_mean_and_covaries_through_shared_instances():
    nan = np.nan
    human = np.array([[3.0, nan], [4.0, nan], [5.0, 4.0], [nan, 2.0]])
    estimate, covariance, lams = ranksets.own_instances_estimate(human, human * 0 + 1, "human")
    assert estimate == pytest.approx([4.0, 3.0]) and not lams.any()
    # Var(mean) = var(ddof=1) / n; the covariance from the one shared instance (5 - 4)(4 - 3) / (3 * 2) x sqrt(3 * 2 / (2 * 1)).
    assert covariance == pytest.approx(np.array([[1 / 3, np.sqrt(3) / 6], [np.sqrt(3) / 6, 1.0]]))


# Unfinished campaigns (`own_instances_estimate`): every system on its own instances.
OWN_RUNS = 800
OWN_DRAWS = 5_000  # the critical value's own error is then about 0.004 in probability, far inside the bands
# Two near ties, 0.005 apart (a tenth of a standard error or less), far from the rest.
NEAR_PAIRS = np.array([3.0, 3.005, 4.0, 4.005, 5.0])


def _own_instances_campaign(rng, means, instance_sd, instances=1000, present=0.8, rated=0.15):
    """human, judge [instances, S], NaN where absent: each system has its own random 80% of the
    instances, human scores on its own random 15% (drawn per system, as an unfinished campaign
    leaves them) and the biased judge's on every instance it has. An instance's difficulty (sd
    `instance_sd`) is shared by every system that has it, so systems covary through shared instances."""
    quality = means + rng.normal(0, instance_sd, (instances, 1)) + rng.normal(0, 0.5, (instances, len(means)))
    judge = 3 + 0.6 * (quality - 3) + JUDGE_BIAS[: len(means)] + rng.normal(0, 0.3, quality.shape)
    has = rng.random(quality.shape) < present
    human = has & (rng.random(quality.shape) < rated / present)
    return np.where(human, quality, np.nan), np.where(has, judge, np.nan)


def _own_instances_coverage(means, instance_sd, seed, runs=OWN_RUNS):
    """Coverage of the PPI and human-only sets, and of the PPI sets with the covariance between
    systems dropped (its diagonal kept): the mistake the shared instances would expose."""
    rng = np.random.default_rng(seed)
    truth = _true_ranks(means)
    covered = {"ppi": 0, "human_only": 0, "ppi_without_covariance": 0}
    for _ in range(runs):
        human, judge = _own_instances_campaign(rng, means, instance_sd)
        for name, lam in (("ppi", "ppi"), ("human_only", "human")):
            estimate, covariance, _ = ranksets.own_instances_estimate(human, judge, lam)
            covered[name] += _covered(np.array(ranksets.rank_sets(estimate, covariance, 1 - NOMINAL, draws=OWN_DRAWS)), truth)
            if name == "ppi":
                alone = np.diag(np.diag(covariance))
                sets = ranksets.rank_sets(estimate, alone, 1 - NOMINAL, draws=OWN_DRAWS)
                covered["ppi_without_covariance"] += _covered(np.array(sets), truth)
    return {name: count / runs for name, count in covered.items()}


@pytest.mark.parametrize(
    ("means", "instance_sd", "seed"), [(TIERS, 0.5, 31), (ALL_TIED, 1.5, 32)], ids=["separated-tiers", "all-tied-shared-difficulty"]
)
def test_own_instances_rank_sets_cover_the_true_ranking_at_nominal_where_systems_tie(means, instance_sd, seed):
    """An unfinished campaign: the same band as a finished one's, for the same reason (at an exact
    tie the level is attained). With a shared difficulty that dominates the scores, the sets hold
    nominal only through the covariance of shared instances: without it they cover above the band."""
    coverage = _own_instances_coverage(means, instance_sd, seed)
    assert BAND[0] <= coverage["ppi"] <= BAND[1] and BAND[0] <= coverage["human_only"] <= BAND[1], coverage
    if instance_sd > 1:
        assert coverage["ppi_without_covariance"] > BAND[1], coverage


@pytest.mark.parametrize(("instance_sd", "seed"), [(0.5, 33), (1.5, 34)], ids=["own-difficulty", "shared-difficulty"])
def test_own_instances_rank_sets_cover_a_near_tie_at_the_level_one_wrong_direction_allows(instance_sd, seed):
    """Near ties (distinct means far closer than a standard error): a miss is a statement of the
    wrong sign only, where at an exact tie either sign misses. Sets that hold 1 - alpha at exact
    ties (the band above) spend their alpha on both signs, so near a tie they cover about
    1 - (alpha - beta) / 2, not 1 - alpha: no valid set can miss a near tie more often than half of
    alpha in both of its orders at once. The band is two-sided around that level: below it the sets
    would miss an exact tie more often than alpha, above it they would be wider than the method needs
    (as with a shared difficulty and the covariance of shared instances dropped, or the critical
    value taken over every statement)."""
    level = 1 - (1 - NOMINAL) * (1 - ranksets.FIRST_STEP_SHARE) / 2
    coverage = _own_instances_coverage(NEAR_PAIRS, instance_sd, seed)
    for name in ("ppi", "human_only"):
        assert level - 0.025 <= coverage[name] <= level + 0.025, (name, coverage)
