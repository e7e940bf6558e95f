"""Power planning for a human evaluation: how many instances and raters per instance it takes to
separate the systems that matter. Pure module: numpy, pandas, scipy and `hits.policy.costs` (pure); no Django.

The model. A rater's rating of a system on an instance, averaged over the questions (the final
score is the mean over questions, so that is the quantity ranked), is

    y[s, i, r] = mu_s + a_i + b_si + c_r + e_sir

with random instance effects a (variance `instance`), system-by-instance effects b
(`system_instance`: how much systems disagree about which instances are hard), rater effects c
(`rater`: leniency) and a residual e (`residual`). `fit` estimates the four variances by moments
from a pilot (unbalanced data are fine):
- within an item (system, instance), the ratings of different raters vary by rater + residual;
- a rater's mean deviation from the item means, over many items, keeps the rater part and averages
  the residual away; the difference separates the two (zero without rater ids: positional raters
  such as DSTC's 'pos1' are not people);
- the item means of one instance vary across systems by system_instance + (within)/k;
- the instance means vary by instance + (the rest)/S.
Each estimate is clipped at 0.

What is planned. The report's verdict, not a t-test's: a pair counts as separated when the
leaderboard, scoring a simulated campaign as it scores a real one (the ranked statistic, the
rater-aware paired bootstrap, tie groups from Holm-adjusted comparisons over the whole table),
puts the truly better system in a better tie group (`report_power`). The raters are those the
pilot shows: a pool when its rater ids repeat (each rater rated at least POOL_SHARE of the items;
the campaign is assumed rated by the same pool, whose leniencies are shared across instances), else
a crowd (a new rater for every rating, the rater variance acting as rating noise). The paired
t-test on plain means (`simulated_power`, cheap) gives the size the search starts from. For each
raters per instance m, the plan simulates campaigns of every pilot system at its pilot mean (or two
systems `delta` apart) and finds the n at which every adjacent pair of the top k on the ranked
statistic reaches the power; the plan is the cheapest (n, m). The ranked statistic is the
leaderboard's: Eq. 1 where the pilot carries detection (a pilot campaign: its test set's labels and
its entries' predictions, `report_power.Detection`), the campaign then sampling knowledge-seeking
instances and resampling detection as the leaderboard does; else plain means, and the plan's notes
say why.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from evaluation.stats import report_power
from hits.policy import costs
from quorum import numbers

DEFAULT_SIMULATIONS = 2000
DEFAULT_SEED = 20210101
DEFAULT_MAX_RATERS = 5
DEFAULT_MAX_INSTANCES = 100_000


@dataclass(frozen=True)
class Components:
    """Variances of the rating model (module docstring), on the 1-5 scale squared."""

    instance: float
    system_instance: float
    rater: float
    residual: float

    def difference_variance(self, raters_per_instance: int) -> float:
        """Variance of one instance's difference between two systems, m raters each (fresh raters)."""
        return 2 * self.system_instance + 2 * (self.rater + self.residual) / raters_per_instance


@dataclass
class PilotModel:
    """The fitted pilot: system means (best first), variance components, and what they came from."""

    means: dict[str, float]
    components: Components
    n_ratings: int
    n_instances: int
    n_raters: int
    raters_per_item: float
    rater_ids_known: bool = True
    #: The test set's labels and the entries' detection predictions (a pilot campaign's), for Eq. 1.
    detection: report_power.Detection | None = None

    def eq1(self, labels=None) -> bool:
        """Whether the leaderboard ranks these systems by Eq. 1 (some have detection predictions)."""
        return self.detection is not None and self.detection.applies(list(labels or self.means))

    @property
    def ranked(self) -> dict[str, float]:
        """The ranked statistic at the pilot's means, best first: Eq. 1's S_f where detection
        applies (mean x detection F1), else the mean."""
        values = self.detection.statistic(self.means) if self.detection is not None and self.eq1() else dict(self.means)
        return dict(sorted(values.items(), key=lambda item: -item[1]))

    @property
    def rater_share(self) -> float:
        """Of the pilot's items, the share an average rater rated."""
        return self.raters_per_item / max(self.n_raters, 1)

    @property
    def raters(self) -> report_power.Raters:
        """A pool of the pilot's raters when their ids are people who repeat (each rated at least
        POOL_SHARE of the items), else a crowd."""
        pool = self.rater_ids_known and self.n_raters > 1 and self.rater_share >= POOL_SHARE
        return report_power.Raters(self.n_raters if pool else None)

    def as_dict(self) -> dict:
        return {
            "means": self.means, "components": asdict(self.components), "n_ratings": self.n_ratings,
            "n_instances": self.n_instances, "n_raters": self.n_raters, "raters_per_item": self.raters_per_item,
            "rater_ids_known": self.rater_ids_known, "pool": self.raters.pool,
            "statistic": "eq1" if self.eq1() else "mean", "ranked": self.ranked,
        }


def fit(ratings: pd.DataFrame, systems=None, rater_ids_known=True, detection: report_power.Detection | None = None) -> PilotModel:
    """Fit the model to `ratings` (columns system, instance, rater, question, value); `detection`
    (kept on the model) when the pilot knows Eq. 1's labels and predictions.

    `systems`: the labels to plan for (default: every system in the ratings). Raises ValueError
    when the pilot cannot identify the components (no item rated twice, fewer than two systems)."""
    if systems is not None:
        ratings = ratings[ratings["system"].isin(list(systems))]
    if ratings.empty:
        raise ValueError("the pilot has no ratings of the systems to plan for")
    if not np.isfinite(pd.to_numeric(ratings["value"], errors="coerce")).all():
        raise ValueError("the pilot has ratings that are not numbers: the model is fitted to numeric ratings")
    # One value per rater and item: the mean over the questions, the quantity the final score averages.
    y = ratings.groupby(["system", "instance", "rater"], sort=False)["value"].mean().rename("y").reset_index()
    items = y.groupby(["system", "instance"], sort=False)["y"]
    cell = pd.DataFrame({"mean": items.mean(), "k": items.size(), "var": items.var(ddof=1)}).reset_index()
    repeated = cell[cell["k"] >= 2]
    if repeated.empty:
        raise ValueError("the pilot needs at least two raters on some items to tell raters from systems")
    within = float(((repeated["k"] - 1) * repeated["var"]).sum() / (repeated["k"] - 1).sum())

    rater = 0.0
    if rater_ids_known:
        y = y.merge(cell[["system", "instance", "mean", "k"]], on=["system", "instance"])
        y = y[y["k"] >= 2]
        per_rater = (y["y"] - y["mean"]).groupby(y["rater"]).agg(["mean", "size"])
        per_rater = per_rater[per_rater["size"] >= 2]
        if len(per_rater) >= 2:
            shrink = float((1 - 1 / y["k"]).mean())  # a rater's deviation from an item mean that includes them
            excess = float((per_rater["mean"] ** 2).mean() - shrink * within * (1 / per_rater["size"]).mean())
            rater = min(max(excess / shrink**2, 0.0), within)
    residual = within - rater

    means = cell.groupby("system")["mean"].mean()
    if len(means) < 2:
        raise ValueError("the pilot must rate at least two systems")
    cell["u"] = cell["mean"] - cell["system"].map(means)
    by_instance = cell.groupby("instance")["u"]
    spread = pd.DataFrame({"var": by_instance.var(ddof=1), "n": by_instance.size(), "mean": by_instance.mean()})
    shared = spread[spread["n"] >= 2]
    if shared.empty:
        raise ValueError("the pilot needs instances rated for at least two systems")
    noise_of_mean = within * float((1 / cell["k"]).mean())
    across = float(((shared["n"] - 1) * shared["var"]).sum() / (shared["n"] - 1).sum())
    system_instance = max(across - noise_of_mean, 0.0)
    instance = max(float(shared["mean"].var(ddof=1)) - (system_instance + noise_of_mean) * float((1 / shared["n"]).mean()), 0.0) if len(shared) > 1 else 0.0

    if within + system_instance == 0:
        raise ValueError("the pilot's ratings do not vary within an instance: no noise can be estimated to plan against (every rater gave the same rating)")
    ordered = means.sort_values(ascending=False, kind="stable")
    return PilotModel(
        means={str(k): float(v) for k, v in ordered.items()},
        components=Components(instance=instance, system_instance=system_instance, rater=rater, residual=residual),
        n_ratings=int(len(ratings)),
        n_instances=int(cell["instance"].nunique()),
        n_raters=int(ratings["rater"].nunique()),
        raters_per_item=float(cell["k"].mean()),
        rater_ids_known=bool(rater_ids_known),
        detection=detection,
    )


def simulated_power(delta: float, components: Components, n: int, m: int, alpha=0.05, simulations=DEFAULT_SIMULATIONS, seed=DEFAULT_SEED, chunk=250) -> float:
    """Share of `simulations` campaigns of n instances x m raters (fresh raters) in which the paired
    t-test of two systems `delta` apart is significant at `alpha` in the true direction.

    Each campaign draws, per instance and system, the system-by-instance effect plus the mean of m
    raters' (rater + residual) noise, one normal per item as that sum is; the instance effect is
    shared by both systems and cancels exactly in the difference, so it is not drawn. Seeded per
    (seed, n, m): the same question gets the same answer."""
    if n < 2 or m < 1:
        raise ValueError("a campaign needs at least 2 instances and 1 rater per instance")
    rng = np.random.default_rng([seed, n, m])
    c = components
    item_sd = math.sqrt(c.system_instance + (c.rater + c.residual) / m)
    critical = stats.t.ppf(1 - alpha / 2, n - 1)
    hits = 0
    for start in range(0, simulations, chunk):
        size = min(chunk, simulations - start)
        first = rng.standard_normal((size, n), dtype=np.float32)
        second = rng.standard_normal((size, n), dtype=np.float32)
        d = delta + item_sd * (first - second)
        sd = d.std(axis=1, ddof=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = d.mean(axis=1) / (sd / math.sqrt(n))
        hits += int((np.sign(delta) * t > critical).sum()) if delta else int((np.abs(t) > critical).sum())
    return hits / simulations


def normal_instances(delta, components: Components, m: int, alpha=0.05, power=0.8) -> int:
    """The normal-approximation n, used to bracket the simulated search."""
    z = stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)
    return max(2, math.ceil(z**2 * components.difference_variance(m) / delta**2))


def instances_needed(delta, components: Components, m: int, alpha=0.05, power=0.8, simulations=DEFAULT_SIMULATIONS, seed=DEFAULT_SEED, max_instances=DEFAULT_MAX_INSTANCES):
    """The smallest n (by simulation, bisection from the normal bracket) at which the power reaches
    `power`, and that power; (None, power at max_instances) when it is out of reach."""
    if delta == 0:
        return None, alpha
    seen = {}

    def power_at(k):
        if k not in seen:
            seen[k] = simulated_power(delta, components, k, m, alpha, simulations, seed)
        return seen[k]

    guess = min(normal_instances(abs(delta), components, m, alpha, power), max_instances)
    low, high = max(2, int(guess * 0.9)), min(max(guess + 2, int(guess * 1.1)), max_instances)
    while power_at(high) < power:  # the t-test needs a little more than the normal formula
        if high >= max_instances:
            return None, power_at(max_instances)
        low, high = high, min(2 * high, max_instances)
    while power_at(low) >= power and low > 2:
        low, high = max(2, low // 2), low
    while high - low > max(1, high // 100):  # 1% in n moves the power less than the simulation's own noise
        mid = (low + high) // 2
        if power_at(mid) >= power:
            high = mid
        else:
            low = mid
    return high, power_at(high)


@dataclass
class Option:
    raters_per_instance: int
    instances: int | None
    ratings: int | None  # responses: instances x raters x systems
    # The report's power for the hardest pair at this size (simulated campaigns, fitted curve); for
    # an option out of reach, its power at the largest size (`Plan.max_instances`) when the search
    # ran, None when it did not (the t-test already out of reach, or no gap to separate).
    power: float | None
    cost: dict | None = None
    t_test_instances: int | None = None  # what a paired t-test on plain means would have asked for
    simulated: bool = True  # False: a crowd's size scaled from a simulated option (`_options`)


@dataclass
class Plan:
    pairs: list[dict]  # the adjacent pairs of the top k (or the delta), with their gaps
    binding: dict  # the hardest pair, which sets the size
    options: list[Option]
    best: Option | None
    target_power: float
    alpha: float
    systems: int
    pilot: PilotModel
    notes: list[str] = field(default_factory=list)
    max_instances: int = DEFAULT_MAX_INSTANCES  # the largest size searched (the test set's knowledge-seeking instances with Eq. 1)
    simulations: int = DEFAULT_SIMULATIONS  # t-test simulations per size (where the search starts)
    campaigns: int = report_power.DEFAULT_CAMPAIGNS  # campaigns per size scored as the report scores them (the powers shown)

    def as_dict(self) -> dict:
        return {
            "target_power": self.target_power, "alpha": self.alpha, "systems": self.systems, "pairs": self.pairs,
            "binding": self.binding, "options": [asdict(o) for o in self.options],
            "best": asdict(self.best) if self.best else None, "pilot": self.pilot.as_dict(), "notes": self.notes,
            "max_instances": self.max_instances, "simulations": self.simulations, "campaigns": self.campaigns,
        }


def plan(
    model: PilotModel,
    top_k: int,
    power=0.8,
    alpha=0.05,
    delta=None,
    systems=None,
    max_raters=DEFAULT_MAX_RATERS,
    min_raters=1,
    max_instances=DEFAULT_MAX_INSTANCES,
    simulations=DEFAULT_SIMULATIONS,
    seed=DEFAULT_SEED,
    campaigns=report_power.DEFAULT_CAMPAIGNS,
    pricing=None,
    reward="0.10",
    fee_rate=0,
    assignments_per_posting=1,
    progress: Callable[[int, int], None] = lambda done, total: None,
) -> Plan:
    """The cheapest size at which the report separates every adjacent pair of the top `top_k`
    systems (by pilot mean) with probability `power`, or a difference `delta`. `systems` is how many
    rows the campaign rates (default: the pilot's, reference rows included), which the cost counts;
    with `pricing` (a provider, see hits.policy.costs) the options carry the cost with its fees.
    `simulations`: campaigns per size of the t-test search the plan starts from; `campaigns`:
    campaigns per size scored by the report; `progress(done, total)` is called after each
    raters-per-instance count is searched."""
    if not 0 < power < 1 or not 0 < alpha < 1:
        raise ValueError("power and alpha must lie strictly between 0 and 1")
    if not 1 <= min_raters <= max_raters:
        raise ValueError("raters per instance: the minimum must be at least 1 and at most the maximum")
    labels = list(model.means)
    if not 2 <= top_k <= len(labels):
        raise ValueError(f"top k must be between 2 and the number of systems in the pilot ({len(labels)})")
    systems = systems or len(labels)
    notes = []
    if systems > len(labels):  # reference rows (a baseline, the human responses): rated, never ranked
        others = systems - len(labels)
        notes.append(
            f"Planned for the {len(labels)} entries' pairs; the other {others} row{'' if others == 1 else 's'} the campaign rates "
            f"(baselines, references) {'is' if others == 1 else 'are'} counted in the cost but not ranked, so no pair with "
            f"{'it' if others == 1 else 'them'} is planned"
        )
    detection = model.detection if delta is None and model.eq1() else None
    if delta is not None:
        if delta <= 0:
            raise ValueError("delta must be above 0")
        pairs: list[dict[str, Any]] = [{"a": None, "b": None, "gap": float(delta)}]
    else:
        ranked = model.ranked
        labels = list(ranked)
        pairs = [{"a": labels[j], "b": labels[j + 1], "gap": ranked[labels[j]] - ranked[labels[j + 1]]} for j in range(top_k - 1)]
        if any(p["gap"] <= 0 for p in pairs):
            notes.append("some adjacent systems have the same pilot score: give --delta for the smallest difference that matters")
    binding = min(pairs, key=lambda p: p["gap"])
    start_gap, max_instances = _on_ratings(binding, detection, max_instances, notes)
    raters = model.raters
    if delta is not None:
        means, planned = {"a": float(delta), "b": 0.0}, [("a", "b")]
    else:
        means, planned = dict(model.means), [(p["a"], p["b"]) for p in pairs]
    if raters.pool is not None and max_raters > raters.pool:
        notes.append(f"at most {raters.pool} raters per instance: the pool has {raters.pool} raters")
        max_raters = max(min(max_raters, raters.pool), 1)
        min_raters = min(min_raters, max_raters)
    fees = {"reward": reward, "fee_rate": fee_rate, "assignments_per_posting": assignments_per_posting}
    options = _options(
        model, means, planned, start_gap, range(min_raters, max_raters + 1), systems, alpha, power, max_instances, simulations, seed, campaigns,
        pricing, fees, progress, detection,
    )
    best = _choose(
        options, notes, lambda o: _search(o, model, means, planned, o.instances, alpha, power, max_instances, campaigns, seed, detection),
        systems, pricing, fees, max_instances,
    )
    for p in pairs:
        p["gap"] = float(p["gap"])
    assumptions = assumed(model, best, top_k, alpha, delta, detection is not None)
    if best is not None and best.raters_per_instance == 1 and raters.pool is None:
        # With fresh raters the cost per unit of precision grows with m, so one rater wins on power
        # alone; agreement, gold checks and DSTC's protocol need more, which is the organizer's call.
        notes.append("one rater per instance is cheapest for power; agreement needs at least 2 (--min-raters)")
    return Plan(pairs, binding, options, best, power, alpha, systems, model, assumptions + notes, max_instances, simulations, campaigns)


def _on_ratings(binding: dict, detection, max_instances: int, notes: list[str]) -> tuple[float, int]:
    """(the gap the t-test the search starts from uses, the most instances a campaign can rate).
    With Eq. 1 the t-test is still on ratings: the binding pair's gap in rating units (over the
    pair's detection F1), and a campaign rates at most the test set's knowledge-seeking instances."""
    if detection is None:
        return binding["gap"], max_instances
    if detection.seeking < 2:
        raise ValueError(f"the test set has {detection.seeking} knowledge-seeking instance(s): a campaign needs at least 2 to rate")
    if max_instances > detection.seeking:
        max_instances = detection.seeking
        notes.append(f"at most {detection.seeking} instances: the test set's knowledge-seeking instances, the ones a campaign rates")
    return binding["gap"] / max(float(np.mean([detection.factor(binding["a"]), detection.factor(binding["b"])])), 1e-9), max_instances


def _options(
    model, means, planned, gap, raters_range, systems, alpha, power, max_instances, simulations, seed, campaigns, pricing, fees, progress, detection=None,
) -> list[Option]:
    """One option per raters per instance m: the t-test's n, then the report's n searched from it.
    For a crowd the report's n over the t-test's carries over between values of m (with fresh raters
    m enters the verdict only through each instance's variance, as it enters the t-test), so only
    the first m is searched and the others are scaled (`simulated` False) until one is chosen."""
    crowd = model.raters.pool is None
    ratio = None
    options = []
    for m in raters_range:
        start, _ = instances_needed(gap, model.components, m, alpha, power, simulations, seed, max_instances)
        option = Option(m, None, None, None, t_test_instances=start)  # no power until the report's search gives one
        if start is not None and gap > 0:
            if crowd and ratio is not None:
                option.instances, option.power, option.simulated = min(max_instances, math.ceil(start * ratio)), power, False
            else:
                _search(option, model, means, planned, round(start * (ratio or 1.0)), alpha, power, max_instances, campaigns, seed, detection)
                ratio = option.instances / start if option.instances else ratio
        _price(option, systems, pricing, fees)
        options.append(option)
        progress(len(options), len(raters_range))
    return options


def _choose(options: list[Option], notes: list[str], search, systems, pricing, fees, max_instances) -> Option | None:
    """The cheapest reachable option (cost, else ratings; fewer raters on a tie). A scaled crowd
    option that comes out cheapest is simulated (`search`) and the choice made again."""

    def cheapest():
        reachable = [o for o in options if o.instances]
        return min(reachable, key=lambda o: (float(o.cost["total"]) if o.cost else o.ratings, o.raters_per_instance)) if reachable else None

    best = cheapest()
    if best is not None and not best.simulated:
        search(best)
        _price(best, systems, pricing, fees)
        best = cheapest()
    if best is None:
        notes.append(f"no size up to {max_instances} instances reaches the power: the pair is too close to separate")
    scaled = [o.raters_per_instance for o in options if o.instances and not o.simulated]
    if scaled:
        notes.append(
            f"a crowd: the sizes for {', '.join(map(str, scaled))} raters per instance are the t-test's times the ratio the report's "
            "simulated verdict gave for the searched options (with fresh raters it carries over); the recommended option is simulated"
        )
    return best


def _search(option: Option, model, means, planned, start, alpha, power, max_instances, campaigns, seed, detection=None) -> None:
    """The report's n and power for the option's raters per instance, searched from `start`."""
    option.instances, option.power = report_power.instances_needed(
        means, model.components, planned, option.raters_per_instance, model.raters, start, alpha, power, max_instances, campaigns, seed=seed,
        detection=detection,
    )
    option.simulated = True


def _price(option: Option, systems, pricing, fees) -> None:
    n, m = option.instances, option.raters_per_instance
    option.ratings = n * m * systems if n else None
    option.cost = costs.estimate(pricing, items=n * systems, redundancy=m, **fees).as_dict() if n and pricing is not None else None


#: A rater who rated at least this share of the pilot's items counts as one of a pool, not a crowd.
POOL_SHARE = 0.1


def assumed(model: PilotModel, best: Option | None, top_k: int, alpha: float, delta=None, eq1=False) -> list[str]:
    """What the plan assumed, in words, first among its notes: the raters (a pool or a crowd, as
    detected from the pilot's rater ids), the raters per instance of the recommended option, and
    the pairs and the verdict it planned for."""
    lines = []
    raters = model.raters
    if raters.pool is not None:
        lines.append(
            f"Assumed: a pool of {raters.pool} raters (detected: the pilot's {model.n_raters} raters each rated about "
            f"{numbers.percent(model.rater_share)} of its items), the same pool rating the campaign, each rater's leniency "
            f"(variance {numbers.decimals(model.components.rater)}) shared across the instances they rate"
        )
    else:
        why = (
            "the pilot's rater ids are positions, not people" if not model.rater_ids_known
            else f"the pilot's {model.n_raters} raters each rated about {numbers.percent(model.rater_share)} of its items"
        )
        lines.append(
            f"Assumed: a crowd, a new rater for every rating ({why}; the rater variance, "
            f"{numbers.decimals(model.components.rater)}, counted as rating noise)"
        )
    if best is not None:
        lines.append(f"Assumed: {best.raters_per_instance} rater{'' if best.raters_per_instance == 1 else 's'} per instance (the recommended option)")
    if eq1:
        statistic = (
            f"by the leaderboard's statistic, Eq. 1 with knowledge-turn detection: each campaign samples the test set's "
            f"{model.detection.seeking if model.detection else 0} knowledge-seeking instances, rates an entry only where it detected one, "
            "and resamples detection with the ratings as the leaderboard does"
        )
    elif delta is not None:
        statistic = "on plain means (a difference to detect is a difference of mean ratings, whatever the entries' detection)"
    elif model.detection is not None:
        statistic = "on plain means (no entry of the pilot has detection predictions, so the leaderboard ranks by the mean)"
    else:
        statistic = (
            "on plain means (the pilot carries no detection predictions: a ratings CSV without target/predicted columns; where the "
            "leaderboard will rank by Eq. 1, plan from a pilot campaign whose entries have their outputs, or give those columns)"
        )
    what = f"a difference of {delta}" if delta is not None else f"each adjacent pair of the top {top_k}"
    lines.append(
        f"Assumed: {what}, separated as the report separates pairs: the better system in a better tie group, by the rater-aware "
        f"paired bootstrap (linearised) with Holm-adjusted comparisons over the whole table at level {alpha}, {statistic}"
    )
    return lines
