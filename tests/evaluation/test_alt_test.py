"""The alternative-annotator test as published (Calderon, Reichart and Dror, ACL 2025; issue 20,
item 6), checked against a reimplementation written from the paper's procedure on cases built here.

The reference below follows the paper's algorithm step by step, in plain loops: leave out raters
with fewer than the minimum number of items, score each predictor against the remaining raters
with the scoring function (negative RMSE for numeric ratings, accuracy for categorical), a one-sided
t-test of W_h - W_f against epsilon, Benjamini-Yekutieli step-up with <=, winning rate over the
raters tested.
"""
import math

import numpy as np
import pytest
from scipy import stats

from evaluation.stats import judge_agreement


def _neg_rmse(prediction, others):
    return -math.sqrt(sum((prediction - o) ** 2 for o in others) / len(others))


def _accuracy(prediction, others):
    return sum(prediction == o for o in others) / len(others)


def reference_alt_test(human, judge, scoring, epsilon=0.1, q=0.05, min_items=30):
    score = {"neg_rmse": _neg_rmse, "accuracy": _accuracy}[scoring]
    raters_of = {}
    for rater, answers in human.items():
        for item in answers:
            raters_of.setdefault(item, []).append(rater)
    kept = {item for item, raters in raters_of.items() if len(raters) >= 2 and item in judge}
    pvalues, advantages, tested = [], [], []
    for rater, answers in human.items():
        items = [item for item in answers if item in kept]
        if len(items) < min_items:
            continue
        w_f, w_h = [], []
        for item in items:
            others = [human[r][item] for r in raters_of[item] if r != rater]
            s_h, s_f = score(answers[item], others), score(judge[item], others)
            w_f.append(1 if s_f >= s_h else 0)
            w_h.append(1 if s_h >= s_f else 0)
        d = [h - f for h, f in zip(w_h, w_f, strict=True)]
        if len(set(d)) == 1:
            pvalues.append(0.0 if d[0] < epsilon else 1.0)
        else:
            pvalues.append(stats.ttest_1samp(d, epsilon, alternative="less").pvalue)
        advantages.append(sum(w_f) / len(w_f))
        tested.append(rater)
    m = len(pvalues)
    harmonic = sum(1 / k for k in range(1, m + 1))
    ranked = sorted(range(m), key=lambda k: pvalues[k])
    last = -1
    for position, k in enumerate(ranked, start=1):
        if pvalues[k] <= position * q / (m * harmonic):
            last = position
    rejected = {tested[k] for k in ranked[:last]} if last > 0 else set()
    winning_rate = len(rejected) / m if m else None
    return {"tested": tested, "rejected": rejected, "pvalues": dict(zip(tested, pvalues, strict=True)),
            "winning_rate": winning_rate, "advantage": float(np.mean(advantages)) if advantages else None}


def _crowd(seed, n_items=100, raters=6, per_item=3, noise=0.9, few=()):
    """Numeric 1-5 ratings of n_items items by `per_item` raters each from a pool; the raters in
    `few` rate only 10 items. Returns (human, truth)."""
    rng = np.random.default_rng(seed)
    truth = rng.uniform(1.5, 4.5, n_items)
    human = {f"r{k}": {} for k in range(raters)}
    names = [r for r in human if r not in few]
    for item in range(n_items):
        for rater in rng.choice(names, per_item, replace=False):
            human[rater][item] = float(np.clip(np.rint(truth[item] + rng.normal(0, noise)), 1, 5))
    for rater in few:
        for item in rng.choice(n_items, 10, replace=False):
            human[rater][int(item)] = float(np.clip(np.rint(truth[item] + rng.normal(0, noise)), 1, 5))
    return human, truth


def _agrees(out, ref):
    tested = [row for row in out["raters"] if row["judge_wins"] is not None]
    assert [row["rater"] for row in tested] == ref["tested"]
    for row in tested:
        assert row["p"] == pytest.approx(ref["pvalues"][row["rater"]], abs=1e-12)
    assert {row["rater"] for row in tested if row["judge_wins"]} == ref["rejected"]
    assert out["winning_rate"] == ref["winning_rate"]
    assert out["advantage_probability"] == pytest.approx(ref["advantage"])


def test_a_judge_that_knows_the_truth_wins_as_in_the_paper():
    passes = 0
    for seed in range(20):
        human, truth = _crowd(seed)
        judge = {item: float(value) for item, value in enumerate(truth)}  # continuous, better than any rater
        out = judge_agreement.alt_test(human, judge)
        _agrees(out, reference_alt_test(human, judge, "neg_rmse"))
        assert out["scoring"] == "neg_rmse"
        passes += out["passes"]
    assert passes >= 16  # of 20 simulated campaigns (6 raters, 100 items each rated by 3)


@pytest.mark.parametrize("seed", range(3))
def test_a_judge_of_noise_loses(seed):
    human, _ = _crowd(seed)
    rng = np.random.default_rng(100 + seed)
    judge = {item: float(rng.uniform(1, 5)) for item in range(100)}
    out = judge_agreement.alt_test(human, judge)
    _agrees(out, reference_alt_test(human, judge, "neg_rmse"))
    assert not out["passes"]


def test_raters_with_too_few_items_are_left_out_and_counted():
    human, truth = _crowd(1, few=("r4", "r5"))
    judge = {item: float(value) for item, value in enumerate(truth)}
    out = judge_agreement.alt_test(human, judge)
    _agrees(out, reference_alt_test(human, judge, "neg_rmse"))
    left_out = {row["rater"] for row in out["raters"] if row["judge_wins"] is None}
    assert left_out == {"r4", "r5"} and out["raters_left_out"] == 2 and out["raters_tested"] == 4
    assert out["winning_rate"] == sum(row["judge_wins"] for row in out["raters"] if row["judge_wins"] is not None) / 4
    assert out["passes"]  # counted as losses, 2 of 6 raters would have been lost to the judge for nothing


def test_categorical_labels_are_scored_by_accuracy():
    rng = np.random.default_rng(5)
    labels = rng.integers(0, 3, 80)
    human = {f"r{k}": {} for k in range(5)}
    for item in range(80):
        for rater in rng.choice(list(human), 3, replace=False):
            human[rater][item] = float(labels[item] if rng.random() < 0.7 else rng.integers(0, 3))
    judge = {item: float(label) for item, label in enumerate(labels)}
    out = judge_agreement.alt_test(human, judge, scoring="accuracy")
    _agrees(out, reference_alt_test(human, judge, "accuracy"))
    assert out["passes"]
    with pytest.raises(ValueError, match="unknown scoring function"):
        judge_agreement.alt_test(human, judge, scoring="mae")


def test_benjamini_yekutieli_rejects_at_equality():
    assert judge_agreement.by_rejections([0.05], 0.05) == [True]  # m = 1: the threshold is q itself
    h2 = 1 + 1 / 2
    assert judge_agreement.by_rejections([2 * 0.05 / (2 * h2), 0.9], 0.05) == [False, False]
    assert judge_agreement.by_rejections([0.9, 1 * 0.05 / (2 * h2)], 0.05) == [False, True]
    assert judge_agreement.by_rejections([], 0.05) == []
