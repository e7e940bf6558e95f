"""Prediction-powered rank sets by seeded simulation with known truth: every system's true rank in
its set at least as often as the stated coverage, sets narrower than the human-only ones when the
judge is informative, and the judge's bias corrected (the judge alone would rank wrongly)."""
import numpy as np
import pytest

from evaluation.stats import ranksets

TRUE_MEANS = np.array([3.00, 3.10, 3.30, 3.35, 3.60])
TRUE_RANKS = [5, 4, 3, 2, 1]  # 1 = highest mean
JUDGE_BIAS = np.array([0.0, 0.4, 0.0, -0.2, 0.0])  # the judge favours system 1 and disfavours system 3


def _campaign(rng, n=150, N=1500, judge_noise=0.3):
    total = n + N
    instance = rng.normal(0, 0.5, size=(total, 1))
    human = TRUE_MEANS + instance + rng.normal(0, 0.8, size=(total, len(TRUE_MEANS)))
    judge = human + JUDGE_BIAS + rng.normal(0, judge_noise, size=human.shape)
    return human[:n], judge[:n], judge[n:]


def _covered(rows):
    return all(row["rank_low"] <= true <= row["rank_high"] for row, true in zip(rows, TRUE_RANKS, strict=True))


@pytest.mark.parametrize("lam", ["ppi", "tuned"])
def test_rating_rank_sets_cover_at_nominal_and_are_narrower_than_human_only(lam):
    rng = np.random.default_rng(2024)
    runs, covered, covered_human, size, size_human = 300, 0, 0, [], []
    for _ in range(runs):
        Y, F, Fu = _campaign(rng)
        result = ranksets.ratings_rank_sets(list("ABCDE"), Y, F, Fu, alpha=0.1, lam=lam)
        covered += _covered(result["ppi"])
        covered_human += _covered(result["human_only"])
        size.append(result["mean_size"]["ppi"])
        size_human.append(result["mean_size"]["human_only"])
    # Nominal 90%; the ellipsoid is conservative for pairwise statements, so coverage is above it.
    assert covered / runs >= 0.87 and covered_human / runs >= 0.87
    assert np.mean(size) < 0.85 * np.mean(size_human)


def test_the_judge_alone_would_misrank_and_the_rectifier_fixes_it():
    rng = np.random.default_rng(7)
    Y, F, Fu = _campaign(rng, n=150, N=20000)
    judge_only = np.argsort(-Fu.mean(0))
    assert judge_only[0] == 4 and list(judge_only[1:3]) == [1, 2]  # system 1 (true 4th) placed 2nd by the biased judge
    result = ranksets.ratings_rank_sets(list("ABCDE"), Y, F, Fu, alpha=0.1)
    assert result["ppi"][1]["estimate"] == pytest.approx(TRUE_MEANS[1], abs=0.2)
    assert _covered(result["ppi"])


def test_pairwise_win_rate_rank_sets_cover_at_nominal():
    strengths = np.array([0.0, 0.3, 0.6, 1.2])
    S = len(strengths)
    pairs = [(i, j) for i in range(S) for j in range(i + 1, S)]
    # True win rates against uniformly drawn opponents, by Bradley-Terry probabilities.
    win = 1 / (1 + np.exp(-(strengths[:, None] - strengths[None, :])))
    true_rate = (win.sum(1) - 0.5) / (S - 1)
    true_ranks = [int((true_rate > r).sum()) + 1 for r in true_rate]
    rng = np.random.default_rng(11)
    names = ["s0", "s1", "s2", "s3"]
    runs, covered, size, size_human = 200, 0, [], []
    for _ in range(runs):
        human, judged_l, judged_u = [], [], []
        for k in range(3000):
            i, j = pairs[rng.integers(len(pairs))]
            human_pick = "a" if rng.random() < win[i, j] else "b"
            judge_pick = human_pick if rng.random() < 0.8 else ("b" if human_pick == "a" else "a")
            if k < 300:
                human.append((names[i], names[j], human_pick))
                judged_l.append((names[i], names[j], judge_pick))
            else:
                judged_u.append((names[i], names[j], judge_pick))
        result = ranksets.pairwise_rank_sets(names, human, judged_l, judged_u, alpha=0.1)
        covered += all(r["rank_low"] <= t <= r["rank_high"] for r, t in zip(result["ppi"], true_ranks, strict=True))
        size.append(result["mean_size"]["ppi"])
        size_human.append(result["mean_size"]["human_only"])
    assert covered / runs >= 0.87
    assert np.mean(size) < np.mean(size_human)


def test_rank_sets_by_hand():
    # Far apart with small variance: every rank known; two equal: they share ranks 1-2.
    assert ranksets.rank_sets([3.0, 2.0, 1.0], np.eye(3) * 1e-4) == [(1, 1), (2, 2), (3, 3)]
    assert ranksets.rank_sets([2.0, 2.0, 0.0], np.eye(3) * 1e-4) == [(1, 2), (1, 2), (3, 3)]


def test_bad_input_is_refused_with_a_reason():
    with pytest.raises(ValueError, match="at least two instances"):
        ranksets.ratings_rank_sets(["A", "B"], [[1, 2]], [[1, 2]], [[1, 2]] * 5)
    with pytest.raises(ValueError, match="every system needs a score"):
        ranksets.ratings_rank_sets(["A", "B"], [[1, np.nan], [2, 3]], [[1, 2], [2, 3]], [[1, 2]] * 5)
    with pytest.raises(ValueError, match="not the humans' pair"):
        ranksets.pairwise_rank_sets(["x", "y", "z"], [("x", "y", "a")] * 2, [("x", "z", "a")] * 2, [("x", "y", "b")] * 3)
    with pytest.raises(ValueError, match="never compared"):
        ranksets.pairwise_rank_sets(["x", "y", "z"], [("x", "y", "a")] * 2, [("x", "y", "a")] * 2, [("x", "y", "b")] * 3)
