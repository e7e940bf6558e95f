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
