"""Scales respected (issue 20, item 5): intervals stay on the rating scale, and a correlation over
fewer than 5 points shows "too few" instead of a p-value."""
import numpy as np
import pandas as pd
import pytest

from evaluation.campaigns import leaderboard
from evaluation.stats import judge_agreement, scoring
from evaluation.stats.report import SystemSpec, build_report


def _small_campaign():
    # Three instances, one rater each: a 1 among 5s makes the t-widened interval reach past 5 and 1.
    rows = [("a", "q", 0, "r0", 5), ("a", "q", 1, "r1", 5), ("a", "q", 2, "r2", 1),
            ("b", "q", 0, "r0", 1), ("b", "q", 1, "r1", 1), ("b", "q", 2, "r2", 5)]
    ratings = pd.DataFrame(rows, columns=["system", "question", "instance", "rater", "value"])
    truth = np.ones(3, dtype=bool)
    return build_report(ratings, truth, [SystemSpec("a", "entry"), SystemSpec("b", "entry")], questions=["q"], agreement_levels=())


def test_a_small_campaign_prints_no_interval_off_the_scale_and_warns():
    report = _small_campaign()
    for row in report["systems"]:
        assert 1 <= row["final_ci_low"] <= row["final"] <= row["final_ci_high"] <= 5
        assert 1 <= row["questions"]["q"]["ci_low"] and row["questions"]["q"]["ci_high"] <= 5
        assert row["ci_clipped"]
    markdown = leaderboard.to_markdown(report)
    assert "Too few ratings for a reliable interval: a, b" in markdown
    assert leaderboard.to_json_dict(report)["clipped_note"].startswith("Too few ratings")


def test_a_large_campaign_is_not_clipped():
    from tests.evaluation.test_coverage import simulate

    flags = np.ones(200, dtype=bool)
    report = build_report(simulate(1, [3.0, 3.2], n=200), flags, [SystemSpec("s0", "entry", flags), SystemSpec("s1", "entry", flags)], questions=["q"], agreement_levels=())
    assert not any(row["ci_clipped"] for row in report["systems"])
    assert leaderboard.clipped_note(report) == ""


def test_a_correlation_over_fewer_than_five_points_is_too_few():
    human = np.array([4.0, 3.5, 3.0])
    out = scoring.spearman_by_metric(human, pd.DataFrame({"bleu": [0.3, 0.2, 0.1]}))["bleu"]
    assert out["rho"] == 1.0 and out["p"] is None and out["too_few"]
    five = scoring.spearman_by_metric(np.arange(5.0), pd.DataFrame({"bleu": [0.1, 0.3, 0.2, 0.4, 0.5]}))["bleu"]
    assert five["p"] is not None and not five["too_few"]
    judged = judge_agreement.correlations([1, 2, 3], [1, 3, 2])
    assert judged["too_few"] and all(judged[name]["p"] is None for name in ("pearson", "spearman", "kendall"))


def test_the_exports_say_too_few():
    report = _small_campaign()
    report["spearman"] = {"bleu": {"rho": -1.0, "p": None, "n": 3, "too_few": True}}
    assert "| bleu | from the uploaded score file | -1.0000 | too few | 3 |" in leaderboard.to_markdown(report)
    assert leaderboard.spearman_rows(report)[0]["too_few"]


def _pair(report):
    (pair,) = report["pairwise"]
    return pair


def _five_instance_campaign():
    # Five instances: a 5, 5, 5, 5, 1 and b 1, 1, 1, 1, 5 (1-5 scale, no detection).
    values = {"a": [5, 5, 5, 5, 1], "b": [1, 1, 1, 1, 5]}
    rows = [(s, "q", i, f"r{i}", v) for s, vs in values.items() for i, v in enumerate(vs)]
    ratings = pd.DataFrame(rows, columns=["system", "question", "instance", "rater", "value"])
    return build_report(ratings, np.ones(5, dtype=bool), [SystemSpec("a"), SystemSpec("b")], questions=["q"], agreement_levels=())


def test_a_difference_interval_stays_within_what_the_two_scales_allow():
    # a - b = 4.2 - 1.8 = 2.4 exactly, and it can only lie in [1 - 5, 5 - 1]: the resamples reach a
    # difference of 4 (the four 5-against-1 instances drawn every time), which the t_4 widening
    # carries past 4.
    report = _five_instance_campaign()
    pair = _pair(report)
    assert pair["difference"] == pytest.approx(2.4)
    assert -4 <= pair["ci_low"] <= pair["difference"] <= pair["ci_high"] == 4
    assert pair["ci_clipped"] and not pair["too_few"] and pair["p"] is not None
    row = leaderboard.pairwise_rows(report)[0]
    assert row["ci_clipped"] and leaderboard.interval_cell(row).endswith("4.0000] clipped")
    assert leaderboard.interval_cell(row) in leaderboard.to_markdown(report)
    assert "ci_clipped" in leaderboard.pairwise_csv(report).splitlines()[0]
    assert leaderboard.to_json_dict(report)["pairwise"][0]["ci_clipped"]


def test_with_detection_a_score_may_reach_0_and_the_difference_range_says_so():
    # Eq. 1 with detection counts a missed knowledge turn as 0, so each score lies in [0, 5] and a
    # difference in [-5, 5]; b detected one of two knowledge turns on every instance.
    n = 6
    truth = np.ones(n, dtype=bool)
    rows = [("a", "q", i, f"r{i}", 5 if i else 1) for i in range(n)] + [("b", "q", i, f"r{i}", 1) for i in range(0, n, 2)]
    ratings = pd.DataFrame(rows, columns=["system", "question", "instance", "rater", "value"])
    systems = [SystemSpec("a", "entry", truth), SystemSpec("b", "entry", np.arange(n) % 2 == 0)]
    pair = _pair(build_report(ratings, truth, systems, questions=["q"], agreement_levels=()))
    assert -5 <= pair["ci_low"] and pair["ci_high"] <= 5


def test_a_pair_on_fewer_than_five_shared_instances_gets_the_whole_range_and_no_p():
    # Two instances: resamples of two units take three values (often all equal), so no p-value and
    # no interval narrower than the possible range [1 - 5, 5 - 1] is honest.
    rows = [("a", "q", 0, "r0", 5), ("a", "q", 1, "r1", 4), ("b", "q", 0, "r0", 2), ("b", "q", 1, "r1", 1)]
    ratings = pd.DataFrame(rows, columns=["system", "question", "instance", "rater", "value"])
    report = build_report(ratings, np.ones(2, dtype=bool), [SystemSpec("a"), SystemSpec("b")], questions=["q"], agreement_levels=())
    pair = _pair(report)
    assert pair["difference"] == pytest.approx(3.0)
    assert (pair["ci_low"], pair["ci_high"]) == (-4.0, 4.0) and pair["too_few"] and pair["p"] is None and pair["better"] is None
    assert [row["rank"] for row in report["systems"]] == [1, 1]  # nothing separates them
    assert "too few to compare" in leaderboard.to_markdown(report)


def _coverage(n, campaigns=120):
    """Share of simulated campaigns (a 0.4 above b on 1-5, a new rater per rating) whose unclipped
    difference interval holds the true difference of the rating process, computed here by brute force."""
    rng = np.random.default_rng(0)
    draws = 400_000
    level = rng.normal(0, 0.5, draws)
    true = (np.clip(np.rint(3.4 + level + rng.normal(0, 0.8, draws)), 1, 5) - np.clip(np.rint(3.0 + level + rng.normal(0, 0.8, draws)), 1, 5)).mean()
    covered = 0
    for seed in range(campaigns):
        rng = np.random.default_rng(seed)
        level = rng.normal(0, 0.5, n)
        values = {s: np.clip(np.rint(mu + level + rng.normal(0, 0.8, n)), 1, 5) for s, mu in (("a", 3.4), ("b", 3.0))}
        ratings = pd.DataFrame([(s, "q", i, f"{s}{i}", v[i]) for s, v in values.items() for i in range(n)], columns=["system", "question", "instance", "rater", "value"])
        cols = scoring.eq1_columns(scoring.instance_score_matrix(ratings, ["a", "b"], ["q"], n)[0], np.ones(n, bool), [None, None])
        point = scoring.system_scores(cols)
        _, unc = scoring.paired_uncertainty(ratings, cols, scoring.instance_score_matrix(ratings, ["a", "b"], ["q"], n)[1], point, ["a", "b"], ["q"], seed=seed)
        (row,) = scoring.pairwise_differences(point["final"], unc, ["a", "b"])
        covered += row["ci_low"] <= true <= row["ci_high"]
    return covered / campaigns


def test_the_bootstrap_difference_interval_misses_on_two_instances_and_holds_from_five():
    """Why MIN_PAIR_INSTANCES is 5: the t_df-widened bootstrap interval of a difference, however wide,
    misses the true difference far more often than 5% on two instances, and is near nominal from five
    (figures in docs/measurements.md)."""
    assert scoring.MIN_PAIR_INSTANCES == 5
    assert _coverage(2, 400) < 0.85
    # From five on, near nominal from both sides: not far below 95%, and not far above it either (an
    # interval that covers 99% when it says 95% is wider than the organizer pays for).
    assert 0.9 <= _coverage(5, 400) <= 0.975
    assert 0.92 <= _coverage(20, 400) <= 0.975
