"""The judge report ranks systems as the leaderboard does (issue 20): by Eq. 1 where a system
predicts knowledge-seeking turns, else by the mean, so its adjacent pairs are the leaderboard's."""
import numpy as np
import pandas as pd

from evaluation.stats import judges, report


def _case():
    """Two entries on 40 instances, half knowledge-seeking. `detector` is rated 4 everywhere but
    predicts knowledge-seeking turns on only a quarter of the seeking ones (Eq. 1 recall 0.25);
    `plain` has no detection predictions and is rated 3: higher mean for `detector`, higher
    ranked statistic for `plain`."""
    n = 40
    truth = np.arange(n) < 20
    predicted = {"detector": np.arange(n) < 5, "plain": None}
    rows = []
    for label, value in (("detector", 4), ("plain", 3)):
        for i in range(n):
            for rater in ("r1", "r2"):
                rows.append({"system": label, "instance": i, "question": "q", "rater": rater, "value": value + i % 2})
    ratings = pd.DataFrame(rows)
    judge = ratings.groupby(["system", "instance", "question"], as_index=False)["value"].mean().rename(columns={"value": "score"})
    return ratings, judge, truth, predicted


def test_the_judge_report_ranks_by_the_leaderboards_statistic():
    ratings, judge, truth, predicted = _case()
    statistic = judges.ranked_statistic(ratings, ["q"], truth, predicted)
    # The same numbers the leaderboard shows.
    board = report.build_report(
        ratings, truth, [report.SystemSpec("detector", predicted=predicted["detector"]), report.SystemSpec("plain")], questions=["q"],
    )
    for row in board["systems"]:
        assert statistic[row["system"]] == row["final"]
    assert statistic["plain"] > statistic["detector"]
    assert ratings.groupby("system")["value"].mean()["detector"] > ratings.groupby("system")["value"].mean()["plain"]

    body = judges.build(ratings, judge, ["detector", "plain"], ranked_by=statistic)
    assert [row["system"] for row in body["systems"]] == ["plain", "detector"]
    assert (body["pairs"][0]["a"], body["pairs"][0]["b"]) == ("plain", "detector")
    assert body["systems"][0]["leaderboard_score"] == statistic["plain"] and "Eq. 1" in body["ranked_by"]

    # Without a test set to apply Eq. 1 to, the order is the mean's, and the report says so.
    plain = judges.build(ratings, judge, ["detector", "plain"])
    assert (plain["pairs"][0]["a"], plain["pairs"][0]["b"]) == ("detector", "plain") and "PPI" in plain["ranked_by"]
