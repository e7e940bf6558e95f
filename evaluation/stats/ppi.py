"""Prediction-powered intervals for a mean: an automatic judge's scores on every instance, human
ratings on a random subset. Pure: numpy, scipy; no Django.

Angelopoulos, Bates, Fannjiang, Jordan and Zrnic, "Prediction-powered inference" (Science 2023),
and Angelopoulos, Duchi and Zrnic, "PPI++: Efficient prediction-powered inference" (2023). With n
labelled instances (human score y, judge score f) and N unlabelled ones (judge score f~), drawn
from the same instances at random (disjoint):

    theta(lambda) = mean(y) + lambda * (mean(f~) - mean(f))
    Var = Var(y - lambda f) / n + lambda^2 Var(f~) / N

lambda = 1 is PPI (the judge's mean on the unlabelled set, corrected by the rectifier
mean(f - y) on the labelled one); lambda = 0 is the human-only mean; PPI++ takes the lambda that
minimises the variance, Cov(y, f) / ((1 + n / N) Var(f)) (estimated, then clipped to [0, 1]: a
judge that does not help gets weight 0, so the interval is never much wider than the humans'
alone). Every choice of lambda is unbiased for the mean of y, which is why the interval is valid
however good or bad the judge: its quality only moves the width. The interval is the normal one
(z_{1-alpha/2} x the standard error), as in the papers.

A paired difference of two systems is the same estimator on the per-instance differences (human
difference y_a - y_b on the instances both have human ratings for, judge difference f_a - f_b).
Tested against closed forms and by simulation in tests/evaluation/test_ppi.py.

`difference_interval` is the difference of each system's own estimate, each on the instances it
has (an unfinished campaign rates systems on partly overlapping sets): theta_a(lambda) -
theta_b(lambda), one lambda for both. Its variance is Var(mean_a) + Var(mean_b) - 2 Cov(mean_a,
mean_b) for each of its means, the covariance of two means over partly overlapping sets estimated
from the instances they share: sum over shared i of (x_ai - mean_a)(x_bi - mean_b) / (n_a n_b),
times sqrt(n_a n_b / ((n_a - 1)(n_b - 1))) so that on one common set it is the paired differences'
ddof = 1 variance. Written per instance, the estimator minus its centre is a sum of one term per
instance (each system's deviation over its count), instances are independent, and the variance is
the sum of the terms' squares; a shared instance brings both systems' deviations into one term,
so the covariance is in it. Where both systems have the same labelled and unlabelled instances it
is `mean_interval` on the paired differences, lambda included.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
from scipy import stats


@dataclass(frozen=True)
class Interval:
    estimate: float
    low: float
    high: float
    lam: float
    labelled: int
    unlabelled: int

    @property
    def width(self) -> float:
        return self.high - self.low

    def as_dict(self) -> dict:
        return {**asdict(self), "width": self.width}


def tuned_lambda(y, f, f_unlabelled) -> float:
    """The variance-minimising weight of PPI++ (module docstring), clipped to [0, 1]."""
    y, f, fu = (np.asarray(v, dtype=float) for v in (y, f, f_unlabelled))
    n, N = len(y), len(fu)
    pooled = np.concatenate([f, fu])
    variance = pooled.var(ddof=1) if len(pooled) > 1 else 0.0
    if variance <= 0 or n < 2:
        return 0.0
    covariance = np.cov(y, f, ddof=1)[0, 1]
    return float(np.clip(covariance / ((1 + n / N) * variance), 0.0, 1.0))


def mean_interval(y, f, f_unlabelled, alpha=0.05, lam="tuned") -> Interval:
    """The interval for the mean of y at confidence 1 - alpha; `lam` is a number (1: PPI, 0: the
    human-only interval) or "tuned" (PPI++)."""
    y, f, fu = (np.asarray(v, dtype=float) for v in (y, f, f_unlabelled))
    if len(y) != len(f):
        raise ValueError("the labelled human and judge scores must be aligned")
    if len(y) < 2:
        raise ValueError("at least two labelled instances are needed")
    n, N = len(y), len(fu)
    if lam == "tuned":
        lam = tuned_lambda(y, f, fu) if N > 1 else 0.0
    lam = float(lam)
    if N < 2 and lam:
        raise ValueError("at least two unlabelled instances are needed for the judge to help")
    estimate = y.mean() + (lam * (fu.mean() - f.mean()) if lam else 0.0)
    variance = (y - lam * f).var(ddof=1) / n + (lam**2 * fu.var(ddof=1) / N if lam else 0.0)
    half = stats.norm.ppf(1 - alpha / 2) * math.sqrt(variance)
    return Interval(float(estimate), float(estimate - half), float(estimate + half), lam, n, N)


def split(human, judge):
    """(y, f, f~) from per-instance arrays: `human` NaN where there is no human score, `judge` NaN
    where the judge did not score; an instance with neither is left out."""
    human, judge = np.asarray(human, dtype=float), np.asarray(judge, dtype=float)
    labelled = ~np.isnan(human) & ~np.isnan(judge)
    unlabelled = np.isnan(human) & ~np.isnan(judge)
    return human[labelled], judge[labelled], judge[unlabelled]


def difference_interval(first_human, first_judge, second_human, second_judge, alpha=0.05, lam="tuned") -> Interval:
    """The interval for mean(first) - mean(second), each system's mean on its own instances
    (module docstring): four per-instance arrays aligned on one instance index, human NaN where
    no human scored, judge NaN where the judge did not. `labelled`, `unlabelled`: the instances
    either system has. Raises ValueError with fewer than two labelled instances for a system."""
    first, second = SystemDeviations(first_human, first_judge), SystemDeviations(second_human, second_judge)
    human = first.human - second.human  # each instance's term of the human-only difference
    judge_labelled = first.judge_labelled - second.judge_labelled
    judge_unlabelled = first.judge_unlabelled - second.judge_unlabelled
    rectifier = judge_unlabelled - judge_labelled
    centre = first.human_mean - second.human_mean
    shift = (first.unlabelled_mean - second.unlabelled_mean) - (first.labelled_mean - second.labelled_mean)
    can_use_judge = min(first.unlabelled.sum(), second.unlabelled.sum()) > 1
    if lam == "tuned":
        lam = _difference_lambda(first, second, human, judge_labelled, judge_unlabelled, centre) if can_use_judge else 0.0
    lam = float(lam)
    if lam and not can_use_judge:
        raise ValueError("at least two unlabelled instances per system are needed for the judge to help")
    estimate = centre + (lam * shift if lam else 0.0)
    variance = float(np.sum((human + lam * rectifier) ** 2))
    half = stats.norm.ppf(1 - alpha / 2) * math.sqrt(variance)
    labelled = int((first.labelled | second.labelled).sum())
    unlabelled = int((first.unlabelled | second.unlabelled).sum())
    return Interval(float(estimate), float(estimate - half), float(estimate + half), lam, labelled, unlabelled)


class SystemDeviations:
    """One system's per-instance terms: its value's deviation from its mean over its own instances,
    over their count, times sqrt(n / (n - 1)) (so the sum of squares is the ddof = 1 variance of the
    mean); 0 on the instances it does not have."""

    def __init__(self, human, judge):
        human, judge = np.asarray(human, dtype=float), np.asarray(judge, dtype=float)
        if human.shape != judge.shape:
            raise ValueError("the human and judge scores must be aligned")
        self.labelled = ~np.isnan(human) & ~np.isnan(judge)
        self.unlabelled = np.isnan(human) & ~np.isnan(judge)
        if self.labelled.sum() < 2:
            raise ValueError("at least two labelled instances are needed")
        self.human_mean, self.human = _deviations(human, self.labelled)
        self.labelled_mean, self.judge_labelled = _deviations(judge, self.labelled)
        self.unlabelled_mean, self.judge_unlabelled = _deviations(judge, self.unlabelled)


def _deviations(values: np.ndarray, members: np.ndarray) -> tuple[float, np.ndarray]:
    """(the mean over `members`, each member's deviation / n * sqrt(n / (n - 1)), 0 elsewhere)."""
    n = int(members.sum())
    terms = np.zeros(len(values))
    if n == 0:
        return 0.0, terms
    mean = float(values[members].mean())
    terms[members] = (values[members] - mean) / n * (math.sqrt(n / (n - 1)) if n > 1 else 0.0)
    return mean, terms


def _difference_lambda(first, second, human, judge_labelled, judge_unlabelled, centre) -> float:
    """PPI++'s `tuned_lambda` on the pair's per-instance difference columns: each term scaled back
    to a column over the instances either system has (on one common set, exactly the paired
    differences y_a - y_b, f_a - f_b and f~_a - f~_b, so a finished campaign's lambda is unchanged)."""
    labelled, unlabelled = first.labelled | second.labelled, first.unlabelled | second.unlabelled
    n, N = int(labelled.sum()), int(unlabelled.sum())
    to_column = math.sqrt(n * (n - 1))
    y = human[labelled] * to_column + centre
    f = judge_labelled[labelled] * to_column + (first.labelled_mean - second.labelled_mean)
    fu = judge_unlabelled[unlabelled] * math.sqrt(N * (N - 1)) + (first.unlabelled_mean - second.unlabelled_mean)
    return tuned_lambda(y, f, fu)
