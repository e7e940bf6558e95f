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
Cov(Y - lambda F) / n + Cov(lambda F~) / N across systems. Where the systems were rated on
different instances (an unfinished campaign), `own_instances_estimate` takes each system's estimate
on its own instances and their covariance from the instances they share (`ppi.difference_interval`'s
terms); on one common set it is the same.

Which system is surely above which (`rank_sets`): a step-down max-t test (Romano and Wolf 2005) of
the one-sided statements "s is above t", t_st = (theta_s - theta_t) / sd(theta_s - theta_t), the
law of the differences under no difference taken from seeded draws Z ~ N(0, covariance). Its
critical value for the statements still open is the 1 - (alpha - beta) quantile of
max (Z_s - Z_t) / sd_st + shift_st over them; every open statement above it is made, and the step
repeats on the rest until none is. The shift is Romano, Shaikh and Wolf's two-step (Econometrica
2014), beta = alpha / 10: min(0, t_st + c_beta), c_beta the 1 - beta quantile of the largest
difference, so a statement whose difference is surely far below zero (the reverse of one already
plain) no longer widens the others' critical value. A system's rank set runs from
1 + (systems surely above it) to S - (systems surely below it). The paper's chi-square ellipsoid
bounds every linear function of theta, far more than the pairwise statements a ranking needs, so
its sets covered the true ranking nearly always at any level.

What is guaranteed (asymptotically, however good or bad the judge: it moves only the width):
every system's true rank lies in its set, all at once, with probability at least 1 - alpha. The
sets miss only when a statement is wrong, and a wrong statement needs the largest shifted
difference of the true nulls above its critical value (probability alpha - beta) or a first step
that failed (beta). Where systems tie, a wrong statement is easy to make and the probability is
about 1 - alpha + beta; it rises toward 1 as the systems move apart, where the sets shrink to
single ranks. Near a tie (distinct means far closer than a standard error) only the statement of
the wrong sign misses, so the sets cover about 1 - (alpha - beta) / 2 there: sets that hold
1 - alpha at an exact tie, where either sign misses, cannot miss a near tie with probability
alpha in both of its orders at once.

Pairwise data: an instance is one comparison; y_s is s's share of the win (1, 1/2, 0; 0 when s was
not in it) and d_s = 1 when s took part. The win rate is E[y_s] / E[d_s]; which systems meet is
the design (known on every instance, human-judged or not), so E[d_s] is the share of all
instances s takes part in, and the estimate and its covariance are those of E[y_s] divided by it.
Validated by seeded simulation in tests/evaluation/test_ranksets.py (coverage within a two-sided
band around nominal where systems tie and around 1 - (alpha - beta) / 2 at near ties, finished
campaigns and each system on its own instances; width against human-only and the ellipsoid).
"""
from __future__ import annotations

import functools

import numpy as np

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


def own_instances_estimate(human, judge, lam="ppi"):
    """(estimate [S], covariance [S, S], lambdas [S]) like `mean_estimate`, each system on its own
    instances: `human`, `judge` [I, S] over one instance index, human NaN where that system has no
    human score, judge NaN where the judge did not score it (an unfinished campaign rates each
    system on its own instances). Each estimate is that system's own (`ppi.mean_interval`'s with
    its lambda); the covariance of two is the sum over instances of the product of their terms
    (`ppi.SystemDeviations`), so two systems covary through the instances they share. With every
    system on the same instances it is `mean_estimate`'s."""
    human, judge = np.asarray(human, dtype=float), np.asarray(judge, dtype=float)
    if human.ndim != 2 or judge.shape != human.shape:
        raise ValueError("human and judge scores must be tables [instances, systems] over the same systems")
    systems = [ppi.SystemDeviations(human[:, k], judge[:, k]) for k in range(human.shape[1])]
    usable = np.array([s.unlabelled.sum() > 1 for s in systems])
    if lam == "human":
        lams = np.zeros(len(systems))
    elif lam == "tuned":
        lams = np.array([ppi.tuned_lambda(human[s.labelled, k], judge[s.labelled, k], judge[s.unlabelled, k]) for k, s in enumerate(systems)])
    else:
        lams = np.full(len(systems), 1.0 if lam == "ppi" else float(lam))
    lams = np.where(usable, lams, 0.0)
    estimate = np.array([s.human_mean + lam_s * (s.unlabelled_mean - s.labelled_mean) for s, lam_s in zip(systems, lams, strict=True)])
    terms = np.stack([s.human + lam_s * (s.judge_unlabelled - s.judge_labelled) for s, lam_s in zip(systems, lams, strict=True)])  # [S, I]
    return estimate, terms @ terms.T, lams


#: Seeded normal draws behind each critical value: the quantile's own error is about
#: sqrt(alpha (1 - alpha) / draws) in probability (0.002 at alpha = 0.1).
DRAWS = 20_000
SEED = 20240
#: Romano, Shaikh and Wolf's beta as a share of alpha (their recommendation, 1/10).
FIRST_STEP_SHARE = 0.1


@functools.lru_cache(maxsize=8)
def _standard_normal(draws: int, rows: int, seed: int) -> np.ndarray:
    """[rows, draws]: the same seeded draws for every call of one shape (a page shows the same sets
    on every request); read-only, being shared; single precision, ample for a quantile."""
    z = np.random.default_rng(seed).standard_normal((rows, draws), dtype=np.float32)
    z.flags.writeable = False
    return z


def _combine(weights, draws):
    """weights @ draws by one multiply-add per system: at these sizes BLAS's threads only contend
    with each other on a shared machine."""
    out = weights[:, :1] * draws[0]
    for k in range(1, len(draws)):
        out += weights[:, k : k + 1] * draws[k]
    return out


def _pair_sd(sigma):
    variance = np.diag(sigma)[:, None] + np.diag(sigma)[None, :] - 2 * sigma
    return np.sqrt(np.maximum(variance, 0))


def rank_sets(estimate, covariance, alpha=0.05, draws=DRAWS, seed=SEED) -> list[tuple[int, int]]:
    """(best, worst) rank of each system (1 = highest estimate): the step-down max-t sets of the
    module docstring, every true rank inside its set with probability at least 1 - alpha."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie strictly between 0 and 1; got {alpha!r}")
    theta = np.asarray(estimate, dtype=float)
    sigma = np.asarray(covariance, dtype=float)
    S = len(theta)
    sd = _pair_sd(sigma)
    first, second = np.nonzero(~np.eye(S, dtype=bool))  # ordered pairs (s, t): "s is above t"
    # A pair whose difference has no variance is decided by its sign alone (equal: never).
    exact = sd[first, second] <= 1e-12 * max(float(np.abs(sigma).max()), 1e-300)
    above = np.zeros((S, S), dtype=bool)  # [s, t]: s surely above t
    above[first[exact], second[exact]] = theta[first[exact]] > theta[second[exact]]
    first, second = first[~exact], second[~exact]
    if len(first):
        t_stat = (theta[first] - theta[second]) / sd[first, second]
        # Draws of Z ~ N(0, covariance) through its eigen decomposition (a covariance may be singular),
        # taken straight to the standardised differences of the open pairs.
        values, vectors = np.linalg.eigh(sigma)
        root = vectors * np.sqrt(np.maximum(values, 0))
        to_pairs = (root[first] - root[second]) / sd[first, second][:, None]
        null_t = _combine(to_pairs.astype(np.float32), _standard_normal(draws, S, seed))  # [pairs, draws]
        order = lambda level: min(int(np.ceil(level * draws)), draws) - 1  # noqa: E731  # the level's order statistic
        beta = alpha * FIRST_STEP_SHARE
        # First step: at level 1 - beta, every difference is within c_beta sd of its estimate, so a
        # statement whose difference is surely far below zero cannot be the one made wrongly.
        c_beta = np.partition(null_t.max(axis=0), order(1 - beta))[order(1 - beta)]
        shift = np.minimum(0.0, t_stat + c_beta).astype(np.float32)[:, None]
        at = order(1 - (alpha - beta))
        open_ = np.ones(len(first), dtype=bool)
        while open_.any():
            critical = np.partition((null_t[open_] + shift[open_]).max(axis=0), at)[at]
            made = open_ & (t_stat > critical)
            if not made.any():
                break
            open_ &= ~made
        made = ~open_
        above[first[made], second[made]] = True
    surely_above_me = above.sum(0)
    surely_below_me = above.sum(1)
    return [(int(1 + surely_above_me[i]), int(S - surely_below_me[i])) for i in range(S)]


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


def ratings_rank_sets_on_own_instances(systems, human, judge, alpha=0.05, lam="ppi") -> dict:
    """Rank sets of a rating campaign whose systems were rated on different instances:
    `human`, `judge` [I, S] with NaN where absent (`own_instances_estimate`); beside them the
    human-only sets, each system's estimate its own human mean. `labelled`: the instances some
    system has a human score on; `unlabelled`: those some system has only the judge's on."""
    systems = list(systems)
    human, judge = np.asarray(human, dtype=float), np.asarray(judge, dtype=float)
    if human.ndim != 2 or judge.shape != human.shape or human.shape[1] != len(systems):
        raise ValueError("human and judge scores must be tables [instances, systems] over the systems named")
    has_judge = ~np.isnan(judge)
    estimates = {"ppi": own_instances_estimate(human, judge, lam), "human_only": own_instances_estimate(human, judge, "human")}
    labelled = int((has_judge & ~np.isnan(human)).any(axis=1).sum())
    unlabelled = int((has_judge & np.isnan(human)).any(axis=1).sum())
    return _report(systems, estimates, alpha, lam, None, labelled, unlabelled)


def pairwise_tables(systems, human, judge_labelled, judge_unlabelled):
    """(Y, F, Fu, participation [S]) for the pairwise case. `human`, `judge_labelled`: aligned
    lists of (system_a, system_b, outcome) for the human-judged comparisons (the judge's verdict on
    the same pair); `judge_unlabelled`: the judge's verdicts on the others. An outcome is 'a', 'b',
    'tie', or a number from 0 to 1: a's share of the win (several humans' votes on one pair, or a
    judge's probability that a is preferred)."""
    systems = list(systems)
    index = {s: k for k, s in enumerate(systems)}
    if len(human) != len(judge_labelled):
        raise ValueError("the judge's verdicts must be given for every human-judged comparison, in the same order")

    def columns(rows):
        a = np.array([index.get(row[0], -1) for row in rows], dtype=int)
        b = np.array([index.get(row[1], -1) for row in rows], dtype=int)
        bad = (a < 0) | (b < 0) | (a == b)
        if bad.any():
            raise ValueError(f"comparison {int(np.argmax(bad))}: systems must be two different ones of {', '.join(map(str, systems))}")
        share = np.array([_share(row[2], k) for k, row in enumerate(rows)], dtype=float)
        return a, b, share

    def table(a, b, share):
        out = np.zeros((len(a), len(systems)))
        taking_part = np.zeros_like(out)
        rows = np.arange(len(a))
        out[rows, a], out[rows, b] = share, 1 - share
        taking_part[rows, a] = taking_part[rows, b] = 1
        return out, taking_part

    human_a, human_b, human_share = columns(human)
    judge_a, judge_b, judge_share = columns(judge_labelled)
    crossed = (judge_a == human_b) & (judge_b == human_a)  # the same pair named the other way round
    wrong = ~crossed & ((judge_a != human_a) | (judge_b != human_b))
    if wrong.any():
        raise ValueError(f"comparison {int(np.argmax(wrong))}: the judge's pair is not the humans' pair")
    judge_share = np.where(crossed, 1 - judge_share, judge_share)
    Y, part_l = table(human_a, human_b, human_share)
    F, _ = table(human_a, human_b, judge_share)
    Fu, part_u = table(*columns(judge_unlabelled))
    participation = np.concatenate([part_l, part_u]).mean(0)
    if (participation == 0).any():
        missing = [s for s, p in zip(systems, participation, strict=True) if p == 0]
        raise ValueError(f"system(s) never compared: {', '.join(map(str, missing))}")
    return Y, F, Fu, participation


def _share(outcome, k) -> float:
    if isinstance(outcome, str):
        if outcome not in OUTCOME_SHARE:
            raise ValueError(f"comparison {k}: unknown outcome {outcome!r}; use 'a', 'b', 'tie' or a's share from 0 to 1")
        return OUTCOME_SHARE[outcome]
    share = float(outcome)
    if not 0 <= share <= 1:
        raise ValueError(f"comparison {k}: a's share of the win must lie between 0 and 1; got {outcome!r}")
    return share


def pairwise_rank_sets(systems, human, judge_labelled, judge_unlabelled, alpha=0.05, lam="ppi") -> dict:
    """Rank sets of win rates from pairwise comparisons (module docstring), beside the human-only ones."""
    systems = list(systems)
    Y, F, Fu, participation = pairwise_tables(systems, human, judge_labelled, judge_unlabelled)
    return _both(systems, Y, F, Fu, alpha, lam, scale=participation)


def _both(systems, Y, F, Fu, alpha, lam, scale) -> dict:
    estimates = {name: mean_estimate(Y, F, Fu, how) for name, how in (("ppi", lam), ("human_only", "human"))}
    return _report(systems, estimates, alpha, lam, scale, int(len(Y)), int(len(np.asarray(Fu))))


def _report(systems, estimates: dict, alpha, lam, scale, labelled: int, unlabelled: int) -> dict:
    """The two tables of rank sets from {"ppi", "human_only"} -> (estimate, covariance, lambdas)."""
    out = {"alpha": alpha, "coverage": 1 - alpha, "labelled": labelled, "unlabelled": unlabelled,
           "method": (f"prediction-powered rank sets (Chatzi et al., NeurIPS 2024): {'PPI++' if lam == 'tuned' else 'PPI'} "
                      f"estimates of each system's {'mean score' if scale is None else 'win rate'}, "
                      "step-down max-t test of which system is above which (Romano, Shaikh and Wolf's two-step critical values from seeded "
                      f"normal draws); every true rank lies in its set, all at once, with probability at least {1 - alpha:.0%} "
                      f"(asymptotically): about {1 - alpha * (1 - FIRST_STEP_SHARE):.1%} where systems tie, more as they move apart, "
                      "where the sets shrink to single ranks")}
    for name in ("ppi", "human_only"):
        estimate, covariance, lams = estimates[name]
        if scale is not None:
            estimate, covariance = estimate / scale, covariance / np.outer(scale, scale)
        sets = rank_sets(estimate, covariance, alpha)
        out[name] = _rows(systems, estimate, covariance, sets, lams)
    out["mean_size"] = {name: float(np.mean([r["rank_high"] - r["rank_low"] + 1 for r in out[name]])) for name in ("ppi", "human_only")}
    return out
