"""Bradley-Terry strengths for pairwise comparisons: closed forms, likelihood equations, invariances,
the penalty, ranks, export rows and the bootstrap (determinism, shrinkage, instances, coverage)."""
import numpy as np
import pytest
from scipy.special import expit

from evaluation.stats import bradley_terry as bt


def repeat(a, b, outcome, times, instance=None):
    return [bt.Comparison(a, b, outcome, instance)] * times


def half_wins(comparisons, systems):
    """Observed wins per system with a tie as half a win for each side, counted independently of the module."""
    score = {"a": (1.0, 0.0), "b": (0.0, 1.0), "tie": (0.5, 0.5)}
    wins = dict.fromkeys(systems, 0.0)
    for c in comparisons:
        wins[c.system_a] += score[c.outcome][0]
        wins[c.system_b] += score[c.outcome][1]
    return wins


def expected_wins(comparisons, log_strength):
    """sum over opponents j of n_ij * s_i / (s_i + s_j), counted comparison by comparison."""
    expected = dict.fromkeys(log_strength, 0.0)
    for c in comparisons:
        p = expit(log_strength[c.system_a] - log_strength[c.system_b])
        expected[c.system_a] += p
        expected[c.system_b] += 1 - p
    return expected


def log_strengths(result):
    return {row.system: row.log_strength for row in result.per_system}


THREE_SYSTEMS = (
    repeat("A", "B", "a", 4) + repeat("A", "B", "b", 2) + repeat("B", "C", "a", 3) + repeat("B", "C", "tie", 1)
    + repeat("C", "B", "a", 1) + repeat("A", "C", "a", 2) + repeat("C", "A", "a", 1) + repeat("A", "C", "tie", 2)
)


# ---------------------------------------------------------------------------------------------
# Point estimate


def test_two_systems_closed_form():
    """A beats B 3 times and loses once. The likelihood p^3 (1 - p) peaks at p = 3/4, and
    p = s_A / (s_A + s_B) = 3/4 gives s_A / s_B = 3, so t_A - t_B = log 3. With mean log-strength 0:
    t_A = log(3)/2, t_B = -log(3)/2, s_A = sqrt(3), s_B = 1/sqrt(3).
    Against a system of strength 1: sqrt(3) / (sqrt(3) + 1) = 0.634; against the only other system: 3/4.
    Log-likelihood at the MLE: 3 log(3/4) + log(1/4)."""
    result = bt.fit(repeat("A", "B", "a", 3) + repeat("A", "B", "b", 1), l2_penalty=0)
    a, b = result.by_system()["A"], result.by_system()["B"]
    assert a.log_strength - b.log_strength == pytest.approx(np.log(3), abs=1e-10)
    assert a.log_strength == pytest.approx(np.log(3) / 2, abs=1e-10)
    assert a.log_strength + b.log_strength == pytest.approx(0, abs=1e-12)
    assert a.strength == pytest.approx(np.sqrt(3)) and b.strength == pytest.approx(1 / np.sqrt(3))
    assert a.win_probability_vs_average == pytest.approx(np.sqrt(3) / (np.sqrt(3) + 1))
    assert a.expected_win_rate == pytest.approx(0.75) and b.expected_win_rate == pytest.approx(0.25)
    assert result.log_likelihood == pytest.approx(3 * np.log(0.75) + np.log(0.25))
    assert (a.wins, a.losses, a.ties, a.comparisons, a.rank) == (3, 1, 0, 4, 1)
    assert (b.wins, b.losses, b.ties, b.comparisons, b.rank) == (1, 3, 0, 4, 2)


def test_chain_of_three_closed_form():
    """Only A-B (A wins 3 of 4) and B-C (B wins 3 of 4) are compared. The graph is a tree, so each
    pair's likelihood has its own difference: t_A - t_B = log 3 and t_B - t_C = log 3. With mean 0:
    t = (log 3, 0, -log 3). The indirect A-over-C odds are then 9 (P = 0.9): transitivity, not data."""
    comparisons = repeat("A", "B", "a", 3) + repeat("B", "A", "a", 1) + repeat("B", "C", "a", 3) + repeat("C", "B", "a", 1)
    t = log_strengths(bt.fit(comparisons, l2_penalty=0))
    assert [t["A"], t["B"], t["C"]] == pytest.approx([np.log(3), 0, -np.log(3)], abs=1e-10)
    assert expit(t["A"] - t["C"]) == pytest.approx(0.9)


def test_three_systems_satisfy_the_likelihood_equations():
    """At the MLE, for every system: observed wins (ties as halves) = sum_j n_ij s_i / (s_i + s_j).
    With the penalty the score equation gains its derivative: observed - expected = l2_penalty * t_i."""
    mle = log_strengths(bt.fit(THREE_SYSTEMS, l2_penalty=0))
    observed, expected = half_wins(THREE_SYSTEMS, mle), expected_wins(THREE_SYSTEMS, mle)
    for system in "ABC":
        assert observed[system] == pytest.approx(expected[system], abs=1e-8)
    assert sum(mle.values()) == pytest.approx(0, abs=1e-12)
    # by hand: A 4 (over B) + 2 (over C) + 2 ties = 7; B 2 + 3 + 1 tie = 5.5; C 1 + 1 + 3 ties = 3.5; sum 16
    assert observed == {"A": 7.0, "B": 5.5, "C": 3.5}
    penalised = log_strengths(bt.fit(THREE_SYSTEMS, l2_penalty=0.5))
    expected = expected_wins(THREE_SYSTEMS, penalised)
    for system in "ABC":
        assert observed[system] - expected[system] == pytest.approx(0.5 * penalised[system], abs=1e-8)
    assert abs(penalised["A"]) < abs(mle["A"])  # the penalty shrinks toward the average


def test_ties_count_as_half_a_win_each():
    only_ties = bt.fit(repeat("A", "B", "tie", 3) + repeat("B", "C", "tie", 2) + repeat("A", "C", "tie", 1), l2_penalty=0)
    assert only_ties.log_strength == pytest.approx([0, 0, 0], abs=1e-12)
    assert [row.rank for row in only_ties.per_system] == [1, 1, 1]
    assert only_ties.by_system()["A"].ties == 4
    # one win and one tie is 1.5 wins of 2: p = 3/4, the same as 3 wins of 4
    win_and_tie = bt.fit([("A", "B", "a"), ("A", "B", "tie")], l2_penalty=0)
    assert win_and_tie.log_strength[0] - win_and_tie.log_strength[1] == pytest.approx(np.log(3), abs=1e-10)


def test_relabelling_systems_permutes_the_results():
    names = {"A": "zeta", "B": "alpha", "C": "mu"}
    renamed = [bt.Comparison(names[c.system_b], names[c.system_a], {"a": "b", "b": "a", "tie": "tie"}[c.outcome]) for c in THREE_SYSTEMS]
    original, relabelled = bt.fit(THREE_SYSTEMS).by_system(), bt.fit(renamed[::-1]).by_system()
    for old, new in names.items():
        assert relabelled[new].log_strength == pytest.approx(original[old].log_strength, abs=1e-10)
        assert (relabelled[new].wins, relabelled[new].losses, relabelled[new].ties, relabelled[new].rank) == (
            original[old].wins, original[old].losses, original[old].ties, original[old].rank
        )


def test_duplicating_every_comparison_keeps_the_mle():
    once, twice = bt.fit(THREE_SYSTEMS, l2_penalty=0), bt.fit(THREE_SYSTEMS * 2, l2_penalty=0)
    assert twice.log_strength == pytest.approx(once.log_strength, abs=1e-10)
    assert twice.log_likelihood == pytest.approx(2 * once.log_likelihood)
    assert twice.by_system()["A"].comparisons == 2 * once.by_system()["A"].comparisons


def test_a_perfect_record_gets_a_finite_larger_strength():
    comparisons = repeat("A", "B", "a", 5) + repeat("A", "C", "a", 5) + [("B", "C", "a"), ("C", "B", "a")]
    with pytest.raises(ValueError, match="infinite without a penalty: 'B', 'C' never beat or tied 'A'"):
        bt.fit(comparisons, l2_penalty=0)
    default = bt.fit(comparisons).by_system()
    assert np.isfinite(default["A"].log_strength) and default["A"].log_strength > max(default["B"].log_strength, default["C"].log_strength)
    assert default["A"].rank == 1 and default["B"].rank == default["C"].rank == 2  # identical records share a rank
    weaker_prior = bt.fit(comparisons, l2_penalty=0.01).by_system()
    assert np.isfinite(weaker_prior["A"].log_strength) and weaker_prior["A"].log_strength > default["A"].log_strength


def test_competition_ranks_ignore_floating_point_noise():
    assert list(bt.competition_ranks_by_strength([0.3, 0.1, 0.1 + 1e-15, -0.5])) == [1, 2, 2, 4]
    assert list(bt.competition_ranks_by_strength([0.3, 0.1, 0.1 + 1e-9, -0.5])) == [1, 3, 2, 4]


def test_disconnected_comparison_graph_is_refused():
    with pytest.raises(ValueError, match=r"not connected: .*\['A', 'B'\] \| \['C', 'D'\]"):
        bt.fit([("A", "B", "a"), ("B", "A", "a"), ("C", "D", "tie")])


@pytest.mark.parametrize(
    ("comparisons", "message"),
    [
        ([], "no comparisons"),
        ([("A", "B", "win")], "comparison 0: unknown outcome 'win'"),
        ([("A", "B", "a"), ("A", "A", "tie")], "comparison 1: system 'A' is compared with itself"),
        ([("A", None, "a")], "comparison 0: system_b is missing"),
        ([("A", "B", "a", "ctx1"), ("A", "B", "b")], "comparison 1 has no instance but others do"),
        (["A beat B"], "comparison 0: expected a Comparison"),
    ],
)
def test_bad_input_names_the_problem(comparisons, message):
    with pytest.raises(ValueError, match=message):
        bt.fit(comparisons)


def test_bad_parameters_name_the_problem():
    comparisons = [("A", "B", "a"), ("A", "B", "b")]
    with pytest.raises(ValueError, match="l2_penalty must be a finite number >= 0"):
        bt.fit(comparisons, l2_penalty=-1)
    for n_resamples in (0, -5, 2.5):
        with pytest.raises(ValueError, match="n_resamples must be a whole number >= 1"):
            bt.bootstrap(comparisons, n_resamples=n_resamples)
    with pytest.raises(ValueError, match="level must lie strictly between 0 and 1"):
        bt.bootstrap(comparisons, level=95)
    assert bt.bootstrap(comparisons, n_resamples=1).samples.shape == (1, 2)
    with pytest.raises(ValueError, match="unknown system"):
        bt.difference_interval(bt.bootstrap(comparisons, n_resamples=1), "A", "Q")


def test_export_rows():
    rows = bt.export_rows(bt.fit(THREE_SYSTEMS))
    assert list(rows[0]) == [
        "rank", "system", "strength", "log_strength", "ci_low", "ci_high", "rank_low", "rank_high", "wins", "losses", "ties", "comparisons"
    ]
    assert [row["rank"] for row in rows] == [1, 2, 3] and rows[0]["system"] == "A"
    assert rows[0]["ci_low"] is None and rows[0]["rank_high"] is None
    assert rows[0]["strength"] == pytest.approx(np.exp(rows[0]["log_strength"]))
    assert sum(row["wins"] for row in rows) == sum(row["losses"] for row in rows) == len(THREE_SYSTEMS) - 3  # 3 ties
    booted = bt.export_rows(bt.bootstrap(THREE_SYSTEMS, n_resamples=200, seed=1))
    assert all(row["ci_low"] <= row["log_strength"] <= row["ci_high"] and row["rank_low"] <= row["rank"] <= row["rank_high"] for row in booted)


#: A round robin, two comparisons per pair, the weakest system named first: scores (ties half) A 3,
#: B 2.5, C 0.5 of 4. With equal games per pair Bradley-Terry orders systems by score (Zermelo), so
#: the truth is A > B > C; six votes separate no pair, so with a bootstrap all three share rank 1.
WEAKEST_FIRST = (
    repeat("C", "B", "b", 1) + repeat("C", "B", "tie", 1) + repeat("C", "A", "b", 2) + repeat("B", "A", "b", 1) + repeat("B", "A", "a", 1)
)


def test_rows_of_one_tie_group_are_listed_by_strength_not_by_first_appearance():
    point = bt.fit(WEAKEST_FIRST)
    assert point.systems == ["C", "B", "A"]  # the input order the rows must not follow
    assert [row["system"] for row in bt.export_rows(point)] == ["A", "B", "C"]
    booted = bt.bootstrap(WEAKEST_FIRST, n_resamples=200, seed=1)
    rows = bt.export_rows(booted)
    assert [row["rank"] for row in rows] == [1, 1, 1]  # one tie group
    assert [row["system"] for row in rows] == ["A", "B", "C"]
    assert [row["log_strength"] for row in rows] == sorted((row["log_strength"] for row in rows), reverse=True)


def test_equal_strengths_keep_the_order_of_first_appearance():
    rows = bt.export_rows(bt.bootstrap(repeat("Q", "P", "tie", 4) + repeat("P", "R", "a", 2) + repeat("Q", "R", "a", 2), n_resamples=100, seed=1))
    assert [row["system"] for row in rows] == ["Q", "P", "R"]  # P and Q have equal records: Q appeared first


# ---------------------------------------------------------------------------------------------
# Bootstrap


def simulate(log_strength, per_pair, rng, raters_per_instance=1):
    """per_pair instances for every pair; on each, `raters_per_instance` comparisons."""
    names = list(log_strength)
    out = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            p = expit(log_strength[a] - log_strength[b])
            for k in range(per_pair):
                instance = f"{a}-{b}-{k}" if raters_per_instance > 1 else None
                out += [bt.Comparison(a, b, "a" if won else "b", instance) for won in rng.random(raters_per_instance) < p]
    return out


TRUE = {"X": 0.6, "Y": 0.0, "Z": -0.4}


def test_bootstrap_is_deterministic_under_a_seed():
    data = simulate(TRUE, 30, np.random.default_rng(7))
    first, second, other = bt.bootstrap(data, 300, seed=4), bt.bootstrap(data, 300, seed=4), bt.bootstrap(data, 300, seed=5)
    assert np.array_equal(first.samples, second.samples) and bt.export_rows(first) == bt.export_rows(second)
    assert not np.array_equal(first.samples, other.samples)
    assert first.samples.sum(axis=1) == pytest.approx(np.zeros(300), abs=1e-10)  # every resample is centred


def test_bootstrap_interval_contains_the_point_estimate():
    result = bt.bootstrap(simulate(TRUE, 40, np.random.default_rng(3)), 1000, seed=2)
    assert np.all(result.ci_low < result.fit.log_strength) and np.all(result.fit.log_strength < result.ci_high)
    inside = ((result.samples >= result.ci_low) & (result.samples <= result.ci_high)).mean(axis=0)
    assert inside == pytest.approx([0.95] * 3, abs=0.005)  # a percentile interval holds the central 95% of resamples
    ranks = [row.rank for row in result.fit.per_system]
    assert np.all(result.rank_low <= ranks) and np.all(ranks <= result.rank_high)
    assert result.resampling_unit == "comparison" and result.n_units == 120 and result.level == 0.95


def test_intervals_shrink_about_by_half_with_four_times_the_data():
    """Standard errors scale as 1/sqrt(n): 4x the data halves the width."""
    data = simulate(TRUE, 40, np.random.default_rng(11))
    single, quadruple = bt.bootstrap(data, 1000, seed=1), bt.bootstrap(data * 4, 1000, seed=1)
    ratio = (quadruple.ci_high - quadruple.ci_low) / (single.ci_high - single.ci_low)
    assert np.all((0.4 < ratio) & (ratio < 0.6))


def test_instances_are_resampled_whole():
    """Every instance holds A>B three times and B>A once. Drawing whole instances, every resample has
    exactly this 3:1 record, so t_A - t_B = log 3 in all of them: a zero-width interval. Drawing
    comparisons, the record varies and so does the estimate."""
    instance = [("A", "B", "a"), ("A", "B", "a"), ("A", "B", "a"), ("A", "B", "b")]
    by_instance = [(a, b, o, f"ctx{k}") for k in range(10) for a, b, o in instance]
    whole = bt.bootstrap(by_instance, 200, seed=3, l2_penalty=0)
    assert whole.resampling_unit == "instance" and whole.n_units == 10
    assert np.ptp(whole.samples[:, 0] - whole.samples[:, 1]) < 1e-9
    assert bt.difference_interval(whole, "A", "B") == pytest.approx((np.log(3), np.log(3)), abs=1e-9)
    loose = bt.bootstrap([c[:3] for c in by_instance], 200, seed=3)
    assert loose.resampling_unit == "comparison" and loose.ci_high[0] - loose.ci_low[0] > 0.3


def test_instance_resampling_widens_intervals_for_correlated_raters():
    """Five raters per instance who always agree carry the information of one: resampling instances
    gives intervals about sqrt(5) = 2.2 times wider than (wrongly) treating the 5 as independent."""
    rng = np.random.default_rng(5)
    single = simulate(TRUE, 30, rng)
    agreeing = [bt.Comparison(c.system_a, c.system_b, c.outcome, f"ctx{k}") for k, c in enumerate(single) for _ in range(5)]
    by_instance = bt.bootstrap(agreeing, 1000, seed=1)
    by_comparison = bt.bootstrap([bt.Comparison(c.system_a, c.system_b, c.outcome) for c in agreeing], 1000, seed=1)
    ratio = (by_instance.ci_high - by_instance.ci_low) / (by_comparison.ci_high - by_comparison.ci_low)
    assert np.all((1.8 < ratio) & (ratio < 2.7))


def test_resamples_that_disconnect_the_graph_stay_finite():
    """A and C meet B often but each other never; the C-B link is one comparison, which a resample of
    comparisons drops with probability (1 - 1/n)^n ~ 1/e. Those resamples are counted, not lost."""
    data = repeat("A", "B", "a", 6) + repeat("A", "B", "b", 4) + [("B", "C", "a")]
    result = bt.bootstrap(data, 500, seed=2)
    assert 100 < result.disconnected_resamples < 250
    assert np.isfinite(result.samples).all()


def test_bootstrap_without_penalty_refuses_resamples_without_an_mle():
    with pytest.raises(ValueError, match="bootstrap with l2_penalty > 0"):
        bt.bootstrap(repeat("A", "B", "a", 3) + repeat("A", "B", "b", 1), 200, l2_penalty=0)


def test_95_percent_intervals_cover_the_true_difference():
    """100 simulated studies (40 comparisons per pair, true t = 0.6, 0, -0.4): the percentile
    interval of t_X - t_Y should hold 0.6 in about 95 of them (binomial sd ~2.2), and X's own
    interval its centred true log-strength 0.6 - mean(t) = 0.533."""
    covered_difference = covered_x = 0
    for run in range(100):
        result = bt.bootstrap(simulate(TRUE, 40, np.random.default_rng(100 + run)), 500, seed=run)
        low, high = bt.difference_interval(result, "X", "Y")
        covered_difference += low <= TRUE["X"] - TRUE["Y"] <= high
        covered_x += result.ci_low[0] <= TRUE["X"] - np.mean(list(TRUE.values())) <= result.ci_high[0]
    assert 88 <= covered_difference <= 99
    assert 88 <= covered_x <= 99
