"""How well an automatic judge agrees with the human raters. Pure: numpy, scipy; no Django.

Correlations (Pearson, Spearman, Kendall's tau-b) at two levels: items (a system's instance: the
judge's score against the mean human rating) and systems (the judge's mean against the humans'
mean, over the systems).

The alternative-annotator test (Calderon, Reichart and Dror, "The Alternative Annotator Test for
LLM-as-a-Judge", ACL 2025): could the judge replace one of the raters? For each rater j, on the
items j rated together with at least one other rater, compare two predictors of the *other*
raters: the judge and rater j. An item's alignment score of a predictor is the scoring function
the organizer picks, as in the authors' code: `neg_rmse` (numeric ratings, the default: minus the
root mean squared difference from the other raters' ratings) or `accuracy` (categorical: the
share of the other raters it equals). The judge wins the item when its score is at least rater j's (W_f = 1), rater j wins
when theirs is at least the judge's (W_h = 1; a tie is a win for both). The advantage
probabilities are rho_f = mean W_f and rho_h = mean W_h. The test of rater j is one-sided,
H0: rho_f <= rho_h - epsilon against H1: rho_f > rho_h - epsilon (epsilon, the cost-benefit
margin, favours the cheaper judge: 0.1 for crowd workers, 0.15 for trained raters, 0.2 for experts,
as the paper suggests), a paired t-test of d = W_h - W_f - epsilon < 0 over the items. The p-values
of all raters are corrected with Benjamini-Yekutieli (valid under any dependence: the raters share
items); the winning rate omega is the share of raters whose H0 is rejected at q, and the judge
passes when omega >= 0.5. A rejection is p_BY <= q (the paper's step-up with <=). The paper asks
for at least 3 raters and about 30 items each; a rater with fewer items is left out of the test
and of the winning rate (listed, and counted in `raters_left_out`), as the authors' code does.
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np
from scipy import stats

from evaluation.stats.scoring import MIN_CORRELATION_POINTS

MIN_ITEMS = 30
SCORING_FUNCTIONS = ("neg_rmse", "accuracy")
DEFAULT_SCORING = "neg_rmse"
DEFAULT_EPSILON = 0.1
DEFAULT_Q = 0.05


def correlations(judge, human) -> dict:
    """Pearson, Spearman and Kendall between two aligned score lists (NaN pairs left out); with
    fewer than MIN_CORRELATION_POINTS pairs the coefficients stand but the p-values are None and
    `too_few` is set (pages say "too few")."""
    judge, human = np.asarray(judge, dtype=float), np.asarray(human, dtype=float)
    keep = ~np.isnan(judge) & ~np.isnan(human)
    judge, human = judge[keep], human[keep]
    too_few = int(keep.sum()) < MIN_CORRELATION_POINTS
    out: dict = {"n": int(keep.sum()), "too_few": too_few}
    constant = len(judge) < 3 or np.ptp(judge) == 0 or np.ptp(human) == 0
    for name, function in (("pearson", stats.pearsonr), ("spearman", stats.spearmanr), ("kendall", stats.kendalltau)):
        if constant:
            out[name] = {"r": None, "p": None}
        else:
            result = function(judge, human)
            out[name] = {"r": float(result.statistic), "p": None if too_few else float(result.pvalue)}
    return out


def by_rejections(pvalues, q) -> list[bool]:
    """Benjamini-Yekutieli step-up as the paper states it: reject the k smallest p-values for the
    largest k with p_(k) <= k q / (m H_m), H_m = 1 + 1/2 + ... + 1/m."""
    p = np.asarray(pvalues, dtype=float)
    m = len(p)
    if m == 0:
        return []
    order = np.argsort(p, kind="stable")
    thresholds = np.arange(1, m + 1) * q / (m * np.sum(1.0 / np.arange(1, m + 1)))
    passing = np.nonzero(p[order] <= thresholds)[0]
    rejected = np.zeros(m, dtype=bool)
    if len(passing):
        rejected[order[: passing[-1] + 1]] = True
    return rejected.tolist()


def _alignment(prediction: float, others: np.ndarray, scoring: str) -> float:
    if scoring == "accuracy":
        return float((others == prediction).mean())
    return -float(np.sqrt(((others - prediction) ** 2).mean()))


def _rater_test(rater, raters_of: dict, judge: dict, epsilon: float, min_items: int, scoring: str) -> dict:
    """One rater's row: on the items others rated too, how often the judge aligns with the others
    at least as well as this rater (rho_judge) and the reverse (rho_human); with enough items, the
    one-sided t-test p of the rater's advantage being under epsilon."""
    w_judge, w_human = [], []
    for item, scores in raters_of.items():
        if rater not in scores or len(scores) < 2 or item not in judge:
            continue
        others = np.array([v for r, v in scores.items() if r != rater])
        judge_alignment = _alignment(float(judge[item]), others, scoring)
        human_alignment = _alignment(scores[rater], others, scoring)
        w_judge.append(judge_alignment >= human_alignment)
        w_human.append(human_alignment >= judge_alignment)
    judge_wins, human_wins = np.array(w_judge, dtype=float), np.array(w_human, dtype=float)
    row = {"rater": str(rater), "items": len(judge_wins)}
    if len(judge_wins):
        row.update(rho_judge=float(judge_wins.mean()), rho_human=float(human_wins.mean()))
    if len(judge_wins) >= min_items:
        d = human_wins - judge_wins - epsilon
        if np.ptp(d) == 0:  # every item alike: the t statistic is undefined; the sign decides
            p = 0.0 if d[0] < 0 else 1.0
        else:
            p = float(stats.ttest_1samp(d, 0.0, alternative="less").pvalue)
        row["p"] = p
    else:
        row["left_out"] = f"fewer than {min_items} items shared with another rater"
    return row


def alt_test(human: dict, judge: dict, epsilon=DEFAULT_EPSILON, q=DEFAULT_Q, min_items=MIN_ITEMS, scoring=DEFAULT_SCORING) -> dict:
    """`human`: {rater: {item: score}}; `judge`: {item: score}. The per-rater tests and the verdict
    (module docstring)."""
    if scoring not in SCORING_FUNCTIONS:
        raise ValueError(f"unknown scoring function {scoring!r}: one of {', '.join(SCORING_FUNCTIONS)}")
    if len(human) < 2:
        raise ValueError("the alternative-annotator test needs at least two raters (the paper asks for three)")
    raters_of: defaultdict[object, dict] = defaultdict(dict)
    for rater, scores in human.items():
        for item, score in scores.items():
            raters_of[item][rater] = float(score)
    rows = [_rater_test(rater, raters_of, judge, epsilon, min_items, scoring) for rater in human]
    tested = [row for row in rows if "p" in row]
    if tested:
        pvalues = [row["p"] for row in tested]
        adjusted = stats.false_discovery_control(pvalues, method="by")  # shown; the verdict is the step-up itself
        for row, p, rejected in zip(tested, adjusted, by_rejections(pvalues, q), strict=True):
            row["p_adjusted"] = float(p)
            row["judge_wins"] = bool(rejected)
    for row in rows:
        row.setdefault("judge_wins", None)  # None: left out, not a loss
    winning_rate = sum(row["judge_wins"] for row in tested) / len(tested) if tested else None
    return {
        "epsilon": epsilon,
        "q": q,
        "scoring": scoring,
        "raters": rows,
        "raters_tested": len(tested),
        "raters_left_out": len(rows) - len(tested),
        "winning_rate": winning_rate,
        "advantage_probability": float(np.mean([row["rho_judge"] for row in tested])) if tested else None,
        "passes": bool(tested) and winning_rate is not None and winning_rate >= 0.5,
    }
