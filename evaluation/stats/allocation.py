"""Adaptive allocation of ratings, replayed on a published human evaluation. Pure: numpy, scipy; no Django.

A campaign draws units (one published rating, or a whole instance) in one seeded order shared by
every system, looks only at prefix lengths fixed in advance (`grid`), and settles a pair when its
interval leaves out 0 (resolved) or lies inside the indifference or futility margin (tied); a
system stays active while a pair of the top-k goal involving it is open. The intervals use a
group-sequential critical value (`boundary`), so they stay valid at a data-dependent stop; the
full data's own verdict (`full_resolved_pairs`) is the one-look comparison over instances. The
live adaptive campaigns (`evaluation.campaigns.services.adaptive`) apply the same rule (`live_look`).

The argument (units, allocation, why the intervals stay valid) and what the replay measured on
DSTC9 Track 1 are in docs/allocation.md.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from scipy import stats

from evaluation.campaigns import dstc9

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


def pool_from_arrays(labels, scores, ratings, factor=None, kinds=None, weights=None, unit="instance", instances=None) -> Pool:
    scores = np.asarray(scores, dtype=float)
    return Pool(
        list(labels), list(kinds or ["entry"] * len(labels)), scores, np.asarray(ratings, dtype=float),
        np.ones(len(labels)) if factor is None else np.asarray(factor, dtype=float),
        None if weights is None else np.asarray(weights, dtype=float), unit, None if instances is None else np.asarray(instances),
    )



def read_dstc(results_dir, labels_path, baseline_teams=("baseline",), ground_truth_teams=("ground-truth", "ground_truth"), questions=QUESTIONS, unit="rating") -> Pool:
    """The pool from <team>/<entry>.json + <team>/<entry>.human_eval.json under `results_dir`, as
    `import_human_eval` reads them, in units of `unit` (UNITS; `rating_units`); a problem raises
    dstc9.FormatProblem naming the file and instance."""
    if unit not in UNITS:
        raise ValueError(f"unit must be one of {', '.join(UNITS)}")
    labels = dstc9.check_outputs(dstc9.load_json(labels_path), labels_path, require_response=False)
    truth = np.array([bool(item["target"]) for item in labels])
    names, kinds, rows_of, kept_of, factor = [], [], [], [], []
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
        factor.append(eq1_factor(truth, predicted))
    N = len(labels)
    P = max((position for rows in rows_of for _, _, position, _ in rows), default=1)
    if unit == "instance":
        scores, counts = [], []
        for rows, kept in zip(rows_of, kept_of, strict=False):
            sums, n = _rating_sums(rows, list(questions), N, P)
            scores.append(instance_scores(sums.sum(axis=2), n.sum(axis=2), kept=kept))
            counts.append(n.sum(axis=(0, 2)))
        return Pool(names, kinds, np.array(scores), np.array(counts), np.array(factor))
    units = [rating_units(rows, list(questions), N, P, kept) for rows, kept in zip(rows_of, kept_of, strict=False)]
    return Pool(names, kinds, np.array([u[0] for u in units]), np.array([u[1] for u in units]), np.array(factor), np.array([u[2] for u in units]), "rating", np.repeat(np.arange(N), P))


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


def final_scores(pool: Pool, prefix) -> np.ndarray:
    """Final score [S] of every system on the units `prefix` (an index array): k x the weighted
    mean of its scored units (NaN where it has none)."""
    prefix = np.asarray(prefix, dtype=int)
    x = pool.scores[:, prefix]
    w = np.ones(x.shape) if pool.weights is None else pool.weights[:, prefix]
    w = np.where(np.isnan(x), 0.0, w)
    total = w.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, pool.factor * (w * np.nan_to_num(x)).sum(axis=1) / total, np.nan)


def _influence(pool: Pool, s: int, prefix) -> np.ndarray:
    """Each prefix unit's contribution to system s's score minus its mean (the delta method for a
    ratio of means): k w (x - score / k) / mean(w), with w the unit's weight (0 where s has no score)."""
    x = pool.scores[s, prefix]
    w = np.where(np.isnan(x), 0.0, pool.unit_weights(s, prefix))
    if not w.any():
        return np.zeros(len(prefix))
    x = np.nan_to_num(x)
    mean = (w * x).sum() / w.sum()
    return pool.factor[s] * w * (x - mean) / w.mean()


def _paired(pool: Pool, a: int, b: int, prefix):
    """(difference a - b on `prefix`, the units' contributions to it [n])."""
    scores = final_scores(pool, prefix)
    return float(scores[a] - scores[b]), _influence(pool, a, prefix) - _influence(pool, b, prefix)


def _by_instance(pool: Pool, contributions, prefix) -> np.ndarray:
    """The contributions summed per instance and scaled to a mean over instances (so their standard
    deviation over sqrt(instances) is the clustered standard error); unchanged for instance units."""
    if pool.instances is None:
        return contributions
    instances = pool.instances[prefix]
    present = np.bincount(instances) > 0
    sums = np.bincount(instances, weights=contributions)[present]
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
    instances = pool.instances[prefix]
    sums = np.bincount(instances, weights=contributions)
    sizes = np.bincount(instances)
    m = pool.n_units / pool.n_instances
    rho = 0.0
    if (sizes > 1).sum() >= 30:
        cross = float((sums**2).sum() - (contributions**2).sum())
        rho = cross / (float((sizes * (sizes - 1)).sum()) * float(np.mean(contributions**2)))
    return sd * math.sqrt(max(1.0, 1 + (m - 1) * rho) / m)



def pair_interval(pool: Pool, a: int, b: int, prefix, level: float, finite=True, critical=None):
    """(difference a - b, low, high) on `prefix` at confidence 1 - level (or with the critical value
    `critical` in place of the normal quantile). `finite`: the target is the full data's difference,
    the prefix a simple random sample of its units (variance with the finite-population
    correction); otherwise the one-look interval of the report, over instances (clustered)."""
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


def boundary(sizes, n_units: int, alpha: float, draws=BOUNDARY_DRAWS, seed=0) -> float:
    """The critical value c with P(max over the looks before the last of |Z_n| >= c) = alpha, where
    Z_n is a pair's standardised difference on the prefix of length n under the null (module
    docstring: the looks of a finite-population sample are a Brownian motion in u = 1/n - 1/N).
    Found from `draws` seeded paths; the last look (every unit) is exact and needs none."""
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
    """The full data's own significance line per unit of paired standard deviation: a pair whose
    whole interval lies inside +-(line x sd) could not be resolved by rating every instance."""
    return float(stats.norm.ppf(1 - alpha / 2)) / math.sqrt(n_instances)


def pair_verdict(pool: Pool, a: int, b: int, prefix, alpha: float, critical: float, line: float, indifference=0.0, futility=True):
    """(difference a - b, low, high, tie margin) of one pair on `prefix` with the sequential
    critical value: the margin is the larger of the indifference margin and, with `futility`, the
    full data's significance line (`significance_line`) in this pair's paired standard deviation."""
    difference, low, high = pair_interval(pool, a, b, prefix, alpha, critical=critical)
    margin = max(indifference, line * full_data_sd(pool, _paired(pool, a, b, prefix)[1], prefix) if futility else 0.0)
    return difference, low, high, margin


def pair_state(low: float, high: float, margin: float) -> str:
    """Resolved (the interval leaves out 0), tied (it lies inside the tie margin) or still open."""
    if low > 0 or high < 0:
        return RESOLVED
    return TIED if -margin < low <= high < margin else OPEN


def live_look(pool: Pool, order, prefix_of, critical: float, alpha: float, top_k=None, indifference=0.0, futility=True) -> dict:
    """One look of a live adaptive campaign: every pair of ranked rows on the longest prefix of the
    round order both were rated on (a grid length, so the boundary covers it: module docstring; on
    every instance, the full design's one-look verdict),
    each system's score on its own prefix, and the systems still to rate (those in an open pair of
    the goal: every pair with a system in the current top k). `prefix_of[s]` is the number of
    instances of `order` system s was rated on. Returns {"pairs", "scores", "active"}."""
    candidates = _ranked(pool)
    if len(candidates) < 2:
        raise ValueError("the campaign needs at least two ranked entries")
    top_k = len(candidates) if top_k is None else min(top_k, len(candidates))
    line = significance_line(pool.n_instances, alpha)
    order = np.asarray(order)
    scores = {s: float(final_scores(pool, order[: prefix_of[s]])[s]) if prefix_of[s] else math.nan for s in range(len(pool.labels))}
    pairs = {}
    for i, a in enumerate(candidates):
        for b in candidates[i + 1:]:
            n = int(min(prefix_of[a], prefix_of[b]))
            if n >= pool.n_units:
                # Everything rated: the full design's own verdict, the report's one-look paired interval
                # (the sequential interval would have no width here); what it cannot separate is a tie.
                difference, low, high = pair_interval(pool, a, b, order[:n], alpha, finite=False)
                margin, state = 0.0, RESOLVED if low > 0 or high < 0 else TIED
            else:
                difference, low, high, margin = pair_verdict(pool, a, b, order[:n], alpha, critical, line, indifference, futility)
                state = pair_state(low, high, margin)
            pairs[(a, b)] = {"instances": n, "difference": difference, "low": low, "high": high, "margin": margin, "state": state}
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


def replay(pool: Pool, seed=DEFAULT_SEED, top_k=None, alpha=0.05, indifference=0.0, budget=1.0, first=DEFAULT_FIRST, growth=DEFAULT_GROWTH, looks="boundary", futility=True, late_from=DEFAULT_LATE_FROM, late_until=DEFAULT_LATE_UNTIL, early_share=DEFAULT_EARLY_SHARE) -> dict:
    """One adaptive campaign drawn from the pool, and uniform allocation of the same ratings; see
    the module docstring. Every pair of ranked rows is reported; `top_k` (default all) sets the goal."""
    candidates = _ranked(pool)
    top_k = _checked_top_k(candidates, top_k, looks)
    N = pool.n_units
    order = np.random.default_rng(seed).permutation(N)
    sizes = grid(N, first, growth, late_from, late_until)
    critical_of = critical_values(sizes, N, alpha, late_from, early_share) if looks == "boundary" else {n: float(stats.norm.ppf(1 - alpha / 2 / len(sizes))) for n in sizes}
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
        prefix = order[:n]
        scores = final_scores(pool, prefix)
        for a in sorted(active):
            for b in sorted(active):
                if a < b:
                    difference, low, high, margins[(a, b)] = pair_verdict(pool, a, b, prefix, alpha, critical_of[n], line, indifference, futility)
                    verdicts[(a, b)] = (difference, low, high)
                    if pair_state(low, high, margins[(a, b)]) == OPEN:
                        settled_at[(a, b)] = None
                    elif settled_at.get((a, b)) is None:
                        pair_ratings = int(pool.ratings[[a, b]][:, prefix].sum())
                        settled_at[(a, b)] = {"look": look, "units": int(n), "ratings_used": int(spent_now), "pair_ratings": pair_ratings}
        settled = {pair for pair, (_, low, high) in verdicts.items() if pair_state(low, high, margins[pair]) != OPEN}
        goal = {tuple(sorted(p)) for p in _goal_pairs(scores, candidates, top_k)}
        active = {s for pair in goal - settled for s in pair}
        if not active:
            break

    spent = _spent(pool, order, prefix_of)
    full, full_sign = _full_order_pairs(pool, candidates)
    full_resolved = {(a, b) for a, b in full_sign if _resolved(pair_interval(pool, a, b, np.arange(N), alpha, finite=False))}
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
        "units_per_system": {labels[s]: int(prefix_of[s]) for s in candidates},
        "pairs": len(full_sign),
        "resolved_pairs": len(resolved),
        "settled_as_ties": len(tied),
        "full_resolved_pairs": len(full_resolved),
        "full_resolved_pairs_resolved": len(full_resolved & set(resolved)),
        # The campaign cannot know which pairs the full data resolves, so it goes on after the last of
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
    as the ratings fit, judged in one look."""
    labels = pool.labels
    top_k = len(full_top)
    cumulative = np.cumsum(pool.ratings[candidates][:, order].sum(axis=0))
    uniform_n = int(np.searchsorted(cumulative, spent + 1e-9, side="right"))
    uniform_prefix = order[:uniform_n]
    uniform = {(a, b): pair_interval(pool, a, b, uniform_prefix, alpha) for a, b in full_sign} if uniform_n > 1 else {}
    uniform_resolved = {pair: np.sign(d) for pair, (d, low, high) in uniform.items() if low > 0 or high < 0}
    return {
        "units": uniform_n,
        "resolved_pairs": len(uniform_resolved),
        "full_resolved_pairs_resolved": len(full_resolved & set(uniform_resolved)),
        "wrongly_ordered_pairs": int(sum(sign != full_sign[p] for p, sign in uniform_resolved.items())),
        "top_k_order_matches": [labels[s] for s in sorted(candidates, key=lambda s: -final_scores(pool, uniform_prefix)[s])[:top_k]] == full_top if uniform_n else False,
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
