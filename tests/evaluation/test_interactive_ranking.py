"""The interactive leaderboard's statistics (evaluation/stats/interactive.py): point values by hand, the
bootstrap interval against the closed-form t interval of a mean, tie groups, rank ranges, exports."""
import csv
import io

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from evaluation.stats.interactive import system_results, to_csv, to_markdown

DATABASE = {"restaurant": [{"name": "Golden Wok", "food": "chinese", "area": "centre"}, {"name": "Pizza Hut", "food": "italian", "area": "south"}]}
GOAL = {"restaurant": {"info": {"food": "chinese", "area": "centre"}}}


def _dialog(system, goal_id, outcome, offered=None, understanding=4, appropriateness=3, worker=None):
    transcript = [{"role": "user", "text": "hi", "failed": False, "offered": None},
                  {"role": "system", "text": "ok", "failed": False, "offered": offered}]
    return {"system": system, "goal_id": str(goal_id), "goal": GOAL, "database": DATABASE, "worker": worker, "answers": {
        "outcome": outcome, "transcript": transcript, "understanding": understanding, "appropriateness": appropriateness}}


def test_point_values_by_hand():
    dialogs = [
        _dialog("a", 1, "success", {"name": "Golden Wok"}),
        _dialog("a", 2, "success", {"name": "Pizza Hut"}),  # the worker said success; the entity does not fit the goal
        _dialog("a", 3, "fail", {"name": "Golden Wok"}, understanding=2),
        _dialog("a", 4, "success", None, understanding=None),  # nothing offered: not grounded; no rating (system stopped)
    ]
    row, = system_results(dialogs, bootstrap=200)["systems"]
    assert (row["success"], row["grounded_success"], row["final"]) == (0.75, 0.25, 0.5)
    assert row["understanding"] == (4 + 4 + 2) / 3 and row["appropriateness"] == 3.0  # whole: rounded only where people read it
    assert row["rank"] == row["rank_low"] == row["rank_high"] == 1 and row["dialogs"] == 4 and row["goals"] == 4


def test_the_interval_of_a_success_rate_is_the_wilson_interval_of_its_effective_size():
    """One dialog per goal, 40 goals, 20 successes, no workers: the goal bootstrap's variance of a
    mean of 0/1 values, scaled by G/(G-1), is p(1-p)/(n-1), so the effective size is n - 1 = 39,
    and the interval is Wilson's score interval over 39 trials with t_39 in place of z (statsmodels'
    `proportion_confint`, at the level whose normal quantile is t_39)."""
    n = 40
    dialogs = [_dialog("a", g, "success" if g % 2 else "fail", None) for g in range(n)]
    row, = system_results(dialogs, bootstrap=20000, seed=3)["systems"]
    level = 2 * stats.norm.sf(stats.t.ppf(0.975, n - 1))
    low, high = proportion_confint(0.5 * (n - 1), n - 1, alpha=level, method="wilson")
    assert row["success"] == 0.5
    assert row["success_ci_low"] == pytest.approx(low, abs=0.004)
    assert row["success_ci_high"] == pytest.approx(high, abs=0.004)


def test_a_success_rate_at_a_bound_keeps_an_interval_inside_the_scale():
    """Every dialog a success: no spread to resample, yet the interval is not the point [1, 1]
    (Wilson over the 30 goals: its lower end below 1), and it stays on 0-1."""
    dialogs = [_dialog("a", g, "success", {"name": "Golden Wok"}) for g in range(30)]
    row, = system_results(dialogs, bootstrap=1000)["systems"]
    low, high = proportion_confint(30, 30, alpha=2 * stats.norm.sf(stats.t.ppf(0.975, 29)), method="wilson")
    assert row["success_ci_high"] == 1.0 and row["success_ci_low"] == pytest.approx(low, abs=1e-4) and low < 0.95


def test_tie_groups_and_rank_ranges():
    goals = range(30)
    best = [_dialog("best", g, "success", {"name": "Golden Wok"}) for g in goals]
    close = [_dialog("close", g, "success", {"name": "Golden Wok"} if g % 10 else None) for g in goals]  # 29/30 grounded
    worst = [_dialog("worst", g, "fail") for g in goals]
    result = system_results(best + close + worst, bootstrap=2000)
    rows = {r["system"]: r for r in result["systems"]}
    assert [r["system"] for r in result["systems"]] == ["best", "close", "worst"]
    # best and close are not told apart by 30 goals: one tie group; worst is clearly last.
    assert (rows["best"]["rank"], rows["close"]["rank"], rows["worst"]["rank"]) == (1, 1, 3)
    assert rows["worst"]["rank_low"] == rows["worst"]["rank_high"] == 3
    assert rows["best"]["rank_low"] == 1 and rows["close"]["rank_high"] == 2
    pair = next(p for p in result["pairwise"] if {p["a"], p["b"]} == {"best", "worst"})
    assert pair["significant"] and pair["better"] == "best" and pair["difference"] == 1.0


def test_identical_systems_share_rank_one_and_the_same_seed_gives_the_same_numbers():
    dialogs = [_dialog(s, g, "success" if g % 3 else "fail", {"name": "Golden Wok"}) for s in ("x", "y") for g in range(12)]
    first, again = system_results(dialogs, bootstrap=500, seed=9), system_results(dialogs, bootstrap=500, seed=9)
    assert first == again
    assert [r["rank"] for r in first["systems"]] == [1, 1]
    assert first["systems"][0]["final_ci_low"] == first["systems"][1]["final_ci_low"]


def test_exports():
    dialogs = [_dialog("a", g, "success", {"name": "Golden Wok"}) for g in range(5)] + [_dialog("b", g, "fail") for g in range(5)]
    result = system_results(dialogs, bootstrap=200)
    table = list(csv.DictReader(io.StringIO(to_csv(result))))
    assert [r["system"] for r in table] == ["a", "b"] and table[0]["final"] == "1.0" and table[1]["rank"] == "2"
    assert {"final_ci_low", "final_ci_high", "rank_low", "grounded_success"} <= set(table[0])
    markdown = to_markdown(result, job_name="Round 1")
    assert markdown.startswith("## Round 1") and f"| 1 | 1-1 | a | 5 | 1.000 [{float(table[0]['final_ci_low']):.3f}, 1.000]" in markdown
    assert "bootstrap over user goals" in markdown


def test_intervals_stay_on_the_scale():
    dialogs = [_dialog("a", g, "success" if g < 4 else "fail", {"name": "Golden Wok"}, understanding=5 if g else 1) for g in range(6)]
    row, = system_results(dialogs, bootstrap=1000)["systems"]
    # 4 successes of 6 goals, ratings 1 and 5: a symmetric interval t_5 * SE wide would pass 1 and 5.
    assert 0 <= row["success_ci_low"] < row["success"] < row["success_ci_high"] <= 1
    assert 1 <= row["understanding_ci_low"] < row["understanding"] < row["understanding_ci_high"] <= 5


def test_no_dialogs_yet_is_an_empty_table_not_an_error():
    result = system_results([], bootstrap=100)
    assert result["systems"] == [] and result["pairwise"] == [] and "bootstrap over user goals" in result["method"]["ci_method"]


def _campaign(rng, goals=40, workers=5, leniency=1.5, worker_pool=None):
    """Two systems on the same goals, each dialog judged by one of a few workers whose leniency moves
    the success they report (a logistic model); returns the dialogs and the true success rate of
    system "a" over the population of goals and workers."""
    pool = rng.normal(0, leniency, workers) if worker_pool is None else worker_pool
    dialogs = []
    for system, quality in (("a", 0.3), ("b", -0.3)):
        for g in range(goals):
            w = int(rng.integers(workers))
            p = 1 / (1 + np.exp(-(quality + pool[w] + rng.normal(0, 0.5))))
            dialogs.append(_dialog(system, g, "success" if rng.random() < p else "fail", worker=f"w{w}"))
    return dialogs


def test_a_few_workers_judging_every_system_widen_the_interval():
    """The same dialogs with and without their workers: resampling workers too gives a wider
    interval (their leniency moves every system's success together), and says how many workers."""
    dialogs = _campaign(np.random.default_rng(5))
    with_workers = {r["system"]: r for r in system_results(dialogs, bootstrap=4000, seed=1)["systems"]}
    anonymous = [{**d, "worker": None} for d in dialogs]
    goals_only = {r["system"]: r for r in system_results(anonymous, bootstrap=4000, seed=1)["systems"]}
    for system in ("a", "b"):
        wide, narrow = with_workers[system], goals_only[system]
        assert wide["success"] == narrow["success"] and wide["workers"] == 5 and narrow["workers"] == 0
        assert wide["success_ci_high"] - wide["success_ci_low"] > 1.2 * (narrow["success_ci_high"] - narrow["success_ci_low"])
    # One worker for everything: nothing to resample, the goal-only interval.
    single = [{**d, "worker": "w0"} for d in dialogs]
    assert system_results(single, bootstrap=4000, seed=1)["systems"][0]["success_ci_low"] == pytest.approx(goals_only["a"]["success_ci_low"])


def _crowd_campaign(rng, goals, workers=None, leniency=1.5):
    """Two systems on the same goals; each dialog judged by a worker from a pool of `workers` or,
    with None, by a new worker (a crowd: every worker judges one dialog). A worker's leniency moves
    the success they report (a logistic model), for every system they judge."""
    pool = rng.normal(0, leniency, 2 * goals if workers is None else workers)
    dialogs = []
    for k, (system, quality) in enumerate((("a", 0.3), ("b", -0.3))):
        for g in range(goals):
            w = k * goals + g if workers is None else int(rng.integers(workers))
            p = 1 / (1 + np.exp(-(quality + pool[w] + rng.normal(0, 0.5))))
            dialogs.append(_dialog(system, g, "success" if rng.random() < p else "fail", worker=f"w{w}"))
    return dialogs


#: Simulated campaigns per coverage setting: at 95% the binomial SE of a coverage over 1,000
#: campaigns is sqrt(0.95 * 0.05 / 1000) = 0.0069, so the 0.93-0.97 band is +-2.9 SE around nominal.
COVERAGE_RUNS = 1000


@pytest.mark.slow
@pytest.mark.parametrize("workers", [None, 40, 5], ids=["new-worker-per-dialog", "pool-of-40", "pool-of-5"])
def test_the_success_interval_covers_the_population_success_at_its_nominal_level(workers):
    """Coverage by simulation, two-sided: each campaign draws 60 goals and its workers (a new one
    per dialog, or a new pool of 40 or 5); the truth is system a's success rate over the population
    of goals and workers. Too low (the percentile bootstrap covered 92.3-93.3% here) and too high
    (counting each worker twice covered 98.7-99.7%) both fail. With a pool of 5, the goal resamples
    alone (dialogs without worker ids) leave the workers' leniency out and undercover."""
    rng = np.random.default_rng({None: 30, 40: 31, 5: 20}[workers])
    truth = np.mean(1 / (1 + np.exp(-(0.3 + rng.normal(0, 1.5, 400_000) + rng.normal(0, 0.5, 400_000)))))
    covered = goals_only = 0
    for run in range(COVERAGE_RUNS):
        dialogs = _crowd_campaign(rng, 60, workers)
        seed = int(rng.integers(1 << 30))
        row = next(r for r in system_results(dialogs, bootstrap=400, seed=seed)["systems"] if r["system"] == "a")
        covered += row["success_ci_low"] <= truth <= row["success_ci_high"]
        assert 0 <= row["success_ci_low"] <= row["success"] <= row["success_ci_high"] <= 1
        if workers == 5 and run < 300:
            anonymous = [{**d, "worker": None} for d in dialogs]
            row = next(r for r in system_results(anonymous, bootstrap=400, seed=seed)["systems"] if r["system"] == "a")
            goals_only += row["success_ci_low"] <= truth <= row["success_ci_high"]
    print({"workers": workers, "coverage": covered / COVERAGE_RUNS, "goals only": goals_only / 300 if workers == 5 else None})
    assert 0.93 <= covered / COVERAGE_RUNS <= 0.97, covered / COVERAGE_RUNS
    if workers == 5:
        assert goals_only / 300 < 0.88, goals_only / 300


def test_fragility_counts_the_dialogs_that_hold_each_order():
    # Finals (the mean of success and grounded success per dialog): a 1, 1, 1, 0.5; b 1, 0.5, 0, 0.
    # The least removal is checked against brute force over every subset of the 8 dialogs.
    import itertools

    a = [_dialog("a", g, "success", {"name": "Golden Wok"}) for g in range(3)] + [_dialog("a", 3, "success", {"name": "Pizza Hut"})]
    b = [_dialog("b", 0, "success", {"name": "Golden Wok"}), _dialog("b", 1, "success", {"name": "Pizza Hut"}),
         _dialog("b", 2, "fail"), _dialog("b", 3, "fail")]
    result = system_results(a + b, bootstrap=200, fragility_mark=0.5)
    pair, = result["fragility"]["pairs"]
    finals = {"a": [1, 1, 1, 0.5], "b": [1, 0.5, 0, 0]}
    units = [("a", v) for v in finals["a"]] + [("b", v) for v in finals["b"]]

    def least():
        for k in range(len(units) + 1):
            for removed in itertools.combinations(range(len(units)), k):
                left = {s: [v for j, (t, v) in enumerate(units) if t == s and j not in removed] for s in "ab"}
                if left["a"] and left["b"] and np.mean(left["b"]) >= np.mean(left["a"]):
                    return k
        return None

    assert (pair["above"], pair["below"], pair["method"]) == ("a", "b", "exact")
    assert pair["count"] == least() and pair["share"] == pair["count"] / 8 and pair["marked"] == (pair["count"] / 8 < 0.5)
    assert result["fragility"]["top"]["count"] == pair["count"]
    assert "## Fragility" in to_markdown(result)


def test_one_worker_is_reported_as_one_and_said_not_resampled():
    """`workers` was 0 with one worker (the worker bootstrap's count) while the job's page said 1."""
    dialogs = [_dialog(system, g, "success" if g % 3 else "fail", {"name": "Golden Wok"}, worker=7) for system in ("a", "b") for g in range(12)]
    result = system_results(dialogs, bootstrap=200)
    assert [row["workers"] for row in result["systems"]] == [1, 1]
    assert [row["workers"] for row in csv.DictReader(io.StringIO(to_csv(result)))] == ["1", "1"]
    assert result["method"]["workers_resampled"] is False
    assert "workers were not resampled here: that needs every dialog to name its worker and at least 2 workers" in result["method"]["ci_method"]
    two = system_results([{**d, "worker": g % 2} for g, d in enumerate(dialogs)], bootstrap=200)
    assert two["method"]["workers_resampled"] is True and "not resampled" not in two["method"]["ci_method"]
    assert [row["workers"] for row in two["systems"]] == [2, 2]


def test_values_are_kept_whole_and_rounded_once_where_people_read_them():
    """The result rounded to 4 places at the source made the page round a rounding (3.831 on the
    page, 3.830 in the Markdown, 3.8305 in the CSV); now the CSV carries the whole value and the
    page and the Markdown round it once, alike."""
    from django.template.loader import render_to_string

    from quorum import numbers

    ratings = [4, 4, 3, 5, 4, 3, 4, 4, 3, 5, 3, 4, 4]
    dialogs = [_dialog("a", g, "success", {"name": "Golden Wok"}, appropriateness=v) for g, v in enumerate(ratings)]
    result = system_results(dialogs, bootstrap=300)
    row, = result["systems"]
    assert row["appropriateness"] == float(np.mean(ratings)) and row["appropriateness_ci_low"] != round(row["appropriateness_ci_low"], 4)
    cells = next(csv.DictReader(io.StringIO(to_csv(result))))
    assert float(cells["appropriateness_ci_low"]) == row["appropriateness_ci_low"]
    shown = numbers.decimals(row["appropriateness_ci_low"])
    assert f"{numbers.decimals(row['appropriateness'])} [{shown}, " in to_markdown(result)
    page = render_to_string("evaluation/interactive_results.html", {
        "job": type("Job", (), {"name": "chat", "pk": 1})(), "result": result, "rows": result["systems"], "dialogs": [],
        "screening": {"queue": [], "kept": 0, "dropped": 0, "pending": 0}, "fragility": [], "fragility_mark": "",
    })
    assert f"[{shown}, " in page and "<td data-label=\"Rank range\">1-1</td>" in page


def _shared_pool_campaign(rng, qualities, goals, workers, leniency=1.5):
    """Systems on the same goals (a goal easy or hard for all), each dialog judged by a worker of
    one pool shared by every system, whose leniency moves the success they report (logistic).
    A successful dialog offers the goal's entity, so its final score is its success."""
    pool = rng.normal(0, leniency, workers)
    ease = rng.normal(0, 0.5, goals)
    dialogs = []
    for system, quality in qualities.items():
        for g in range(goals):
            w = int(rng.integers(workers))
            ok = rng.random() < 1 / (1 + np.exp(-(quality + pool[w] + ease[g] + rng.normal(0, 0.5))))
            dialogs.append(_dialog(system, g, "success" if ok else "fail", {"name": "Golden Wok"} if ok else None, worker=f"w{w}"))
    return dialogs


@pytest.mark.slow
@pytest.mark.parametrize(("workers", "qualities", "seed"), [
    (5, {"a": 0.0, "b": 0.0}, 41), (5, {"a": 0.4, "b": -0.4}, 42), (40, {"a": 0.0, "b": 0.0}, 43),
], ids=["pool-of-5-equal", "pool-of-5-different", "pool-of-40-equal"])
def test_a_difference_covers_the_true_difference_at_its_nominal_level(workers, qualities, seed):
    """Two systems judged by one shared pool of workers (60 goals, 800 campaigns: binomial SE 0.77
    points, the band 93-97% about +-2.6 SE). A lenient worker pulls both systems' success alike and
    the pull cancels in their difference; counting each system's own worker share in the difference
    covered 99.1% (pool of 5) and called equal systems different 0.7% of the time at 5%
    (docs/measurements.md, 2026-11-28). Both too wide and too narrow fail; equal systems are called
    different 2-8% of the time."""
    rng = np.random.default_rng(seed)
    z = np.random.default_rng(0).normal(0, 1.5, 1_000_000) + np.random.default_rng(1).normal(0, np.sqrt(0.5), 1_000_000)
    truth = {s: float(np.mean(1 / (1 + np.exp(-(q + z))))) for s, q in qualities.items()}
    runs, covered, called = 800, 0, 0
    for _ in range(runs):
        pair, = system_results(_shared_pool_campaign(rng, qualities, 60, workers), bootstrap=400, seed=int(rng.integers(1 << 30)))["pairwise"]
        true = truth[pair["a"]] - truth[pair["b"]]
        covered += pair["ci_low"] <= true <= pair["ci_high"]
        called += pair["p"] < 0.05
    print({"workers": workers, "coverage": covered / runs, "p < 0.05": called / runs})
    assert 0.93 <= covered / runs <= 0.97, covered / runs
    if len(set(qualities.values())) == 1:
        assert 0.02 <= called / runs <= 0.08, called / runs


def test_a_pairwise_difference_stays_within_what_two_rates_allow_and_few_goals_give_no_p():
    """Organizer walk, defect 1: 3 goals per system gave 0.750 [-1.235, 2.735] with a p-value."""
    few = [_dialog("a", g, "success", {"name": "Golden Wok"}) for g in range(3) for _ in range(2)]
    few += [_dialog("b", g, "success" if g == 0 else "fail", {"name": "Golden Wok"}) for g in range(3)]
    pair, = system_results(few, bootstrap=500)["pairwise"]
    assert pair["too_few"] and pair["ci_clipped"] and pair["p"] is None and pair["p_holm"] is None
    assert (pair["ci_low"], pair["ci_high"]) == (-1.0, 1.0)
    # Enough goals: a p, and an interval inside [-1, 1] however few degrees of freedom widen it.
    rng = np.random.default_rng(4)
    many = [_dialog(s, g, "success" if rng.random() < q else "fail", {"name": "Golden Wok"}) for s, q in (("a", 0.95), ("b", 0.1)) for g in range(6)]
    pair, = system_results(many, bootstrap=500)["pairwise"]
    assert not pair["too_few"] and pair["p"] is not None and -1.0 <= pair["ci_low"] <= pair["ci_high"] <= 1.0
