"""Krippendorff's alpha against the worked examples of Krippendorff (2011), "Computing
Krippendorff's Alpha-Reliability" (Annenberg School for Communication, departmental paper 43)."""
import math

import krippendorff
import numpy as np
import pandas as pd
import pytest

from annotation.quality import agreement

NAN = math.nan
# Section C of the paper: 4 observers x 12 units, values 1-5, with missing values.
PAPER_4x12 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
    [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
]
# Section A: binary data, two observers, 10 units, no missing data (published alpha 0.095).
# Hand check (two observers, binary): n = 20 values, n_0 = 14, n_1 = 6, 4 disagreeing units so
# o_01 = 4; alpha = 1 - (n - 1) * o_01 / (n_0 * n_1) = 1 - 19 * 4 / 84 = 0.0952.
PAPER_BINARY = [[0, 1, 0, 0, 0, 0, 0, 0, 1, 0], [1, 1, 1, 0, 0, 1, 0, 0, 0, 0]]
# Section B: nominal data (categories a-e), two observers, 12 units (published alpha 0.692).
# Hand check: n = 24, counts a4 b6 c6 d6 e2 (sum of squares 128), 3 disagreeing units so the
# off-diagonal coincidences sum to 6; alpha = 1 - (n - 1) * 6 / (n^2 - 128) = 1 - 138/448 = 0.692.
PAPER_NOMINAL = [list("aabbdccced" "da"), list("babbbccced" "dd")]


def long_table(matrix):
    return pd.DataFrame(
        [(unit, f"obs{o}", v) for o, row in enumerate(matrix) for unit, v in enumerate(row) if not (isinstance(v, float) and math.isnan(v))],
        columns=["item", "rater", "value"],
    )


@pytest.mark.parametrize("level,expected", [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)])
def test_paper_four_observers_with_missing_values(level, expected):
    result = agreement.alpha(long_table(PAPER_4x12), level, bootstrap=0)
    assert not result.undefined
    assert round(result.alpha, 3) == expected
    assert result.units == 11  # unit 12 has a single value and cannot be paired
    assert result.pairable_values == 40


def test_ordinal_uses_the_explicit_likert_domain():
    # The paper's data use values 1..5; an explicit 1-5 domain must give the published 0.815 and
    # so must a wider domain with unused values (ordinal distances only count used values).
    table = long_table(PAPER_4x12)
    assert round(agreement.alpha(table, "ordinal", value_domain=[1, 2, 3, 4, 5], bootstrap=0).alpha, 3) == 0.815
    assert round(agreement.alpha(table, "ordinal", value_domain=[0, 1, 2, 3, 4, 5, 6], bootstrap=0).alpha, 3) == 0.815
    with pytest.raises(ValueError, match="outside the value domain"):
        agreement.alpha(table, "ordinal", value_domain=[1, 2, 3, 4], bootstrap=0)


def test_paper_two_observers_binary():
    assert round(agreement.alpha(long_table(PAPER_BINARY), "nominal", bootstrap=0).alpha, 3) == 0.095


def test_paper_two_observers_nominal_categories():
    codes = {c: i for i, c in enumerate("abcde")}
    numeric = [[codes[c] for c in row] for row in PAPER_NOMINAL]
    assert round(agreement.alpha(long_table(numeric), "nominal", bootstrap=0).alpha, 3) == 0.692


def test_level_is_required_and_checked():
    with pytest.raises(TypeError):
        agreement.alpha(long_table(PAPER_4x12))  # no default level
    with pytest.raises(ValueError, match="level must be one of"):
        agreement.alpha(long_table(PAPER_4x12), "likert")


def test_no_variation_is_reported_not_nan():
    table = pd.DataFrame({"item": [1, 1, 2, 2], "rater": ["a", "b", "a", "b"], "value": [4, 4, 4, 4]})
    result = agreement.alpha(table, "ordinal")
    assert result.undefined and result.alpha is None
    assert result.display() == "n/a (no variation)"


def test_no_pairable_values_is_reported():
    table = pd.DataFrame({"item": [1, 2, 3], "rater": ["a", "b", "a"], "value": [1, 3, 5]})
    result = agreement.alpha(table, "interval")
    assert result.undefined and result.reason.startswith("n/a")


def test_duplicate_rating_is_an_error_naming_it():
    table = pd.DataFrame({"item": [1, 1], "rater": ["a", "a"], "value": [1, 2]})
    with pytest.raises(ValueError, match="rater 'a' rated item '1' more than once"):
        agreement.alpha(table, "nominal")


@pytest.mark.parametrize("level", agreement.LEVELS)
def test_matrix_formula_matches_the_package(level):
    # The bootstrap and leave-one-out use the matrix formula; it must agree with krippendorff.alpha.
    rng = np.random.default_rng(3)
    matrix = rng.integers(1, 6, size=(5, 40)).astype(float)
    matrix[rng.random(matrix.shape) < 0.3] = np.nan
    counts, domain, _ = agreement.value_counts_from_long(long_table(matrix), level)
    ours = agreement._alpha_from_coincidences(agreement._unit_coincidences(counts), level, domain)
    theirs = krippendorff.alpha(reliability_data=matrix, value_domain=domain, level_of_measurement=level)
    assert ours == pytest.approx(theirs, abs=1e-12)


def test_bootstrap_ci_brackets_alpha_and_is_seeded():
    rng = np.random.default_rng(11)
    truth = rng.integers(1, 6, size=300)
    rows = [(i, r, int(np.clip(t + rng.integers(-1, 2), 1, 5))) for i, t in enumerate(truth) for r in range(3)]
    first = agreement.alpha(rows, "ordinal", bootstrap=1000, seed=7)
    second = agreement.alpha(rows, "ordinal", bootstrap=1000, seed=7)
    other_seed = agreement.alpha(rows, "ordinal", bootstrap=1000, seed=8)
    assert first.ci_low < first.alpha < first.ci_high
    assert (first.ci_low, first.ci_high) == (second.ci_low, second.ci_high)
    assert (first.ci_low, first.ci_high) != (other_seed.ci_low, other_seed.ci_high)
    assert first.ci_high - first.ci_low < 0.15
    with pytest.raises(ValueError, match="at least 1000"):
        agreement.alpha(rows, "ordinal", bootstrap=100)


def test_bootstrap_resamples_units_like_the_slow_way():
    # The multinomial-over-patterns shortcut must have the same distribution as resampling units.
    rng = np.random.default_rng(5)
    matrix = rng.integers(1, 4, size=(3, 60)).astype(float)
    counts, domain, _ = agreement.value_counts_from_long(long_table(matrix), "interval")
    fast = agreement.bootstrap_alphas(counts, domain, "interval", 2000, seed=1)
    slow_rng = np.random.default_rng(2)
    slow = [
        krippendorff.alpha(value_counts=counts[slow_rng.integers(0, len(counts), len(counts))], value_domain=domain, level_of_measurement="interval")
        for _ in range(2000)
    ]
    assert np.mean(fast) == pytest.approx(np.mean(slow), abs=0.01)
    assert np.std(fast) == pytest.approx(np.std(slow), rel=0.1)


def test_rater_diagnostics_flag_the_odd_rater():
    rng = np.random.default_rng(9)
    truth = rng.integers(1, 6, size=200)
    rows = []
    for i, t in enumerate(truth):
        rows += [(i, "careful1", int(t)), (i, "careful2", int(np.clip(t + rng.integers(-1, 2), 1, 5)))]
        rows.append((i, "random", int(rng.integers(1, 6))))
    table = pd.DataFrame(rows, columns=["item", "rater", "value"])
    diagnostics = {d.rater: d for d in agreement.rater_diagnostics(table, "interval")}
    overall = agreement.alpha(table, "interval", bootstrap=0).alpha
    assert diagnostics["random"].correlation_with_rest < 0.2 < diagnostics["careful1"].correlation_with_rest
    assert diagnostics["random"].alpha_without > overall > diagnostics["careful1"].alpha_without
    # alpha without a rater equals alpha of the table with that rater removed
    assert diagnostics["random"].alpha_without == pytest.approx(
        agreement.alpha(table[table.rater != "random"], "interval", bootstrap=0).alpha
    )
    assert diagnostics["careful1"].ratings == 200 and diagnostics["careful1"].shared_items == 200
