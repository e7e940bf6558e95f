"""Bradley-Terry strengths for pairwise comparisons (ACUTE-Eval style: which of two outputs is better).

Pure module: numpy and scipy; no Django.

Conventions, stated once:
- A comparison is (system_a, system_b, outcome) with outcome "a", "b" or "tie", and optionally the
  `instance` (context id) both outputs answered. The model: P(i beats j) = s_i / (s_i + s_j), or with
  log-strengths t = log s, P(i beats j) = sigmoid(t_i - t_j).
- A tie counts as half a win for each side (the usual convention in ACUTE-Eval and Chatbot Arena
  style analyses): a tie is evidence that the two are close, and it keeps every comparison in the fit.
- Scale: strengths are only defined up to a common factor, so the mean log-strength is fixed to 0;
  a system of strength 1 is "average" (its log-strength is the mean).
- Estimator: penalised maximum likelihood, maximised by Newton's method (see `_newton` for why).
  The penalty `l2_penalty / 2 * sum(t_i ** 2)` is a Normal(0, 1 / l2_penalty) prior on every
  log-strength. It keeps the estimate finite when a system wins (or loses) every comparison, where
  the plain MLE is infinite. The default 0.1 (prior sd ~3.2 on the log scale) weighs about as much as
  0.4 comparisons against an equal opponent (one such comparison carries Fisher information 1/4), so
  it matters only for systems with almost no data or a perfect record. `l2_penalty=0` gives the
  plain MLE and is refused when that does not exist (Zermelo/Ford: every split of the systems into
  two groups needs a win or tie of each group over the other).
  Because the data part of the gradient sums to zero over systems, the penalised optimum has mean
  log-strength 0 by itself: the penalty and the identification agree.
- The comparison graph (systems joined when compared at least once) must be connected: strengths of
  systems that were never linked by a chain of comparisons cannot be compared, so `fit` refuses.
- Ranks are competition ranks ("1224") of the log-strengths rounded to 12 decimals, so that
  floating-point noise (two systems with identical records fitted to 1e-16 apart) cannot decide an
  order; two systems tie only when their rounded log-strengths are equal. That is the rank of a fit
  alone; with a bootstrap the rank shown is the tie group of the Holm-adjusted paired comparisons,
  with its range, as on the ratings leaderboard (`scoring.holm_rank_groups`).
- Bootstrap: percentile intervals over resamples of instances (all comparisons of one context
  together, since the raters of one context see the same outputs and their judgements are
  correlated) when instances are given, of single comparisons otherwise. Seeded: the same seed gives
  the same numbers. Every resample is fitted with the same penalty.
"""
from __future__ import annotations

import numbers
from collections.abc import Hashable, Mapping
from dataclasses import dataclass

import numpy as np
from scipy.special import expit, log_expit

from evaluation.stats.scoring import bootstrap_p, competition_ranks, holm, holm_rank_groups, percentile_interval

OUTCOMES = ("a", "b", "tie")
DEFAULT_L2_PENALTY = 0.1
DEFAULT_BOOTSTRAP = 1000
DEFAULT_SEED = 20210101
RANK_DECIMALS = 12
GRADIENT_TOLERANCE = 1e-12  # per comparison of the busiest system: the likelihood equations hold to this
MAX_NEWTON_STEPS = 100
MAX_STEP_HALVINGS = 60
#: How a ranking's rows are ordered (`export_rows`), said under every table of them.
ROW_ORDER = "rows are listed by log-strength, strongest first; rows of one tie group share its rank, and equal log-strengths keep the order in which the systems first appear in the votes"


@dataclass(frozen=True)
class Comparison:
    """One judgement: which of the outputs of `system_a` and `system_b` for the same context is better."""

    system_a: Hashable
    system_b: Hashable
    outcome: str  # "a", "b" or "tie"
    instance: Hashable | None = None  # the context id; comparisons of one instance are resampled together


@dataclass
class SystemStrength:
    system: Hashable
    rank: int
    log_strength: float  # mean 0 over the systems
    strength: float  # exp(log_strength): geometric mean 1
    win_probability_vs_average: float  # P(beats a system of log-strength 0) = s / (s + 1)
    expected_win_rate: float  # mean P(beats j) over the other systems j, each equally likely
    wins: int
    losses: int
    ties: int
    comparisons: int


@dataclass
class BradleyTerryFit:
    systems: list  # in order of first appearance in the input
    log_strength: np.ndarray  # [S], mean 0
    per_system: list[SystemStrength]  # same order as `systems`
    l2_penalty: float
    log_likelihood: float  # of the data at the estimate, without the penalty
    newton_steps: int
    n_comparisons: int

    def by_system(self) -> dict:
        return {row.system: row for row in self.per_system}


@dataclass
class BradleyTerryBootstrap:
    fit: BradleyTerryFit  # the point estimate on all the data
    samples: np.ndarray  # [B, S] log-strengths of the resamples, mean 0 in each
    ci_low: np.ndarray  # [S] percentile interval of the log-strength
    ci_high: np.ndarray
    rank: np.ndarray  # [S] tie-group rank from Holm-adjusted paired comparisons (`_holm_groups`)
    rank_low: np.ndarray  # [S] the ranks those comparisons allow; rank <= rank_low <= rank_high
    rank_high: np.ndarray
    level: float
    n_resamples: int
    seed: int
    resampling_unit: str  # "instance" or "comparison"
    n_units: int
    disconnected_resamples: int  # resamples whose comparison graph fell apart (see `bootstrap`)


# ---------------------------------------------------------------------------------------------
# Input


def _as_comparison(item, position) -> Comparison:
    if isinstance(item, Comparison):
        return item
    if isinstance(item, Mapping):
        # A missing outcome stays None so that validated_comparisons refuses it by name.
        return Comparison(item.get("system_a"), item.get("system_b"), item.get("outcome"), item.get("instance"))  # type: ignore[arg-type]
    if isinstance(item, (tuple, list)) and len(item) in (3, 4):
        return Comparison(*item)
    raise ValueError(f"comparison {position}: expected a Comparison, a mapping or a tuple (system_a, system_b, outcome[, instance]); got {item!r}")


def validated_comparisons(comparisons) -> list[Comparison]:
    """The input as Comparison records, or a ValueError naming the first problem and where it is."""
    items = [_as_comparison(item, k) for k, item in enumerate(comparisons)]
    if not items:
        raise ValueError("no comparisons: a Bradley-Terry fit needs at least one")
    for k, c in enumerate(items):
        for side in ("system_a", "system_b"):
            if getattr(c, side) in (None, ""):
                raise ValueError(f"comparison {k}: {side} is missing")
        if c.outcome not in OUTCOMES:
            raise ValueError(f"comparison {k}: unknown outcome {c.outcome!r}; use 'a', 'b' or 'tie'")
        if c.system_a == c.system_b:
            raise ValueError(f"comparison {k}: system {c.system_a!r} is compared with itself")
    with_instance = [c.instance is not None for c in items]
    if any(with_instance) and not all(with_instance):
        k = with_instance.index(False)
        raise ValueError(f"comparison {k} has no instance but others do: give every comparison its instance (context id), or none")
    return items


@dataclass
class _Coded:
    """Comparisons as integer codes: systems by first appearance, outcome as a's score (1, 0, 0.5)."""

    systems: list
    a: np.ndarray
    b: np.ndarray
    score_a: np.ndarray
    unit: np.ndarray  # resampling unit of each comparison: its instance, or itself
    resampling_unit: str


def _coded(comparisons) -> _Coded:
    items = validated_comparisons(comparisons)
    index: dict = {}
    for c in items:
        index.setdefault(c.system_a, len(index))
        index.setdefault(c.system_b, len(index))
    a = np.array([index[c.system_a] for c in items])
    b = np.array([index[c.system_b] for c in items])
    score_a = np.array([{"a": 1.0, "b": 0.0, "tie": 0.5}[c.outcome] for c in items])
    if items[0].instance is None:
        unit, kind = np.arange(len(items)), "comparison"
    else:
        units: dict = {}
        unit, kind = np.array([units.setdefault(c.instance, len(units)) for c in items]), "instance"
    return _Coded(list(index), a, b, score_a, unit, kind)


def _wins_per_unit(coded: _Coded) -> np.ndarray:
    """[U, S*S]: half-wins of i over j (flattened i*S + j) in each resampling unit; a tie gives 0.5 each way."""
    S, U = len(coded.systems), int(coded.unit.max()) + 1
    base = coded.unit * S * S
    cells = np.concatenate([base + coded.a * S + coded.b, base + coded.b * S + coded.a])
    weights = np.concatenate([coded.score_a, 1.0 - coded.score_a])
    return np.bincount(cells, weights=weights, minlength=U * S * S).reshape(U, S * S)


def _record_counts(coded: _Coded):
    """Per system: wins, losses, ties and comparisons, as counted (a tie is not split here)."""
    S = len(coded.systems)

    def per_system(a_weight, b_weight):
        return (np.bincount(coded.a, weights=a_weight, minlength=S) + np.bincount(coded.b, weights=b_weight, minlength=S)).astype(int)

    a_won, b_won, tie = coded.score_a == 1.0, coded.score_a == 0.0, coded.score_a == 0.5
    return per_system(a_won, b_won), per_system(b_won, a_won), per_system(tie, tie), per_system(np.ones(len(tie)), np.ones(len(tie)))


# ---------------------------------------------------------------------------------------------
# Graph checks (batched over resamples: [B, S, S] boolean adjacency)


def _reachable(adjacency: np.ndarray) -> np.ndarray:
    """reach[b, i, j]: j can be reached from i along edges of adjacency[b] (i reaches itself)."""
    S = adjacency.shape[-1]
    reach = adjacency | np.eye(S, dtype=bool)
    for _ in range(max(1, int(np.ceil(np.log2(S))))):  # squaring doubles the path length covered
        reach = (reach.astype(np.int64) @ reach.astype(np.int64)) > 0
    return reach


def _names(systems, indices) -> str:
    return ", ".join(repr(systems[i]) for i in indices)


def _check_connected(systems, wins: np.ndarray):
    """The comparison graph must be connected, or strengths of its parts cannot be compared."""
    reach = _reachable((wins + wins.T)[None] > 0)[0]
    if reach.all():
        return
    group_of = reach.argmax(axis=1)  # lowest index in each system's group
    groups = [np.flatnonzero(group_of == g) for g in np.unique(group_of)]
    listed = " | ".join(f"[{_names(systems, g)}]" for g in groups)
    raise ValueError(
        f"the comparison graph is not connected: no chain of comparisons links the groups {listed}; "
        "strengths of different groups cannot be compared: add comparisons across the groups, or fit each group on its own"
    )


def _check_mle_exists(systems, wins: np.ndarray):
    """Without a penalty, the MLE is finite only if every system reaches every other through
    wins or ties (Ford 1957). Otherwise name the smallest group that never beat or tied the rest."""
    reach = _reachable((wins > 0)[None])[0]
    if reach.all():
        return
    sizes = np.where(reach.all(axis=1), len(systems) + 1, reach.sum(axis=1))
    closed = np.flatnonzero(reach[sizes.argmin()])
    rest = np.setdiff1d(np.arange(len(systems)), closed)
    raise ValueError(
        f"the maximum-likelihood strengths are infinite without a penalty: {_names(systems, closed)} never beat or tied "
        f"{_names(systems, rest)}; use l2_penalty > 0 (default {DEFAULT_L2_PENALTY})"
    )


# ---------------------------------------------------------------------------------------------
# Estimation (batched: wins is [B, S, S], one table of half-wins per resample)


def _penalised_log_likelihood(log_strength, wins, l2_penalty):
    difference = log_strength[:, :, None] - log_strength[:, None, :]
    return (wins * log_expit(difference)).sum(axis=(1, 2)) - 0.5 * l2_penalty * (log_strength**2).sum(axis=1)


def _gradient_and_information(log_strength, wins, games, l2_penalty):
    """Gradient (observed minus expected wins, minus the penalty's pull) and the negative Hessian,
    which is the graph Laplacian weighted by n_ij p_ij (1 - p_ij), plus l2_penalty on the diagonal."""
    p = expit(log_strength[:, :, None] - log_strength[:, None, :])
    gradient = wins.sum(axis=2) - (games * p).sum(axis=2) - l2_penalty * log_strength
    weight = games * p * (1.0 - p)
    S = log_strength.shape[1]
    information = -weight + np.eye(S) * (weight.sum(axis=2)[:, :, None] + l2_penalty)
    return gradient, information


def _line_search(log_strength, direction, value, wins, l2_penalty):
    """Halve each resample's step until the objective does not fall (up to rounding): Newton with
    this safeguard climbs a concave function to its maximum from any start."""
    step = np.ones(len(log_strength))
    slack = 1e-12 * np.maximum(1.0, np.abs(value))
    for _ in range(MAX_STEP_HALVINGS):
        candidate = log_strength + step[:, None] * direction
        new_value = _penalised_log_likelihood(candidate, wins, l2_penalty)
        improved = new_value >= value - slack
        if improved.all():
            break
        step = np.where(improved, step, step / 2)
    return candidate, new_value


def _newton(wins: np.ndarray, l2_penalty: float):
    """Log-strengths [B, S] (mean 0) maximising the penalised log-likelihood, and the steps taken.

    Why Newton and not the MM algorithm of Hunter (2004): there are few systems, so the S x S
    Hessian costs nothing; Newton converges quadratically and reaches the likelihood equations to
    ~1e-12 in a handful of steps, where MM converges linearly and slowest exactly when a system
    nearly always wins; and the penalty enters Newton as one term, with no special MM update.
    All resamples are solved at once (a batched linear solve).

    The Hessian is singular along (1, ..., 1) without a penalty (shifting all log-strengths changes
    nothing). Adding the all-ones matrix / S fixes that without changing the step: the gradient
    sums to zero when the log-strengths do (true at the start, 0, and kept by every step), so the
    step sums to zero and the added matrix multiplies it to zero.
    """
    B, S, _ = wins.shape
    games = wins + wins.transpose(0, 2, 1)
    tolerance = GRADIENT_TOLERANCE * np.maximum(1.0, games.sum(axis=2).max(axis=1))
    log_strength = np.zeros((B, S))
    value = _penalised_log_likelihood(log_strength, wins, l2_penalty)
    for steps in range(MAX_NEWTON_STEPS + 1):
        gradient, information = _gradient_and_information(log_strength, wins, games, l2_penalty)
        if (np.abs(gradient).max(axis=1) <= tolerance).all():
            return log_strength - log_strength.mean(axis=1, keepdims=True), steps
        direction = np.linalg.solve(information + 1.0 / S, gradient[:, :, None])[:, :, 0]
        log_strength, value = _line_search(log_strength, direction, value, wins, l2_penalty)
    raise RuntimeError(f"Newton's method did not converge in {MAX_NEWTON_STEPS} steps")


def _check_penalty(l2_penalty):
    if not np.isfinite(l2_penalty) or l2_penalty < 0:
        raise ValueError(f"l2_penalty must be a finite number >= 0; got {l2_penalty!r}")


# ---------------------------------------------------------------------------------------------
# Public API


def competition_ranks_by_strength(log_strength, decimals=RANK_DECIMALS) -> np.ndarray:
    """Competition ranks ("1224"), strongest first, of log-strengths rounded to `decimals`.

    Rounding first keeps floating-point noise from deciding an order: systems with identical
    records share a rank even when their fitted values differ in the 16th digit. Log-strengths (not
    strengths) are rounded because they are on a scale of units, where 12 decimals is far below
    any real difference and far above rounding error.
    """
    return competition_ranks(np.round(np.asarray(log_strength, dtype=float), decimals))


def fit(comparisons, l2_penalty=DEFAULT_L2_PENALTY) -> BradleyTerryFit:
    """Bradley-Terry strengths of the systems in `comparisons`, by penalised maximum likelihood.

    Ties count as half a win for each side. `l2_penalty` (default 0.1) keeps a perfect record
    finite; 0 gives the plain MLE and raises ValueError when that is infinite. Raises ValueError on
    bad input and on a comparison graph that is not connected. See the module docstring.
    """
    _check_penalty(l2_penalty)
    coded = _coded(comparisons)
    return _fit_coded(coded, _wins_per_unit(coded), l2_penalty)


def _fit_coded(coded: _Coded, per_unit: np.ndarray, l2_penalty) -> BradleyTerryFit:
    wins = per_unit.sum(axis=0).reshape(len(coded.systems), -1)
    _check_connected(coded.systems, wins)
    if l2_penalty == 0:
        _check_mle_exists(coded.systems, wins)
    log_strength, steps = _newton(wins[None], l2_penalty)
    return _fit_result(coded, wins, log_strength[0], l2_penalty, steps)


def _fit_result(coded: _Coded, wins, log_strength, l2_penalty, steps) -> BradleyTerryFit:
    S = len(coded.systems)
    win_probability = expit(log_strength[:, None] - log_strength[None, :])
    expected_win_rate = (win_probability.sum(axis=1) - 0.5) / (S - 1)  # the diagonal holds 0.5
    ranks = competition_ranks_by_strength(log_strength)
    won, lost, tied, compared = _record_counts(coded)
    per_system = [
        SystemStrength(
            system=system,
            rank=int(ranks[i]),
            log_strength=float(log_strength[i]),
            strength=float(np.exp(log_strength[i])),
            win_probability_vs_average=float(expit(log_strength[i])),
            expected_win_rate=float(expected_win_rate[i]),
            wins=int(won[i]),
            losses=int(lost[i]),
            ties=int(tied[i]),
            comparisons=int(compared[i]),
        )
        for i, system in enumerate(coded.systems)
    ]
    log_likelihood = float(_penalised_log_likelihood(log_strength[None], wins[None], 0.0)[0])
    return BradleyTerryFit(list(coded.systems), log_strength, per_system, float(l2_penalty), log_likelihood, steps, len(coded.a))


def _check_bootstrap_arguments(n_resamples, level):
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, numbers.Integral) or n_resamples < 1:
        raise ValueError(f"n_resamples must be a whole number >= 1; got {n_resamples!r}")
    if not 0 < level < 1:
        raise ValueError(f"level must lie strictly between 0 and 1 (e.g. 0.95); got {level!r}")


def _resampled_wins(per_unit: np.ndarray, n_resamples, rng, chunk):
    """Yield [size, S*S] half-win tables of resamples of the units, with replacement.

    Units with the same table are interchangeable, so a resample is a multinomial draw of how often
    each distinct table occurs: the same distribution as drawing units one by one, and its cost
    does not grow with the number of units.
    """
    tables, frequency = np.unique(per_unit, axis=0, return_counts=True)
    n_units = int(frequency.sum())
    for start in range(0, n_resamples, chunk):
        size = min(chunk, n_resamples - start)
        yield rng.multinomial(n_units, frequency / n_units, size=size) @ tables


def bootstrap(
    comparisons,
    n_resamples=DEFAULT_BOOTSTRAP,
    seed=DEFAULT_SEED,
    level=0.95,
    l2_penalty=DEFAULT_L2_PENALTY,
    chunk=250,
) -> BradleyTerryBootstrap:
    """Percentile intervals of every log-strength and rank ranges, over `n_resamples` resamples.

    Resamples instances (every comparison of a context together) when the comparisons carry
    instances, single comparisons otherwise. Rank and rank range are tie groups from the
    Holm-adjusted paired comparisons on the resamples (`_holm_groups`), so the rank shown lies in
    its range. A resample whose comparison graph falls apart is
    still finite when l2_penalty > 0 (the penalty centres each part at 0) and is counted in
    `disconnected_resamples`; with l2_penalty = 0 a resample without a finite MLE raises ValueError.
    """
    _check_penalty(l2_penalty)
    _check_bootstrap_arguments(n_resamples, level)
    coded = _coded(comparisons)
    per_unit = _wins_per_unit(coded)
    point = _fit_coded(coded, per_unit, l2_penalty)
    S = len(coded.systems)
    rng = np.random.default_rng(seed)
    chunks: list[np.ndarray] = []
    disconnected = 0
    for flat in _resampled_wins(per_unit, n_resamples, rng, chunk):
        wins = flat.reshape(-1, S, S)
        connected = _reachable((wins + wins.transpose(0, 2, 1)) > 0).all(axis=(1, 2))
        disconnected += int((~connected).sum())
        if l2_penalty == 0 and not _reachable(wins > 0).all():
            raise ValueError(
                "a resample has no finite maximum-likelihood estimate (a system won or lost all its comparisons in it); "
                "bootstrap with l2_penalty > 0"
            )
        chunks.append(_newton(wins, l2_penalty)[0])
    samples = np.concatenate(chunks)
    ci_low, ci_high = percentile_interval(samples, ci=level)
    rank, rank_low, rank_high = _holm_groups(point, samples, level)
    return BradleyTerryBootstrap(
        fit=point,
        samples=samples,
        ci_low=ci_low,
        ci_high=ci_high,
        rank=rank,
        rank_low=rank_low,
        rank_high=rank_high,
        level=level,
        n_resamples=int(n_resamples),
        seed=seed,
        resampling_unit=coded.resampling_unit,
        n_units=len(per_unit),
        disconnected_resamples=disconnected,
    )


def _holm_groups(point: BradleyTerryFit, samples: np.ndarray, level: float):
    """Tie groups and rank ranges as the ratings leaderboard makes them (`scoring.holm_rank_groups`):
    every pair's log-strength difference over the resamples, its two-sided bootstrap p, Holm over
    the table. Returned in the fit's system order."""
    log_strength = np.round([row.log_strength for row in point.per_system], RANK_DECIMALS)
    order = sorted(range(len(log_strength)), key=lambda k: -log_strength[k])
    rows = []
    for x, i in enumerate(order):
        for j in order[x + 1:]:
            difference = float(log_strength[i] - log_strength[j])
            p = bootstrap_p(samples[:, i] - samples[:, j], difference)
            rows.append({"a": i, "b": j, "difference": difference, "p": 1.0 if p is None else p})  # no resample: no evidence
    for row, adjusted in zip(rows, holm([row["p"] for row in rows]) if rows else [], strict=True):
        row["significant_holm"] = bool(adjusted < 1 - level)
    groups = holm_rank_groups(order, rows)
    rank, low, high = (np.zeros(len(order), dtype=int) for _ in range(3))
    for position, k in enumerate(order):
        rank[k], low[k], high[k] = groups.rank[position], groups.rank_low[position], groups.rank_high[position]
    return rank, low, high


def difference_interval(result: BradleyTerryBootstrap, system_a, system_b):
    """Percentile interval of log(s_a / s_b) over the resamples, at the bootstrap's level."""
    missing = [s for s in (system_a, system_b) if s not in result.fit.systems]
    if missing:
        raise ValueError(f"unknown system(s): {', '.join(map(repr, missing))}")
    i, j = result.fit.systems.index(system_a), result.fit.systems.index(system_b)
    low, high = percentile_interval(result.samples[:, i] - result.samples[:, j], ci=result.level)
    return float(low), float(high)


def export_rows(result: BradleyTerryFit | BradleyTerryBootstrap) -> list[dict]:
    """One dict per system, strongest first, for the page, the CSV/Markdown writers and the API.

    Rows are in order of log-strength (rounded to RANK_DECIMALS, strongest first; equal ones in
    order of first appearance in the input, `ROW_ORDER`): with a bootstrap several rows share the
    rank of their tie group, and within it they are still listed by strength, the order the
    fragility table reads ("rank 1: X above Y"). The tie-group ranks never decrease down this order
    (`scoring.holm_rank_groups` builds them along it).
    ci_low/ci_high are on the log-strength scale; they and the rank range are None for a fit
    without a bootstrap.
    """
    point = result.fit if isinstance(result, BradleyTerryBootstrap) else result
    boot = result if isinstance(result, BradleyTerryBootstrap) else None
    rows = []
    for i, row in enumerate(point.per_system):
        rows.append(
            {
                "rank": int(boot.rank[i]) if boot else row.rank,
                "system": row.system,
                "strength": row.strength,
                "log_strength": row.log_strength,
                "ci_low": float(boot.ci_low[i]) if boot else None,
                "ci_high": float(boot.ci_high[i]) if boot else None,
                "rank_low": int(boot.rank_low[i]) if boot else None,
                "rank_high": int(boot.rank_high[i]) if boot else None,
                "wins": row.wins,
                "losses": row.losses,
                "ties": row.ties,
                "comparisons": row.comparisons,
            }
        )
    log_strength = np.round(point.log_strength, RANK_DECIMALS)
    order = sorted(range(len(rows)), key=lambda i: (rows[i]["rank"], -log_strength[i], i))
    return [rows[i] for i in order]
