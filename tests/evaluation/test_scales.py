"""Scales respected (issue 20, item 5): intervals stay on the rating scale, and a correlation over
fewer than 5 points shows "too few" instead of a p-value."""
import numpy as np
import pandas as pd

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
    assert "| bleu | -1.0000 | too few | 3 |" in leaderboard.to_markdown(report)
    assert leaderboard.spearman_rows(report)[0]["too_few"]
