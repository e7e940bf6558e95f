"""Style and position controls: the style-controlled Bradley-Terry against statsmodels' logistic
regression on the same design, a simulation in which length alone drives the choices, position
bias and the length-score association against known truth."""
import numpy as np
import pytest
import statsmodels.api as sm

from evaluation.stats import bradley_terry, style


def _simulate(seed, strengths, length_effect, n=3000, left_effect=0.0, ties=0.0):
    """Comparisons of random pairs; each system writes responses of its own typical length; the
    choice follows theta_a - theta_b + length_effect * z_length (+ a push to the left output)."""
    rng = np.random.default_rng(seed)
    names = list(strengths)
    typical = {name: 20 + 15 * k for k, name in enumerate(names)}
    comparisons, records = [], []
    for _ in range(n):
        a, b = rng.choice(names, size=2, replace=False)
        len_a, len_b = (int(rng.poisson(typical[s])) + 1 for s in (a, b))
        z = (len_a - len_b) / (len_a + len_b)
        left = "a" if rng.random() < 0.5 else "b"
        logit = strengths[a] - strengths[b] + length_effect * z + (left_effect if left == "a" else -left_effect)
        u = rng.random()
        outcome = "tie" if u < ties else ("a" if rng.random() < 1 / (1 + np.exp(-logit)) else "b")
        comparisons.append(style.StyledComparison(a, b, outcome, {"length": len_a}, {"length": len_b}))
        records.append((outcome, left))
    return comparisons, records


def test_the_fit_is_statsmodels_logistic_regression_on_the_same_design():
    comparisons, _ = _simulate(1, {"A": 0.4, "B": 0.0, "C": -0.3, "D": 0.1}, length_effect=1.5, n=1500)
    systems, X, Z, used, _scales, y = style.design(comparisons)
    reference = sm.Logit(y, np.hstack([X, Z])).fit(disp=0)
    result = style.fit(comparisons)
    # Quorum reports centred thetas; statsmodels has the first system at 0.
    theta_ref = np.concatenate([[0.0], reference.params[: len(systems) - 1]])
    centred = theta_ref - theta_ref.mean()
    ours = {row["system"]: row["log_strength"] for row in result["systems"]}
    assert [ours[s] for s in systems] == pytest.approx(centred, abs=1e-6)
    assert used == ["length"]
    gamma = result["coefficients"][0]
    assert gamma["coefficient"] == pytest.approx(reference.params[-1], abs=1e-6)
    assert gamma["se"] == pytest.approx(reference.bse[-1], rel=1e-5)
    low, high = reference.conf_int()[-1]
    assert (gamma["ci_low"], gamma["ci_high"]) == pytest.approx((low, high), abs=1e-5)


def test_when_length_alone_drives_choices_the_controlled_ranking_sees_equal_systems():
    # Four equally good systems whose responses differ in length; longer ones are chosen.
    strengths = {"short": 0.0, "medium": 0.0, "long": 0.0, "longest": 0.0}
    comparisons, _ = _simulate(7, strengths, length_effect=2.5, n=4000)
    raw = bradley_terry.fit([(c.system_a, c.system_b, c.outcome) for c in comparisons])
    raw_order = [row.system for row in sorted(raw.per_system, key=lambda r: -r.log_strength)]
    assert raw_order == ["longest", "long", "medium", "short"]  # the raw ranking rewards length
    result = style.fit(comparisons)
    # Every controlled strength's interval holds the truth (0, all equal); the raw spread does not.
    assert all(row["ci_low"] <= 0 <= row["ci_high"] for row in result["systems"])
    assert max(r.log_strength for r in raw.per_system) - min(r.log_strength for r in raw.per_system) > 1.0
    # gamma is per standard deviation of z: the true effect on that scale lies in its interval.
    gamma = result["coefficients"][0]
    true = 2.5 * gamma["scale"]
    assert gamma["ci_low"] <= true <= gamma["ci_high"] and gamma["p"] < 1e-6


def test_length_interval_coverage_over_seeded_simulations():
    hits, runs = 0, 200
    for seed in range(runs):
        comparisons, _ = _simulate(100 + seed, {"A": 0.3, "B": 0.0, "C": -0.2}, length_effect=1.0, n=600)
        gamma = style.fit(comparisons)["coefficients"][0]
        hits += gamma["ci_low"] <= 1.0 * gamma["scale"] <= gamma["ci_high"]
    assert 0.91 <= hits / runs <= 0.99  # nominal 95% over 200 runs (binomial sd about 1.5 points)


def test_formatting_counts_are_used_only_when_responses_have_them():
    assert style.features("## Plan\n- one\n- two\n1. three\nThis is **bold** and __also__.") == {
        "length": 13, "headers": 1, "list_items": 3, "bold": 2,
    }
    plain, _ = _simulate(3, {"A": 0.2, "B": 0.0}, length_effect=0.0, n=200)
    assert style.design(plain)[3] == ["length"]


def test_a_system_that_wins_every_comparison_is_refused_with_a_reason():
    comparisons = [style.StyledComparison("A", "B", "a", {"length": 3 + k % 5}, {"length": 4}) for k in range(20)]
    with pytest.raises(ValueError, match="won all|lost all|no finite"):
        style.fit(comparisons)


def test_position_bias_is_found_when_it_is_there_and_not_when_it_is_not():
    _, pushed = _simulate(11, {"A": 0.0, "B": 0.0, "C": 0.0}, length_effect=0.0, n=2000, left_effect=0.4, ties=0.1)
    bias = style.position_bias(pushed)
    true_share = 1 / (1 + np.exp(-0.4))  # equal systems: the left output wins with expit(0.4)
    assert bias["ci_low"] <= true_share <= bias["ci_high"] and bias["p"] < 1e-6
    assert bias["ties"] > 0 and bias["decided"] + bias["ties"] == 2000
    _, fair = _simulate(12, {"A": 0.0, "B": 0.0, "C": 0.0}, length_effect=0.0, n=2000)
    unbiased = style.position_bias(fair)
    assert unbiased["ci_low"] <= 0.5 <= unbiased["ci_high"] and unbiased["p"] > 0.01


def test_position_bias_matches_the_exact_binomial_by_hand():
    records = [("a", "a")] * 14 + [("b", "a")] * 6 + [("tie", "b")] * 3
    bias = style.position_bias(records)
    assert (bias["decided"], bias["left_chosen"], bias["ties"]) == (20, 14, 3)
    # two-sided exact binomial p of 14 of 20 at 1/2: 2 * P(X >= 14) = 0.11532...
    assert bias["p"] == pytest.approx(0.115318, abs=1e-6)
    assert style.position_bias([("tie", "a")])["share"] is None


def test_length_association_per_system():
    rng = np.random.default_rng(5)
    rows = []
    for _ in range(300):
        length = int(rng.integers(5, 60))
        rows.append(("verbose-rewarded", length, 1 + 4 * length / 60 + rng.normal(0, 0.3)))
        rows.append(("length-free", length, 3 + rng.normal(0, 0.5)))
    by = {row["system"]: row for row in style.length_association(rows)}
    assert by["verbose-rewarded"]["rho"] > 0.8 and by["verbose-rewarded"]["p"] < 1e-6
    assert abs(by["length-free"]["rho"]) < 0.15
    assert style.length_association([("x", 3, 4.0), ("x", 3, 2.0)])[0]["rho"] is None


def test_length_rows_average_the_questions_rated_and_skip_missing_texts():
    scores = np.full((2, 2, 3), np.nan)
    scores[0, 0] = [4.0, 2.0, np.nan]
    scores[0, 1] = [5.0, np.nan, np.nan]
    scores[1, 0] = [1.0, 1.0, 1.0]
    rows = style.length_rows(["x", "y"], [["one two", "three", "four five six"], None], scores)
    assert rows == [("x", 2, 4.5), ("x", 1, 2.0)]


def test_length_association_has_no_p_below_the_correlations_minimum():
    """Three responses ordered alike by length and rating: rho is 1, but of the 3! = 6 orders two are
    as extreme (rho +-1), so the exact two-sided p is 1/3, not scipy's asymptotic 0. Below
    MIN_CORRELATION_POINTS the row says "too few", as the objective metrics' Spearman table does."""
    (row,) = style.length_association([("x", 3, 2.0), ("x", 5, 3.0), ("x", 9, 4.5)])
    assert row["rho"] == pytest.approx(1.0) and row["p"] is None and row["too_few"]
    (five,) = style.length_association([("x", k, float(k)) for k in range(1, 6)])
    assert not five["too_few"] and five["p"] is not None
    report = {"questions": [], "systems": [], "method": {"ci": 0.95, "ci_method": "", "bootstrap": 1000, "seed": 1, "rank": "", "rank_range": ""},
              "length_association": [row]}
    from evaluation.campaigns import leaderboard

    assert "| x | 1.000 | too few | 3 |" in leaderboard.to_markdown(report)



def _ranges(seed, strengths):
    comparisons, _ = _simulate(seed, strengths, length_effect=1.0, n=600)
    return {row["system"]: (row["rank_low"], row["rank_high"]) for row in style.fit(comparisons)["systems"]}


def test_style_controlled_rank_ranges_hold_the_family_wise_level_where_systems_tie():
    """The ranges claim a place only where Holm-adjusted Wald tests separate two systems: with three
    equally strong systems whose lengths differ (length alone moves the choices), every range must
    span 1-3 in about 95% of runs (the family-wise level): not less (places the data do not give),
    and not far more (a test too timid to separate anything). Binomial SE at 400 runs: 0.011."""
    tied = {"A": 0.0, "B": 0.0, "C": 0.0}
    spans_all = np.mean([all(r == (1, 3) for r in _ranges(500 + seed, tied).values()) for seed in range(400)])
    assert 0.93 <= spans_all <= 0.985, spans_all


def test_style_controlled_rank_ranges_cover_known_ranks_and_separate_clear_gaps():
    """Known strengths, two close and one far below: each run's ranges hold every system's true rank
    at least at the family-wise level, and the clear gap is found in most runs (C alone at 3)."""
    strengths = {"A": 0.25, "B": 0.15, "C": -1.2}
    truth = {"A": 1, "B": 2, "C": 3}
    runs = [_ranges(900 + seed, strengths) for seed in range(200)]
    covered = np.mean([all(low <= truth[s] <= high for s, (low, high) in r.items()) for r in runs])
    assert covered >= 0.94, covered
    assert np.mean([r["C"] == (3, 3) for r in runs]) >= 0.9
