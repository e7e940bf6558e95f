"""Adaptive allocation of ratings, replayed on a published human evaluation. Pure: numpy, scipy; no Django.

A campaign draws units (one published rating, or a whole instance) in one seeded order shared by
every system, looks only at prefix lengths fixed in advance (`grid`), and settles a pair when its
interval lies inside the tie margin (tied: the leaderboard of every instance would call it a tie,
checked with a futility boundary of its own) or leaves out 0 (resolved); a system stays active
while a pair of the top-k goal involving it is open. The intervals use a group-sequential critical
value (`boundary`), so they stay valid at a data-dependent stop.

Two targets, said with every verdict (`TARGET_FINITE`, `TARGET_POPULATION`): the campaign's
intervals target the full data's difference (the finite set of instances, every one rated), the
leaderboard's the population of instances (its bootstrap redraws instances, and knowledge-turn
detection with them). "Resolved by the full data" is the leaderboard's own verdict on every
rating (`leaderboard_resolved_pairs`: the report's statistic and bootstrap, through `scoring`),
and the futility line is that verdict's significance line (`population_sd`, its delta-method twin).
The live adaptive campaigns (`evaluation.campaigns.services.adaptive`) apply the same rule (`live_look`).

The argument (units, allocation, why the intervals stay valid) and what the replay measured on
DSTC9 Track 1 are in docs/allocation.md.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

import numpy as np
from scipy import stats

from evaluation.campaigns import dstc9
from evaluation.stats import scoring

QUESTIONS = ("accuracy", "appropriateness")
DEFAULT_SEED = 20210101
DEFAULT_FIRST = 100  # units in the first round: enough for the normal interval to mean something
DEFAULT_GROWTH = 1.3
BOUNDARY_DRAWS = 200_000
LOOK_RULES = ("boundary", "bonferroni")
DEFAULT_LATE_FROM = 0.45
DEFAULT_LATE_STEP = 0.05
DEFAULT_LATE_UNTIL = 0.9
DEFAULT_EARLY_SHARE = 0.2
DEFAULT_FUTILITY_BETA: float | None = 0.05  # the futility check settles a pair the full data's leaderboard resolves as a tie at most this often


UNITS = ("rating", "instance")


@dataclass
class Pool:
    """The published ratings as units a campaign draws: per system (label, kind), the unit score
    x [S, U] (mean over questions; NaN where not rated), the ratings behind it [S, U], the unit's
    weight in its system's score [S, U] (None: all 1) and the Eq. 1 factor k [S] (the weighted mean
    of the scored units times k is S_f). A unit is an instance (`unit` "instance": every rating of
    it) or one published rater's answers on one instance ("rating"; the weights, 1 over the rated
    units of the instance, keep each instance's weight in the score what it is in the full data)."""

    labels: list[str]
    kinds: list[str]
    scores: np.ndarray
    ratings: np.ndarray
    factor: np.ndarray
    weights: np.ndarray | None = None
    unit: str = "instance"
    instances: np.ndarray | None = None  # [U] the instance of each unit (None: units are instances)
    # Knowledge-turn detection per instance, for what the leaderboard resamples along with the ratings
    # (None: a pool without detection, whose population and finite verdicts differ only by the rater noise).
    detection: Detection | None = None
    # The full data's leaderboard verdicts already worked out, by (alpha, bootstrap, seed): the same
    # for every replay of the pool, which is read-only once made.
    _resolved_pairs: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def n_units(self) -> int:
        return self.scores.shape[1]

    @cached_property
    def n_instances(self) -> int:
        """Instances the units come from (asked for every pair at every look: computed once)."""
        return self.n_units if self.instances is None else int((np.bincount(self.instances) > 0).sum())

    def unit_weights(self, s, units) -> np.ndarray:
        """System s's weight of each of `units` (an index array)."""
        return np.ones(len(units)) if self.weights is None else self.weights[s, units]


@dataclass
class Detection:
    """Eq. 1's detection per system and instance [S, N]: `kept` (f and f~ both: the instance is
    scored), `denominator` (f + f~: what it weighs in S_f's denominator), and, for the leaderboard's
    own verdict on the full data (`leaderboard_resolved_pairs`), the per-question instance means
    [S, Q, N], the truth [N] and each system's predictions (None: no detection, the plain mean)."""

    kept: np.ndarray
    denominator: np.ndarray
    question_scores: np.ndarray | None = None
    truth: np.ndarray | None = None
    predicted: list | None = None


def detection_from(truth, predicted: list, question_scores=None) -> Detection:
    """The Detection of systems with these predictions (None for a system without detection)."""
    truth = np.asarray(truth, dtype=bool)
    rows = [np.ones_like(truth) if p is None else np.asarray(p, dtype=bool) for p in predicted]
    kept = np.array([truth & p if pred is not None else np.ones_like(truth) for p, pred in zip(rows, predicted, strict=True)])
    denominator = np.array([truth.astype(float) + p if pred is not None else 2.0 * np.ones(len(truth)) for p, pred in zip(rows, predicted, strict=True)])
    return Detection(kept, denominator, None if question_scores is None else np.asarray(question_scores, dtype=float), truth, list(predicted))


def pool_from_arrays(labels, scores, ratings, factor=None, kinds=None, weights=None, unit="instance", instances=None, detection=None) -> Pool:
    scores = np.asarray(scores, dtype=float)
    return Pool(
        list(labels), list(kinds or ["entry"] * len(labels)), scores, np.asarray(ratings, dtype=float),
        np.ones(len(labels)) if factor is None else np.asarray(factor, dtype=float),
        None if weights is None else np.asarray(weights, dtype=float), unit, None if instances is None else np.asarray(instances),
        detection,
    )



def read_dstc(results_dir, labels_path, baseline_teams=("baseline",), ground_truth_teams=("ground-truth", "ground_truth"), questions=QUESTIONS, unit="rating") -> Pool:
    """The pool from <team>/<entry>.json + <team>/<entry>.human_eval.json under `results_dir`, as
    `import_human_eval` reads them, in units of `unit` (UNITS; `rating_units`); a problem raises
    dstc9.FormatProblem naming the file and instance."""
    if unit not in UNITS:
        raise ValueError(f"unit must be one of {', '.join(UNITS)}")
    labels = dstc9.check_outputs(dstc9.load_json(labels_path), labels_path, require_response=False)
    truth = np.array([bool(item["target"]) for item in labels])
    names, kinds, rows_of, kept_of, factor, predictions = [], [], [], [], [], []
    for team_id, entry_id, entry_path, eval_path in dstc9.find_human_evals(results_dir):
        is_truth = team_id in ground_truth_teams
        if entry_path is not None:
            outputs = dstc9.check_outputs(dstc9.load_json(entry_path), entry_path, expected_length=len(labels))
        elif is_truth:
            outputs = labels
        else:
            raise dstc9.FormatProblem(eval_path, f"the entry's output {entry_id}.json is missing beside it (needed for detection in Eq. 1)")
        rows_of.append(dstc9.check_human_eval(dstc9.load_json(eval_path), eval_path, labels, outputs, list(questions)))
        predicted = np.array([bool(item["target"]) for item in outputs])
        names.append(f"{team_id}/{entry_id}")
        kinds.append("ground_truth" if is_truth else "baseline" if team_id in baseline_teams else "entry")
        kept_of.append(truth & predicted)
        predictions.append(predicted)
        factor.append(eq1_factor(truth, predicted))
    N = len(labels)
    P = max((position for rows in rows_of for _, _, position, _ in rows), default=1)
    question_scores = []
    for rows in rows_of:
        sums, n = _rating_sums(rows, list(questions), N, P)
        with np.errstate(invalid="ignore", divide="ignore"):
            question_scores.append(np.where(n.sum(axis=2) > 0, sums.sum(axis=2) / np.maximum(n.sum(axis=2), 1), np.nan))
    detection = detection_from(truth, predictions, np.array(question_scores))
    if unit == "instance":
        scores, counts = [], []
        for rows, kept in zip(rows_of, kept_of, strict=False):
            sums, n = _rating_sums(rows, list(questions), N, P)
            scores.append(instance_scores(sums.sum(axis=2), n.sum(axis=2), kept=kept))
            counts.append(n.sum(axis=(0, 2)))
        return Pool(names, kinds, np.array(scores), np.array(counts), np.array(factor), detection=detection)
    units = [rating_units(rows, list(questions), N, P, kept) for rows, kept in zip(rows_of, kept_of, strict=False)]
    return Pool(
        names, kinds, np.array([u[0] for u in units]), np.array([u[1] for u in units]), np.array(factor),
        np.array([u[2] for u in units]), "rating", np.repeat(np.arange(N), P), detection,
    )


def _rating_sums(rows, questions, n_instances, positions):
    """Sums and counts [Q, N, P] of (instance, question, position, value) rows."""
    sums, n = np.zeros((len(questions), n_instances, positions)), np.zeros((len(questions), n_instances, positions))
    for index, question, position, value in rows:
        q = questions.index(question)
        sums[q, index, position - 1] += value
        n[q, index, position - 1] += 1
    return sums, n


def rating_units(rows, questions, n_instances, positions, kept):
    """One system's rating units from its (instance, question, position, value) rows: unit
    instance x positions + position - 1 is the answers at that position (one published rater),
    scored as their mean over questions. Returns (scores [U], ratings [U], weights [U]); the weight
    of each unit of an instance is 1 over its scored units, so the weighted mean over every unit is
    the instance-level mean. An instance whose questions have different numbers of ratings cannot
    be split by rater: it stays one unit (at its first position) with its instance score."""
    sums, n = _rating_sums(rows, questions, n_instances, positions)
    ratings = n.sum(axis=0)  # [N, P]
    with np.errstate(invalid="ignore", divide="ignore"):
        scores = np.where((n > 0).all(axis=0), (sums / np.maximum(n, 1)).mean(axis=0), np.nan)
    per_question = n.sum(axis=2)  # [Q, N]
    uneven = (per_question != per_question[0]).any(axis=0)
    if uneven.any():
        whole = instance_scores(sums.sum(axis=2), per_question)
        scores[uneven] = np.nan
        scores[uneven, 0] = whole[uneven]
        ratings[uneven] = 0
        ratings[uneven, 0] = per_question[:, uneven].sum(axis=0)
    scores[~np.asarray(kept, dtype=bool)] = np.nan
    scored = (~np.isnan(scores)).sum(axis=1, keepdims=True)
    weights = np.where(~np.isnan(scores), 1.0 / np.maximum(scored, 1), 0.0)
    return scores.ravel(), ratings.ravel(), weights.ravel()


def instance_scores(sums, counts, kept=None) -> np.ndarray:
    """Per instance [N] the mean over questions of the mean rating, from per-question sums and counts
    [Q, N]; NaN where a question is not rated (Eq. 1 leaves out what is not rated) or `kept` is False."""
    sums, counts = np.asarray(sums, dtype=float), np.asarray(counts, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        per_question = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
    rated = ~np.isnan(per_question).any(axis=0)
    if kept is not None:
        rated &= np.asarray(kept, dtype=bool)
    return np.where(rated, per_question.mean(axis=0), np.nan)


def eq1_factor(truth, predicted) -> float:
    """k of S_f = k x the mean instance score with detection fixed: 2 |f*f~| / (|f| + |f~|); 1 for a
    row without detection predictions (None)."""
    if predicted is None:
        return 1.0
    truth, predicted = np.asarray(truth, dtype=bool), np.asarray(predicted, dtype=bool)
    total = predicted.sum() + truth.sum()
    return float(2 * (truth & predicted).sum() / total) if total else 0.0


class Prefix:
    """The units of one look (an index array) and what every pair judged on them shares: each
    system's score, its units' contributions, the units' instances. Computed once per look, however
    many pairs are judged on it; every function taking a `prefix` takes one of these or an array."""

    def __init__(self, pool: Pool, units):
        self.pool = pool
        self.units = np.asarray(units, dtype=int)
        self._detection_influence: dict[int, np.ndarray] = {}

    def __len__(self) -> int:
        return len(self.units)

    @cached_property
    def _weighted(self):
        """(scores with 0 for NaN [S, n], weights with 0 where not scored [S, n], their sums [S])."""
        x = self.pool.scores[:, self.units]
        w = np.ones(x.shape) if self.pool.weights is None else self.pool.weights[:, self.units]
        w = np.where(np.isnan(x), 0.0, w)
        return np.nan_to_num(x), w, w.sum(axis=1)

    @cached_property
    def scores(self) -> np.ndarray:
        """Final score [S] of every system: k x the weighted mean of its scored units (NaN where it has none)."""
        x, w, total = self._weighted
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(total > 0, self.pool.factor * (w * x).sum(axis=1) / total, np.nan)

    @cached_property
    def influences(self) -> np.ndarray:
        """Each unit's contribution [S, n] to each system's score minus its mean (the delta method
        for a ratio of means): k w (x - score / k) / mean(w), with w the unit's weight (0 where the
        system has no score); all 0 for a system without a scored unit."""
        x, w, total = self._weighted
        scored = total > 0
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = (w * x).sum(axis=1) / total
            influences = self.pool.factor[:, None] * w * (x - mean[:, None]) / (total / len(self.units))[:, None]
        return np.where(scored[:, None], influences, 0.0)

    @cached_property
    def instances(self) -> np.ndarray:
        """The instance of each unit (the unit itself for instance units)."""
        return self.units if self.pool.instances is None else self.pool.instances[self.units]

    @cached_property
    def instance_sizes(self) -> np.ndarray:
        """Units of each instance [N] in the prefix."""
        return np.bincount(self.instances, minlength=self.pool.n_instances)

    def detection_influence(self, s: int) -> np.ndarray:
        if s not in self._detection_influence:
            self._detection_influence[s] = detection_influence(self.pool, s, float(self.scores[s]))
        return self._detection_influence[s]


def _prefix(pool: Pool, prefix) -> Prefix:
    return prefix if isinstance(prefix, Prefix) and prefix.pool is pool else Prefix(pool, prefix)


def final_scores(pool: Pool, prefix) -> np.ndarray:
    """Final score [S] of every system on the units `prefix`: k x the weighted mean of its scored
    units (NaN where it has none)."""
    return _prefix(pool, prefix).scores


def _paired(pool: Pool, a: int, b: int, prefix):
    """(difference a - b on `prefix`, the units' contributions to it [n])."""
    prefix = _prefix(pool, prefix)
    return float(prefix.scores[a] - prefix.scores[b]), prefix.influences[a] - prefix.influences[b]


def _by_instance(pool: Pool, contributions, prefix) -> np.ndarray:
    """The contributions summed per instance and scaled to a mean over instances (so their standard
    deviation over sqrt(instances) is the clustered standard error); unchanged for instance units."""
    if pool.instances is None:
        return contributions
    prefix = _prefix(pool, prefix)
    present = prefix.instance_sizes > 0
    sums = np.bincount(prefix.instances, weights=contributions, minlength=pool.n_instances)[present]
    return sums * len(sums) / len(prefix)


def _sd(values) -> float:
    return float(np.std(values, ddof=1)) if len(values) > 1 else math.inf


def full_data_sd(pool: Pool, contributions, prefix) -> float:
    """The paired standard deviation per instance that the full data's one-look interval would have,
    estimated on `prefix`: for rating units the unit standard deviation times the design effect of
    rating an instance's units together, 1 + (m - 1) rho, with m the units per instance and rho the
    correlation of contributions within an instance, estimated from the instances with two or more
    units in the prefix (taken as 0 when fewer than 30 such instances: a smaller line only delays a
    tie). An instance's contribution is the mean of its m units', so its variance is
    sd^2 (1 + (m - 1) rho) / m."""
    sd = _sd(contributions)
    if pool.instances is None or not math.isfinite(sd) or sd == 0:
        return sd
    prefix = _prefix(pool, prefix)
    sums = np.bincount(prefix.instances, weights=contributions, minlength=pool.n_instances)
    sizes = prefix.instance_sizes  # counted once per look, for every pair judged on it
    m = pool.n_units / pool.n_instances
    rho = 0.0
    if (sizes > 1).sum() >= 30:
        cross = float((sums**2).sum() - (contributions**2).sum())
        rho = cross / (float((sizes * (sizes - 1)).sum()) * float(np.mean(contributions**2)))
    return sd * math.sqrt(max(1.0, 1 + (m - 1) * rho) / m)



def detection_influence(pool: Pool, s: int, score: float) -> np.ndarray:
    """Each instance's influence [N] on system s's S_f through detection alone, at the level
    `score`: S_f = 2 sum(kept x) / sum(f + f~), linearised over instances, is the rating part
    (`_influence`, detection fixed) plus (2 kept_i mean - S_f (f_i + f~_i)) / mean(f + f~), with
    mean = S_f / k the mean instance score. Zero without detection; its mean over instances is 0.
    This is what the leaderboard's instance resamples add by redrawing detection with the ratings."""
    n = pool.n_instances
    detection = pool.detection
    if detection is None or not math.isfinite(score) or pool.factor[s] <= 0:
        return np.zeros(n)
    denominator = detection.denominator[s]
    mean = score / pool.factor[s]
    return (2 * detection.kept[s] * mean - score * denominator) / denominator.mean()


def _detection_parts(pool: Pool, a: int, b: int, prefix, z) -> tuple[float, float]:
    """(variance of the detection part of a - b over every instance, covariance of the rating and
    detection parts) per instance, estimated on `prefix` with the units' contributions `z`: the
    covariance from the prefix's instances and their mean unit contributions (a rating's noise is
    independent of detection, so it is unbiased however few of an instance's ratings are in)."""
    if pool.detection is None:
        return 0.0, 0.0
    prefix = _prefix(pool, prefix)
    g = prefix.detection_influence(a) - prefix.detection_influence(b)
    instances, sizes = prefix.instances, prefix.instance_sizes
    present = sizes > 0
    mean_contribution = np.bincount(instances, weights=z, minlength=pool.n_instances)[present] / sizes[present]
    return float(np.var(g)), float(np.mean(mean_contribution * (g[present] - g.mean())))


def population_sd(pool: Pool, a: int, b: int, prefix) -> float:
    """The paired standard deviation per instance of a - b when instances are drawn from a
    population, as the leaderboard's bootstrap draws them (detection redrawn with the ratings),
    estimated on `prefix`: the rating part (`full_data_sd`), plus the detection part (known on
    every instance: it needs no rating), plus twice their covariance (`_detection_parts`)."""
    prefix = _prefix(pool, prefix)
    z = _paired(pool, a, b, prefix)[1]
    rating_sd = full_data_sd(pool, z, prefix)
    if pool.detection is None or not math.isfinite(rating_sd):
        return rating_sd
    detection_variance, covariance = _detection_parts(pool, a, b, prefix, z)
    return math.sqrt(max(0.0, rating_sd**2 + detection_variance + 2 * covariance))


def population_interval(pool: Pool, a: int, b: int, prefix, level: float):
    """(difference a - b, low, high) on `prefix` for the population of instances, the leaderboard's
    target: the delta-method twin of its bootstrap, the rating part clustered over the prefix's
    instances and the detection part over every instance. On the full data it gives the
    leaderboard's verdicts (tests/evaluation/test_allocation.py); without detection it is the
    clustered one-look interval."""
    prefix = _prefix(pool, prefix)
    difference, z = _paired(pool, a, b, prefix)
    c = _by_instance(pool, z, prefix)
    variance = _sd(c) ** 2 / len(c) if len(c) > 1 else math.inf
    detection_variance, covariance = _detection_parts(pool, a, b, prefix, z)
    variance = max(0.0, variance + (detection_variance + 2 * covariance) / pool.n_instances)
    half = float(stats.norm.ppf(1 - level / 2)) * math.sqrt(variance)
    return difference, difference - half, difference + half


def leaderboard_resolved_pairs(pool: Pool, alpha: float, bootstrap=scoring.DEFAULT_BOOTSTRAP, seed=scoring.DEFAULT_SEED) -> set:
    """The pairs (a, b) of ranked rows, a < b, whose own test the leaderboard finds significant on the
    full data (the pairwise table's unadjusted p; an allocation settles pairs one by one, so Holm's
    adjustment over every pair, which the tie groups use, is not its criterion): the report's own statistic and test (Eq. 1 per question with detection, the final
    score, the paired instance bootstrap that redraws detection with the ratings, p < alpha), run
    through `scoring` as `report.build_report` runs it. Without per-question data (a pool made from
    arrays) it is the one-look population interval (`population_interval`)."""
    key = (alpha, bootstrap, seed)
    if key not in pool._resolved_pairs:
        pool._resolved_pairs[key] = frozenset(_leaderboard_resolved_pairs(pool, alpha, bootstrap, seed))
    return set(pool._resolved_pairs[key])


def _leaderboard_resolved_pairs(pool: Pool, alpha: float, bootstrap: int, seed) -> set:
    candidates = _ranked(pool)
    detection = pool.detection
    if detection is None or detection.question_scores is None or detection.truth is None or detection.predicted is None:
        everything = np.arange(pool.n_units)
        return {(a, b) for i, a in enumerate(candidates) for b in candidates[i + 1:] if _resolved(population_interval(pool, a, b, everything, alpha))}
    cols = scoring.eq1_columns(detection.question_scores[candidates], detection.truth, [detection.predicted[s] for s in candidates])
    point = scoring.system_scores(cols)
    _, finals = scoring.bootstrap_scores(cols, bootstrap, seed)
    deviations = finals - point["final"][None]
    n = len(candidates)
    uncertainty = scoring.Uncertainty(deviations, np.zeros_like(deviations), np.full(n, pool.n_instances), np.zeros(n, dtype=int))
    rows = scoring.pairwise_differences(point["final"], uncertainty, list(range(n)), ci=1 - alpha)
    return {(candidates[row["a"]], candidates[row["b"]]) for row in rows if row["significant"]}


def pair_interval(pool: Pool, a: int, b: int, prefix, level: float, finite=True, critical=None):
    """(difference a - b, low, high) on `prefix` at confidence 1 - level (or with the critical value
    `critical` in place of the normal quantile). `finite`: the target is the full data's difference,
    the prefix a simple random sample of its units (variance with the finite-population
    correction); otherwise the one-look interval of the report, over instances (clustered)."""
    prefix = _prefix(pool, prefix)
    difference, z = _paired(pool, a, b, prefix)
    if finite:
        n, N = len(prefix), pool.n_units
        variance = _sd(z) ** 2 / n * max(0.0, 1 - n / N) if n > 1 else math.inf
    else:
        c = _by_instance(pool, z, prefix)
        variance = _sd(c) ** 2 / len(c) if len(c) > 1 else math.inf
    q = stats.norm.ppf(1 - level / 2) if critical is None else critical
    half = q * math.sqrt(variance) if variance else 0.0
    return difference, difference - half, difference + half


def grid(n_units: int, first=DEFAULT_FIRST, growth=DEFAULT_GROWTH, late_from=None, late_until=1.0) -> list[int]:
    """The prefix lengths at which the campaign may look, fixed before any rating is seen: from
    `first` growing by `growth`, and (when `late_from`, a share of the units, is given) from
    there on in steps of DEFAULT_LATE_STEP of the units."""
    sizes, n = [], min(first, n_units)
    late = n_units + 1 if late_from is None else math.ceil(late_from * n_units)
    while n < min(late, n_units):
        sizes.append(n)
        n = max(n + 1, math.ceil(n * growth))
    n = max(n, late) if late <= n_units else n
    step = max(1, math.ceil(DEFAULT_LATE_STEP * n_units))
    while n < min(n_units, late_until * n_units + 1e-9):
        sizes.append(n)
        n += step
    return sizes + [n_units]


def critical_values(sizes, n_units: int, alpha: float, late_from=None, early_share=DEFAULT_EARLY_SHARE) -> dict:
    """The critical value of each look: `early_share` of alpha over the looks before `late_from`
    (which only drop what is clear), the rest over the later ones (where the close pairs are
    decided); each part joint over its looks (`boundary`), the two added (a union bound)."""
    if late_from is None:
        c = boundary(sizes, n_units, alpha)
        return {n: c for n in sizes}
    cut = late_from * n_units
    early = [n for n in sizes if n < cut]
    late = [n for n in sizes if n >= cut]
    c_early = boundary(early, n_units, alpha * early_share) if early else math.inf
    c_late = boundary(late, n_units, alpha * (1 - early_share) if early else alpha)
    return {n: (c_early if n < cut else c_late) for n in sizes}


def futility_boundary(sizes, n_units: int, beta=None) -> float | None:
    """The futility check's critical value over these looks: the two-sided boundary at 2 beta, so a
    pair the full data's leaderboard resolves is settled as a tie with chance at most beta (one
    side of the interval). None without a beta (the futility check then uses the resolution's)."""
    beta = DEFAULT_FUTILITY_BETA if beta is None else beta
    return boundary(sizes, n_units, 2 * beta) if beta else None


def boundary(sizes, n_units: int, alpha: float, draws=BOUNDARY_DRAWS, seed: int = 0) -> float:
    """The critical value c with P(max over the looks before the last of |Z_n| >= c) = alpha, where
    Z_n is a pair's standardised difference on the prefix of length n under the null (module
    docstring: the looks of a finite-population sample are a Brownian motion in u = 1/n - 1/N).
    Found from `draws` seeded paths; the last look (every unit) is exact and needs none. Seeded, so
    a function of its arguments: remembered per process (every replay and every look of a campaign
    asks for the same few). The seed must be a whole number: a generator would be remembered as if
    it drew the same paths every time."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"boundary's seed must be an int, not {type(seed).__name__}")
    return _remembered_boundary(tuple(int(n) for n in sizes), int(n_units), float(alpha), int(draws), int(seed))


@lru_cache(maxsize=256)
def _remembered_boundary(sizes: tuple[int, ...], n_units: int, alpha: float, draws: int, seed) -> float:
    return simulated_boundary(sizes, n_units, alpha, draws, seed)


def simulated_boundary(sizes, n_units: int, alpha: float, draws=BOUNDARY_DRAWS, seed=0) -> float:
    """`boundary` computed afresh from its seeded paths."""
    inner = [n for n in sizes if n < n_units]
    if len(inner) <= 1:  # one look: the normal quantile itself
        return float(stats.norm.ppf(1 - alpha / 2))
    u = np.array([1 / n - 1 / n_units for n in inner])  # decreasing: later looks vary less
    # W(u) sampled from the smallest u upwards (independent increments), then read in look order.
    steps = np.diff(np.concatenate(([0.0], u[::-1])))
    paths = np.cumsum(np.random.default_rng(seed).standard_normal((draws, len(u))) * np.sqrt(steps), axis=1)[:, ::-1]
    return float(np.quantile(np.abs(paths / np.sqrt(u)).max(axis=1), 1 - alpha))


RESOLVED, TIED, OPEN = "resolved", "tied", "open"


def significance_line(n_instances: int, alpha: float) -> float:
    """The full data's leaderboard significance line per unit of paired standard deviation: a pair
    whose whole interval lies inside +-(line x its population sd) would be a tie on the leaderboard
    of every instance, so rating every instance could not resolve it."""
    return float(stats.norm.ppf(1 - alpha / 2)) / math.sqrt(n_instances)


def pair_verdict(pool: Pool, a: int, b: int, prefix, alpha: float, critical: float, line: float, indifference=0.0, futility=True, futility_critical=None):
    """(difference a - b, low, high, tie margin) of one pair on `prefix` with the sequential
    critical value. The interval targets the full data's difference (the finite set of instances
    of the pool: `pair_interval` with the finite-population correction). The margin is the larger
    of the indifference margin and, with `futility`, the leaderboard's significance line on the
    full data (`significance_line` times the pair's `population_sd`, detection included): the
    line the leaderboard of every instance will draw, so what lies inside it is a tie there.

    `futility_critical` (default `critical`) is the critical value of the futility check, a
    boundary of its own (`replay`'s `futility_beta`): the pair is a tie when the interval with
    that value lies inside the line. It is returned folded into the margin (widened by the
    difference of the two half-widths), so `pair_state` reads one interval and one margin."""
    prefix = _prefix(pool, prefix)
    difference, low, high = pair_interval(pool, a, b, prefix, alpha, critical=critical)
    margin = max(indifference, line * population_sd(pool, a, b, prefix) if futility else 0.0)
    if futility and futility_critical is not None and critical and math.isfinite(high - low):
        margin += (high - low) / 2 * (1 - futility_critical / critical)
    return difference, low, high, margin


def pair_state(low: float, high: float, margin: float) -> str:
    """Tied when the interval lies inside the tie margin (the full data's leaderboard would call the
    pair a tie, even where this interval orders the finite difference: the campaign never resolves
    a pair its leaderboard calls a tie), resolved when it leaves out 0, else still open."""
    if -margin < low <= high < margin:
        return TIED
    return RESOLVED if low > 0 or high < 0 else OPEN


#: What each interval targets, said with every verdict (the replay's JSON, a live look's pairs).
TARGET_FINITE = "finite: the difference on every instance of the campaign (its sample of the test set, else the whole test set: the full data), finite-population correction"
TARGET_POPULATION = "population: instances drawn from the population, detection redrawn with the ratings (the leaderboard's bootstrap)"


def live_look(pool: Pool, order, prefix_of, critical: float, alpha: float, top_k=None, indifference=0.0, futility=True, futility_critical=None) -> dict:
    """One look of a live adaptive campaign: every pair of ranked rows on the longest prefix of the
    round order both were rated on (a grid length, so the boundary covers it: module docstring; on
    every instance, the full design's one-look verdict),
    each system's score on its own prefix, and the systems still to rate (those in an open pair of
    the goal: every pair with a system in the current top k). `prefix_of[s]` is the number of
    instances of `order` system s was rated on; `futility_critical` the futility boundary
    (`futility_boundary`; None: `critical`). Returns {"pairs", "scores", "active"}; each pair says
    what its interval targets (`target`: the finite set of instances before every one is rated,
    the population at the last look)."""
    candidates = _ranked(pool)
    if len(candidates) < 2:
        raise ValueError("the campaign needs at least two ranked entries")
    top_k = len(candidates) if top_k is None else min(top_k, len(candidates))
    line = significance_line(pool.n_instances, alpha)
    order = np.asarray(order)
    prefixes: dict[int, Prefix] = {}

    def prefix(n: int) -> Prefix:
        """The round order's first n units, shared by every system and pair rated on as many."""
        if n not in prefixes:
            prefixes[n] = Prefix(pool, order[:n])
        return prefixes[n]

    scores = {s: float(prefix(int(prefix_of[s])).scores[s]) if prefix_of[s] else math.nan for s in range(len(pool.labels))}
    pairs = {}
    for i, a in enumerate(candidates):
        for b in candidates[i + 1:]:
            n = int(min(prefix_of[a], prefix_of[b]))
            if n >= pool.n_units:
                # Everything rated: the leaderboard's own one-look verdict for the population (the
                # finite interval would have no width here); what it cannot separate is a tie.
                difference, low, high = population_interval(pool, a, b, prefix(n), alpha)
                margin, state, target = 0.0, RESOLVED if low > 0 or high < 0 else TIED, TARGET_POPULATION
            else:
                difference, low, high, margin = pair_verdict(pool, a, b, prefix(n), alpha, critical, line, indifference, futility, futility_critical)
                state, target = pair_state(low, high, margin), TARGET_FINITE
            pairs[(a, b)] = {"instances": n, "difference": difference, "low": low, "high": high, "margin": margin, "state": state, "target": target}
    ranked_scores = {s: (-math.inf if math.isnan(v) else v) for s, v in scores.items()}
    goal = {tuple(sorted(p)) for p in _goal_pairs(ranked_scores, candidates, top_k)}
    active = sorted({s for pair in goal if pairs[pair]["state"] == OPEN for s in pair})
    return {"pairs": pairs, "scores": scores, "active": active}


def _spent(pool: Pool, order, prefix_of) -> float:
    return float(sum(pool.ratings[s, order[:n]].sum() for s, n in enumerate(prefix_of)))


def _ranked(pool: Pool):
    """Indices of the ranked rows (entries); reference rows are never drawn."""
    return [s for s, kind in enumerate(pool.kinds) if kind == "entry"]


def _goal_pairs(scores, candidates, top_k):
    order = sorted(candidates, key=lambda s: -scores[s])
    top = set(order[:top_k])
    return [(a, b) for i, a in enumerate(order) for b in order[i + 1:] if a in top or b in top]


def _full_order_pairs(pool: Pool, candidates):
    full = final_scores(pool, np.arange(pool.n_units))
    return full, {(a, b): np.sign(full[a] - full[b]) for a in candidates for b in candidates if a < b}


def replay(pool: Pool, seed=DEFAULT_SEED, top_k=None, alpha=0.05, indifference=0.0, budget=1.0, first=DEFAULT_FIRST, growth=DEFAULT_GROWTH, looks="boundary", futility=True, late_from=DEFAULT_LATE_FROM, late_until=DEFAULT_LATE_UNTIL, early_share=DEFAULT_EARLY_SHARE, futility_beta=DEFAULT_FUTILITY_BETA) -> dict:
    """One adaptive campaign drawn from the pool, and uniform allocation of the same ratings; see
    the module docstring. Every pair of ranked rows is reported; `top_k` (default all) sets the goal.
    `futility_beta` (None: the same boundary as the resolution) is the chance, at most, that a pair
    the full data's leaderboard resolves is settled as a tie: its futility check has a boundary of
    its own at one-sided level beta (non-binding: it never makes a resolved order less valid)."""
    candidates = _ranked(pool)
    top_k = _checked_top_k(candidates, top_k, looks)
    N = pool.n_units
    order = np.random.default_rng(seed).permutation(N)
    sizes = grid(N, first, growth, late_from, late_until)
    critical_of = critical_values(sizes, N, alpha, late_from, early_share) if looks == "boundary" else {n: float(stats.norm.ppf(1 - alpha / 2 / len(sizes))) for n in sizes}
    futility_of = critical_values(sizes, N, 2 * futility_beta, late_from, early_share) if futility_beta is not None else critical_of
    # What the whole budget could resolve: the full data's own significance line, estimated.
    line = significance_line(pool.n_instances, alpha)
    total = float(pool.ratings[candidates].sum())
    prefix_of = np.zeros(len(pool.labels), dtype=int)
    active = set(candidates)
    verdicts: dict[tuple[int, int], tuple[float, float, float]] = {}  # pair -> (difference, low, high)
    margins: dict[tuple[int, int], float] = {}
    settled_at: dict[tuple[int, int], dict | None] = {}  # pair -> where the budget stood at the look that settled it (None while open)
    for look, n in enumerate(sizes, start=1):
        proposal = prefix_of.copy()
        proposal[list(active)] = n
        spent_now = _spent(pool, order, proposal)
        if spent_now > budget * total + 1e-9:
            break
        prefix_of = proposal
        prefix = Prefix(pool, order[:n])
        scores = prefix.scores
        for a in sorted(active):
            for b in sorted(active):
                if a < b:
                    difference, low, high, margins[(a, b)] = pair_verdict(pool, a, b, prefix, alpha, critical_of[n], line, indifference, futility, futility_of[n])
                    verdicts[(a, b)] = (difference, low, high)
                    if pair_state(low, high, margins[(a, b)]) == OPEN:
                        settled_at[(a, b)] = None
                    elif settled_at.get((a, b)) is None:
                        pair_ratings = int(pool.ratings[[a, b]][:, prefix.units].sum())
                        settled_at[(a, b)] = {"look": look, "units": int(n), "ratings_used": int(spent_now), "pair_ratings": pair_ratings}
        settled = {pair for pair, (_, low, high) in verdicts.items() if pair_state(low, high, margins[pair]) != OPEN}
        goal = {tuple(sorted(p)) for p in _goal_pairs(scores, candidates, top_k)}
        active = {s for pair in goal - settled for s in pair}
        if not active:
            break

    spent = _spent(pool, order, prefix_of)
    full, full_sign = _full_order_pairs(pool, candidates)
    full_resolved = leaderboard_resolved_pairs(pool, alpha)
    resolved = {pair: np.sign(d) for pair, (d, low, high) in verdicts.items() if low > 0 or high < 0}
    tied = {pair for pair, (_, low, high) in verdicts.items() if pair_state(low, high, margins[pair]) == TIED}
    wrong = [pair for pair, sign in resolved.items() if sign != full_sign[pair]]

    labels = pool.labels
    def name(pair):
        return [labels[pair[0]], labels[pair[1]]]
    full_top = [labels[s] for s in sorted(candidates, key=lambda s: -full[s])[:top_k]]
    # Each system's estimate where its last look left it (a system stops once its pairs are settled).
    adaptive_scores = {s: final_scores(pool, order[: prefix_of[s]])[s] for s in candidates}
    return {
        "seed": seed,
        "looks": len(sizes),
        "look_rule": looks,
        "critical_values": sorted(set(critical_of.values())),
        "ratings_total": int(total),
        "ratings_used": int(spent),
        "ratings_used_fraction": spent / total,
        "unit": pool.unit,
        "units": N,
        "target": TARGET_FINITE,
        "full_verdict": (
            "the leaderboard's pairwise test of each pair on every rating, unadjusted p < alpha (" + TARGET_POPULATION
            + "); its tie groups adjust for every pair at once (Holm) and can group a pair resolved here"
        ),
        "units_per_system": {labels[s]: int(prefix_of[s]) for s in candidates},
        "pairs": len(full_sign),
        "resolved_pairs": len(resolved),
        "settled_as_ties": len(tied),
        "full_resolved_pairs": len(full_resolved),
        "full_resolved_pairs_resolved": len(full_resolved & set(resolved)),
        # The campaign cannot know which pairs the full data's leaderboard resolves, so it goes on after the last of
        # them; this is where it stood (share of the ratings) when the last of them was resolved.
        "full_resolved_by_fraction": (
            max((where["ratings_used"] for p in full_resolved if (where := settled_at[p]) is not None), default=0) / total
            if full_resolved <= set(resolved) else None
        ),
        "wrongly_ordered_pairs": len(wrong),
        "wrongly_ordered": [name(p) for p in wrong],
        "unresolved_full_resolved": [name(p) for p in sorted(full_resolved - set(resolved))],
        "top_k": top_k,
        "full_top_k_order": full_top,
        "top_k_order_matches": bool([labels[s] for s in sorted(candidates, key=lambda s: -adaptive_scores[s])[:top_k]] == full_top),
        "uniform": _uniform(pool, candidates, order, spent, alpha, full_sign, full_resolved, full_top),
        "intervals": {
            f"{labels[a]} - {labels[b]}": {
                "difference": d, "ci_low": low, "ci_high": high, "full_difference": float(full[a] - full[b]),
                "state": pair_state(low, high, margins[(a, b)]), "settled_at": settled_at.get((a, b)),
            }
            for (a, b), (d, low, high) in verdicts.items()
        },
    }


def _checked_top_k(candidates: list[int], top_k: int | None, looks: str) -> int:
    """The goal's k (default every entry), once the pool and the look rule can be replayed."""
    if len(candidates) < 2:
        raise ValueError("the pool needs at least two ranked entries")
    top_k = len(candidates) if top_k is None else top_k
    if not 1 <= top_k <= len(candidates):
        raise ValueError(f"top k must be between 1 and the number of entries ({len(candidates)})")
    if looks not in LOOK_RULES:
        raise ValueError(f"looks must be one of {', '.join(LOOK_RULES)}")
    return top_k


def _uniform(pool: Pool, candidates: list[int], order, spent: float, alpha: float, full_sign: dict, full_resolved: set, full_top: list) -> dict:
    """Uniform allocation of what the adaptive run spent: every entry on the same prefix, as long
    as the ratings fit, judged in one look by the same rule (`pair_verdict` at the one-look normal
    quantile: ordered on the full data, and not inside the leaderboard's significance line)."""
    labels = pool.labels
    top_k = len(full_top)
    cumulative = np.cumsum(pool.ratings[candidates][:, order].sum(axis=0))
    uniform_n = int(np.searchsorted(cumulative, spent + 1e-9, side="right"))
    uniform_prefix = Prefix(pool, order[:uniform_n])
    line, z = significance_line(pool.n_instances, alpha), float(stats.norm.ppf(1 - alpha / 2))
    uniform = {(a, b): pair_verdict(pool, a, b, uniform_prefix, alpha, z, line) for a, b in full_sign} if uniform_n > 1 else {}
    uniform_resolved = {pair: np.sign(d) for pair, (d, low, high, margin) in uniform.items() if pair_state(low, high, margin) == RESOLVED}
    return {
        "units": uniform_n,
        "resolved_pairs": len(uniform_resolved),
        "full_resolved_pairs_resolved": len(full_resolved & set(uniform_resolved)),
        "wrongly_ordered_pairs": int(sum(sign != full_sign[p] for p, sign in uniform_resolved.items())),
        "top_k_order_matches": [labels[s] for s in sorted(candidates, key=lambda s: -uniform_prefix.scores[s])[:top_k]] == full_top if uniform_n else False,
    }


def _resolved(interval) -> bool:
    return interval[1] > 0 or interval[2] < 0


def summarize(runs: list[dict]) -> dict:
    """Means and extremes over seeds of the figures the issue asks for."""
    def column(key, inner=None):
        return np.array([(r[inner][key] if inner else r[key]) for r in runs], dtype=float)
    out: dict[str, object] = {"seeds": [r["seed"] for r in runs]}
    for key in ("ratings_used_fraction", "resolved_pairs", "full_resolved_pairs", "full_resolved_pairs_resolved", "wrongly_ordered_pairs"):
        values = column(key)
        out[key] = {"mean": float(values.mean()), "min": float(values.min()), "max": float(values.max())}
    reached = [r["full_resolved_by_fraction"] for r in runs if r["full_resolved_by_fraction"] is not None]
    out["full_resolved_by_fraction"] = {
        "seeds": len(reached), **({"mean": float(np.mean(reached)), "min": float(min(reached)), "max": float(max(reached))} if reached else {}),
    }
    out["pairs"] = runs[0]["pairs"]
    out["top_k_order_matches"] = float(np.mean([r["top_k_order_matches"] for r in runs]))
    out["uniform"] = {
        key: float(column(key, "uniform").mean()) for key in ("resolved_pairs", "full_resolved_pairs_resolved", "wrongly_ordered_pairs", "top_k_order_matches")
    }
    return out
