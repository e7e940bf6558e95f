"""Prediction-powered rank sets: which ranks each system may hold, with a stated coverage, from
human judgements on a random subset of the instances and an automatic judge's on all of them.
Pure: numpy, scipy; no Django.

Chatzi, Straitouri, Thejaswi and Gomez-Rodriguez, "Prediction-Powered Ranking of Large Language
Models" (NeurIPS 2024). Each system s has a quality theta_s: its mean human score (rating
campaigns) or its win rate, the share of its comparisons it wins (pairwise). With n instances
judged by humans (Y, and the judge's F on the same instances) and N judged only by the judge (F~),
the prediction-powered estimate is, per system,

    theta_s = mean(Y_s) + lambda_s (mean(F~_s) - mean(F_s))

(`ppi`: lambda = 1 is PPI, as in the paper; "tuned" takes PPI++'s variance-minimising lambda per
system, `ppi.tuned_lambda`; lambda = 0 is the human-only estimate), with covariance
Cov(Y - lambda F) / n + Cov(lambda F~) / N across systems. Its confidence ellipsoid at level
1 - alpha (chi-square with S degrees of freedom, as the paper) bounds every pairwise difference
at once: s is surely above t when theta_s - theta_t - c sd(theta_s - theta_t) > 0, c = sqrt of that
chi-square quantile. A system's rank set runs from 1 + (systems surely above it) to S - (systems
surely below it). Then, asymptotically, with probability at least 1 - alpha every system's true
rank lies in its set, however good or bad the judge: the judge moves only the width.

Pairwise data: an instance is one comparison; y_s is s's share of the win (1, 1/2, 0; 0 when s was
not in it) and d_s = 1 when s took part. The win rate is E[y_s] / E[d_s]; which systems meet is
the design (known on every instance, human-judged or not), so E[d_s] is the share of all
instances s takes part in, and the estimate and its covariance are those of E[y_s] divided by it.
Validated by seeded simulation in tests/evaluation/test_ranksets.py (coverage at nominal, width
against human-only).
"""
from __future__ import annotations

import numpy as np
from scipy import stats

from evaluation.stats import ppi

OUTCOME_SHARE = {"a": 1.0, "b": 0.0, "tie": 0.5}


def _check(Y, F, Fu):
    Y, F, Fu = (np.asarray(v, dtype=float) for v in (Y, F, Fu))
    if Y.ndim != 2 or F.shape != Y.shape or (Fu.size and (Fu.ndim != 2 or Fu.shape[1] != Y.shape[1])):
        raise ValueError("human and judge scores must be tables [instances, systems] over the same systems")
    if len(Y) < 2:
        raise ValueError("at least two instances need human judgements")
    if np.isnan(Y).any() or np.isnan(F).any() or (Fu.size and np.isnan(Fu).any()):
        raise ValueError("every system needs a score on every instance used (human and judge on the labelled ones, judge on the others)")
    return Y, F, Fu.reshape(-1, Y.shape[1])


def mean_estimate(Y, F, Fu, lam="ppi"):
    """(estimate [S], covariance [S, S], lambdas [S]) of the per-system means (module docstring).
    `lam`: "ppi" (1), "tuned" (PPI++ per system), "human" (0), or a number."""
    Y, F, Fu = _check(Y, F, Fu)
    n, N, S = len(Y), len(Fu), Y.shape[1]
    if lam == "human" or N < 2:
        lams = np.zeros(S)
    elif lam == "ppi":
        lams = np.ones(S)
    elif lam == "tuned":
        lams = np.array([ppi.tuned_lambda(Y[:, s], F[:, s], Fu[:, s]) for s in range(S)])
    else:
        lams = np.full(S, float(lam))
    estimate = Y.mean(0) + (lams * (Fu.mean(0) - F.mean(0)) if N else 0.0)
    covariance = np.atleast_2d(np.cov(Y - lams * F, rowvar=False)) / n
    if N >= 2 and lams.any():
        covariance = covariance + np.atleast_2d(np.cov(lams * Fu, rowvar=False)) / N
    return estimate, covariance, lams


def rank_sets(estimate, covariance, alpha=0.05) -> list[tuple[int, int]]:
    """(best, worst) rank of each system (1 = highest estimate) at simultaneous level 1 - alpha."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie strictly between 0 and 1; got {alpha!r}")
    theta = np.asarray(estimate, dtype=float)
    sigma = np.asarray(covariance, dtype=float)
    S = len(theta)
    c = np.sqrt(stats.chi2.ppf(1 - alpha, df=S))
    variance = np.diag(sigma)[:, None] + np.diag(sigma)[None, :] - 2 * sigma
    margin = c * np.sqrt(np.maximum(variance, 0))
    surely_above = (theta[None, :] - theta[:, None]) > margin  # [i, j]: j surely above i
    np.fill_diagonal(surely_above, False)
    above = surely_above.sum(1)
    below = surely_above.sum(0)
    return [(int(1 + above[i]), int(S - below[i])) for i in range(S)]


def _rows(systems, estimate, covariance, sets, lams):
    return [
        {"system": s, "estimate": float(estimate[k]), "se": float(np.sqrt(max(covariance[k, k], 0))), "rank_low": low, "rank_high": high,
         "lambda": float(lams[k])}
        for k, (s, (low, high)) in enumerate(zip(systems, sets, strict=True))
    ]


def ratings_rank_sets(systems, Y, F, Fu, alpha=0.05, lam="ppi") -> dict:
    """Rank sets of a rating campaign: Y, F [n, S] human and judge mean scores on the human-rated
    instances, Fu [N, S] the judge's on the others; beside them the human-only sets."""
    return _both(list(systems), Y, F, Fu, alpha, lam, scale=None)


def pairwise_tables(systems, human, judge_labelled, judge_unlabelled):
    """(Y, F, Fu, participation [S]) for the pairwise case. `human`, `judge_labelled`: aligned
    lists of (system_a, system_b, outcome) for the human-judged comparisons (the judge's verdict on
    the same pair); `judge_unlabelled`: the judge's verdicts on the others."""
    index = {s: k for k, s in enumerate(systems)}
    if len(human) != len(judge_labelled):
        raise ValueError("the judge's verdicts must be given for every human-judged comparison, in the same order")

    def table(rows, check=None):
        out = np.zeros((len(rows), len(systems)))
        taking_part = np.zeros((len(rows), len(systems)))
        for k, (a, b, outcome) in enumerate(rows):
            if a not in index or b not in index or a == b:
                raise ValueError(f"comparison {k}: systems must be two different ones of {', '.join(systems)}")
            if outcome not in OUTCOME_SHARE:
                raise ValueError(f"comparison {k}: unknown outcome {outcome!r}; use 'a', 'b' or 'tie'")
            if check is not None and {a, b} != set(check[k][:2]):
                raise ValueError(f"comparison {k}: the judge's pair is not the humans' pair")
            out[k, index[a]], out[k, index[b]] = OUTCOME_SHARE[outcome], 1 - OUTCOME_SHARE[outcome]
            taking_part[k, index[a]] = taking_part[k, index[b]] = 1
        return out, taking_part

    Y, part_l = table(human)
    F, _ = table(judge_labelled, check=human)
    Fu, part_u = table(judge_unlabelled)
    participation = np.concatenate([part_l, part_u]).mean(0)
    if (participation == 0).any():
        missing = [s for s, p in zip(systems, participation, strict=True) if p == 0]
        raise ValueError(f"system(s) never compared: {', '.join(missing)}")
    return Y, F, Fu, participation


def pairwise_rank_sets(systems, human, judge_labelled, judge_unlabelled, alpha=0.05, lam="ppi") -> dict:
    """Rank sets of win rates from pairwise comparisons (module docstring), beside the human-only ones."""
    systems = list(systems)
    Y, F, Fu, participation = pairwise_tables(systems, human, judge_labelled, judge_unlabelled)
    return _both(systems, Y, F, Fu, alpha, lam, scale=participation)


def _both(systems, Y, F, Fu, alpha, lam, scale) -> dict:
    out = {"alpha": alpha, "coverage": 1 - alpha, "labelled": int(len(Y)), "unlabelled": int(len(np.asarray(Fu))),
           "method": (f"prediction-powered rank sets (Chatzi et al., NeurIPS 2024): {'PPI++' if lam == 'tuned' else 'PPI'} "
                      f"estimates of each system's {'mean score' if scale is None else 'win rate'}, simultaneous {1 - alpha:.0%} "
                      "ellipsoid (chi-square, one degree of freedom per system); every true rank lies in its set with at least that probability "
                      "(a conservative guarantee: the sets are often wider than the level needs)")}
    for name, how in (("ppi", lam), ("human_only", "human")):
        estimate, covariance, lams = mean_estimate(Y, F, Fu, how)
        if scale is not None:
            estimate, covariance = estimate / scale, covariance / np.outer(scale, scale)
        sets = rank_sets(estimate, covariance, alpha)
        out[name] = _rows(systems, estimate, covariance, sets, lams)
    out["mean_size"] = {name: float(np.mean([r["rank_high"] - r["rank_low"] + 1 for r in out[name]])) for name in ("ppi", "human_only")}
    return out
