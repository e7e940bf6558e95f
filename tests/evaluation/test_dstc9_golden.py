"""Golden files of the DSTC9 Track 1 leaderboard, from the real finalists' ratings and outputs.

The data live in the project's shared data folder (`dstc9-track1-human-eval/` in `tests.shared_data`,
read at run time, never copied here). Table V of the DSTC9 overview is Eq. 1 on these files; the tie
groups and the pairwise table are Quorum's and are kept as a golden file, so that a change to a
statistic shows up as a diff. Regenerate with QUORUM_UPDATE_GOLDEN=1 after checking the change.
"""
import json
import os
from pathlib import Path

import pytest

from evaluation.campaigns import leaderboard
from evaluation.campaigns.services.campaigns import compute_campaign_results, create_campaign
from evaluation.campaigns.services.imports import import_human_eval, import_test_set
from tests.shared_data import DSTC9_HUMAN_EVAL, missing, shared_data

DATA = shared_data(DSTC9_HUMAN_EVAL)
GOLDEN = Path(__file__).resolve().parent.parent / "fixtures" / "evaluation" / "golden" / "dstc9_leaderboard.json"

# Table V of the DSTC9 overview (accuracy, appropriateness, average), as listed in the data's README.
TABLE_V = {
    "baseline/entry0": (3.7155, 3.9386, 3.8271),
    "team19/entry2": (4.3917, 4.3922, 4.3920),
    "team03/entry1": (4.3480, 4.3634, 4.3557),
    "team10/entry0": (4.3544, 4.3201, 4.3373),
}

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(not (DATA / "results").is_dir(), reason=missing(DATA)),
]


def _summary(report):
    rows = [
        {
            "system": r["system"], "rank": r["rank"], "rank_range": r["rank_range"],
            "accuracy": round(r["accuracy"], 4), "appropriateness": round(r["appropriateness"], 4), "final": round(r["final"], 4),
        }
        for r in leaderboard.rows(report)
    ]
    pairs = [{"a": p["a"], "b": p["b"], "difference": round(p["difference"], 4), "better": p["better"]} for p in leaderboard.pairwise_rows(report)]
    return {"rows": rows, "pairwise": pairs}


@pytest.fixture(scope="module")
def report(django_db_setup, django_db_blocker):
    with django_db_blocker.unblock():
        test_set = import_test_set("DSTC9 Track 1 (real)", "test", DATA / "data_eval" / "test" / "labels.json")
        campaign = create_campaign("dstc9-real", test_set, [], questions=["accuracy", "appropriateness"])
        import_human_eval(campaign, DATA / "results")
        body = compute_campaign_results(campaign.pk).report
        campaign.delete()  # module-scoped data outlive the per-test transactions: clean up by hand
        test_set.challenge.delete()
    return body


def test_table_v_to_four_decimals(report):
    rows = {r["system"]: r for r in leaderboard.rows(report)}
    for system, (accuracy, appropriateness, average) in TABLE_V.items():
        assert (round(rows[system]["accuracy"], 4), round(rows[system]["appropriateness"], 4), round(rows[system]["final"], 4)) == (accuracy, appropriateness, average)


def test_tie_groups_and_pairwise_table_match_the_golden_file(report):
    summary = _summary(report)
    if os.environ.get("QUORUM_UPDATE_GOLDEN"):
        GOLDEN.write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    assert summary == json.loads(GOLDEN.read_text(encoding="utf-8"))
    ranks = [r["rank"] for r in summary["rows"] if r["rank"] is not None]
    assert ranks == sorted(ranks)  # monotone down the table
    ranked = [r["system"] for r in summary["rows"] if r["rank"] is not None]
    for row in summary["rows"]:
        if row["rank"] is not None:  # the range is what the pairwise table beside it says
            low, high = map(int, row["rank_range"].split("-"))
            better = sum(p["better"] in ranked and p["better"] != row["system"] and row["system"] in (p["a"], p["b"]) for p in summary["pairwise"])
            worse = sum(p["better"] == row["system"] and ({p["a"], p["b"]} - {row["system"]}) <= set(ranked) for p in summary["pairwise"])
            assert (low, high) == (1 + better, len(ranked) - worse)
            assert row["rank"] <= low


def test_exports_agree_on_ranks(report):
    markdown = leaderboard.to_markdown(report)
    csv_rank = {line.split(",")[2]: line.split(",")[0] for line in leaderboard.to_csv(report).splitlines()[1:]}
    for row in leaderboard.rows(report):
        assert csv_rank[row["system"]] == ("" if row["rank"] is None else str(row["rank"]))
        assert f"| {leaderboard.rank_cell(row)} | {row['rank_range'] or ''} | {leaderboard.system_cell(row)} |" in markdown
