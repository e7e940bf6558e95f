"""Tie groups and rank ranges from Holm-adjusted comparisons (issue 20, item 3).

What an organizer checks: the rank range says what the pairwise table beside it says (1 + the
entries significantly better to the entries less those significantly worse), so it never starts
before the row's tie-group rank, ranks go down the table in contiguous groups, two truly equal systems are seldom split (at most 5% of
campaigns), and a system that is truly better is still told apart.
"""
import numpy as np
import pytest
from scipy import stats

from evaluation.campaigns import leaderboard
from evaluation.stats import scoring
from evaluation.stats.report import SystemSpec, build_report
from tests.evaluation.test_coverage import simulate, true_score


def _pair(a, b, difference, significant_holm):
    return {"a": a, "b": b, "difference": difference, "significant_holm": significant_holm}


def test_a_line_only_where_everything_above_beats_everything_below():
    labels = ["a", "b", "c", "d"]
    # a beats c and d; b beats d only: no clean line between b and c (b does not beat c), nor
    # between c and d (c does not beat d) -> one group, although a is significantly better than c.
    pairs = [_pair("a", "c", 0.3, True), _pair("a", "d", 0.4, True), _pair("b", "d", 0.3, True),
             _pair("a", "b", 0.1, False), _pair("b", "c", 0.1, False), _pair("c", "d", 0.1, False)]
    groups = scoring.holm_rank_groups(labels, pairs)
    assert groups.rank == [1, 1, 1, 1]
    # ranges: c is beaten by a, d by a and b, so neither can be first although the group's rank is 1;
    # nobody is significantly worse than c or d
    assert groups.rank_low == [1, 1, 2, 3]
    assert groups.rank_high == [2, 3, 4, 4]
    # b beats c too: now every entry above the b|c line beats every entry below it
    pairs[4] = _pair("b", "c", 0.1, True)
    groups = scoring.holm_rank_groups(labels, pairs)
    assert groups.rank == [1, 1, 3, 3] and groups.rank_low == [1, 1, 3, 3] and groups.rank_high == [2, 2, 4, 4]


def test_an_unadjusted_significance_does_not_split_groups():
    pairs = [{"a": "a", "b": "b", "difference": 0.2, "significant": True, "significant_holm": False}]
    assert scoring.holm_rank_groups(["a", "b"], pairs).rank == [1, 1]


def test_holm_adjusted_significance_is_on_every_pairwise_row():
    point = np.array([4.5, 4.0, 3.99])
    rng = np.random.default_rng(0)
    unc = scoring.Uncertainty(rng.normal(0, 0.05, (1000, 3)), np.zeros((1000, 3)), np.array([300] * 3), np.array([1] * 3))
    rows = scoring.pairwise_differences(point, unc, ["a", "b", "c"])
    assert all(row["significant_holm"] == (row["p_holm"] < 0.05) for row in rows)
    assert [row["significant_holm"] for row in rows] == [True, True, False]


def _campaign_ranks(seed, mus, n=200, pool=5):
    """One simulated campaign through the report: {system: (rank, low, high)}."""
    ratings = simulate(seed, mus, n=n, pool=pool)
    flags = np.ones(n, dtype=bool)
    systems = [SystemSpec(f"s{k}", "entry", flags) for k in range(len(mus))]
    report = build_report(ratings, flags, systems, questions=["q"], seed=seed, agreement_levels=())
    return {row["system"]: (row["rank"], row["rank_low"], row["rank_high"]) for row in report["systems"]}


def test_equal_systems_are_seldom_split_and_a_better_one_is_told_apart():
    # s0 and s1 are equal; s2 is a little better (the case where "1 + number significantly better"
    # split equal systems: s2 beats one of them by chance and not the other); s3 is clearly better.
    mus = [4.0, 4.0, 4.15, 4.5]
    campaigns = [_campaign_ranks(seed, mus) for seed in range(150)]
    split = np.mean([c["s0"][0] != c["s1"][0] for c in campaigns])
    told_apart = np.mean([c["s3"][0] < min(c["s0"][0], c["s1"][0]) for c in campaigns])
    assert split <= 0.05
    assert told_apart >= 0.9  # a rule that ties everything fails here
    for campaign in campaigns:
        for rank, low, high in campaign.values():
            assert rank <= low <= high


def test_rank_ranges_cover_the_true_ranks_of_all_rows_at_once():
    # Two pairs of near ties and a gap between the pairs. The family-wise guarantee is a lower
    # bound (>= 95% of campaigns with every row covered); the ranges must still say something:
    # the top pair's range leaves out the bottom pair's places in most campaigns.
    mus = [4.0, 4.02, 4.45, 4.47]
    true_rank = stats.rankdata(-np.array([true_score(m) for m in mus]), method="min")
    campaigns = [_campaign_ranks(500 + seed, mus) for seed in range(100)]
    all_covered = np.mean([all(c[f"s{k}"][1] <= true_rank[k] <= c[f"s{k}"][2] for k in range(4)) for c in campaigns])
    informative = np.mean([max(c["s2"][2], c["s3"][2]) <= 2 for c in campaigns])
    assert all_covered >= 0.95
    assert informative >= 0.8


@pytest.mark.parametrize("workers", [False, True])
def test_interactive_ranks_lie_in_their_ranges(workers):
    from evaluation.stats.interactive import system_results

    rng = np.random.default_rng(3)
    dialogs = []
    for system, p in (("a", 0.8), ("b", 0.5), ("c", 0.5), ("d", 0.45)):
        for goal in range(60):
            ok = bool(rng.random() < p)
            d = {"system": system, "goal_id": goal, "goal": {}, "database": {},
                 "answers": {"outcome": "success" if ok else "fail", "transcript": []}}
            if workers:
                d["worker"] = f"w{goal % 7}"
            dialogs.append(d)
    result = system_results(dialogs, bootstrap=1000, seed=1)
    ranks = [row["rank"] for row in result["systems"]]
    assert ranks == sorted(ranks)
    assert all(row["rank"] <= row["rank_low"] <= row["rank_high"] for row in result["systems"])
    assert "Holm" in result["method"]["rank"]


def test_every_export_shows_the_rank_and_its_range_and_says_how_groups_are_made():
    from evaluation.campaigns import leaderboard

    mus = [4.0, 4.0, 4.15, 4.5, 3.6]
    flags = np.ones(200, dtype=bool)
    report = build_report(simulate(7, mus, n=200), flags, [SystemSpec(f"s{k}", "entry", flags) for k in range(5)], questions=["q"], agreement_levels=())
    rows = leaderboard.rows(report)
    for row in rows:
        low, high = map(int, row["rank_range"].split("-"))
        assert row["rank"] <= low <= high
    csv_lines = leaderboard.to_csv(report).splitlines()[1:]
    assert [line.split(",")[0] for line in csv_lines] == [str(row["rank"]) for row in rows]
    markdown = leaderboard.to_markdown(report)
    assert all(f"| {row['rank']} | {row['rank_range']} | {row['system']} |" in markdown for row in rows)
    assert "Holm-adjusted over the whole table" in markdown


def test_better_is_the_holm_decision_the_tie_groups_read():
    """a is 0.1 above b and c (both 0.9); in 10 of 1000 replicates the a - b and a - c differences
    fall to -0.1, so each has the unadjusted p 2 x 10/1000 = 0.02, below 0.05, and Holm over the
    three pairs (b - c has p 1) makes it 3 x 0.02 = 0.06: not significant, so nothing is called
    better and all three share rank 1, on every format."""
    instance = np.zeros((1000, 3))
    instance[:10, 0] = -0.2
    unc = scoring.Uncertainty(instance, np.zeros((1000, 3)), np.array([500] * 3), np.array([1] * 3))
    rows = scoring.pairwise_differences(np.array([1.0, 0.9, 0.9]), unc, ["a", "b", "c"])
    ab = rows[0]
    assert (ab["a"], ab["b"]) == ("a", "b") and ab["p"] == pytest.approx(0.02) and ab["p_holm"] == pytest.approx(0.06)
    assert ab["significant"] and not ab["significant_holm"] and ab["better"] is None
    assert all(row["better"] is None for row in rows)
    assert scoring.holm_rank_groups(["a", "b", "c"], rows).rank == [1, 1, 1]
    shown = leaderboard.pairwise_rows({"pairwise": rows})[0]
    assert shown["p_unadjusted"] == pytest.approx(0.02) and shown["p_holm"] == pytest.approx(0.06)
    assert not shown["significant"] and shown["better"] is None
    csv_header = leaderboard.pairwise_csv({"pairwise": rows}).splitlines()[0]
    assert csv_header.startswith("a,b,difference,ci_low,ci_high,p_unadjusted,p_holm,significant,better")
