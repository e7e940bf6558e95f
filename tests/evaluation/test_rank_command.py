"""`manage.py rank`: ratings collected anywhere, as a CSV, into the same leaderboard. Checked against
Table V of the DSTC9 overview, from the real published ratings turned into that CSV."""
import csv
import io
import json

import pytest
from django.core.management import CommandError, call_command

from tests.shared_data import DSTC9_HUMAN_EVAL, missing, shared_data

DATA = shared_data(DSTC9_HUMAN_EVAL)
TABLE_V = {"baseline": (3.7155, 3.9386, 3.8271), "team19": (4.3917, 4.3922, 4.3920), "team10": (4.3544, 4.3201, 4.3373)}
ENTRIES = {"baseline": "entry0", "team19": "entry2", "team10": "entry0"}


def run(*args) -> str:
    out = io.StringIO()
    call_command("rank", *args, stdout=out)
    return out.getvalue()


def write_csv(path, rows, header=("system", "instance", "rater", "question", "rating")):
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        writer.writerows(rows)
    return path


@pytest.mark.skipif(not (DATA / "results").is_dir(), reason=missing(DATA))
def test_the_published_dstc9_ratings_as_a_csv_give_table_v(tmp_path):
    labels = json.loads((DATA / "data_eval" / "test" / "labels.json").read_text())
    rows = []
    for team, entry in ENTRIES.items():
        outputs = json.loads((DATA / "results" / team / f"{entry}.json").read_text())
        ratings = json.loads((DATA / "results" / team / f"{entry}.human_eval.json").read_text())
        for i, (label, output, rated) in enumerate(zip(labels, outputs, ratings, strict=False)):
            target, predicted = int(bool(label.get("target"))), int(bool(output.get("target")))
            if not rated:
                rows.append((team, i, "", "", "", target, predicted))  # no rating: the instance's flags only
                continue
            for question in ("accuracy", "appropriateness"):
                for k, value in enumerate(rated[question]):
                    rows.append((team, i, f"pos{k + 1}", question, value, target, predicted))
    path = write_csv(tmp_path / "dstc9.csv", rows, ("system", "instance", "rater", "question", "rating", "target", "predicted"))
    board = {row["system"]: row for row in json.loads(run(str(path), "--format", "json", "--no-rater-ids", "--bootstrap", "1000"))["rows"]}
    for team, (accuracy, appropriateness, final) in TABLE_V.items():
        assert (round(board[team]["accuracy"], 4), round(board[team]["appropriateness"], 4), round(board[team]["final"], 4)) == (accuracy, appropriateness, final)
    assert board["team19"]["rank"] == 1


def test_without_detection_columns_the_score_is_the_mean_and_two_files_give_a_json_list(tmp_path):
    a = write_csv(tmp_path / "a.csv", [("x", "i1", "r1", "q", 5), ("x", "i1", "r2", "q", 3), ("y", "i1", "r1", "q", 2), ("y", "i1", "r2", "q", 2)])
    b = write_csv(tmp_path / "b.csv", [("x", "i1", "r1", "q", 1), ("y", "i1", "r1", "q", 4)])
    reports = json.loads(run(str(a), str(b), "--format", "json", "--bootstrap", "1000"))
    assert [r["campaign"] for r in reports] == ["a.csv", "b.csv"]
    first = {row["system"]: row for row in reports[0]["rows"]}
    assert first["x"]["q"] == 4.0 and first["y"]["q"] == 2.0
    markdown = run(str(a), "--format", "md", "--bootstrap", "1000")
    assert markdown.startswith("| Tie-group rank | Rank range |") and "| x" in markdown


@pytest.mark.parametrize(
    "rows, message",
    [
        ([("x", "i1", "r1", "q", 6)], r"line 2: rating '6' is not a whole number from 1 to 5"),
        ([("x", "i1", "r1", "q", 4), ("x", "i1", "r1", "q", 5)], "line 3: rater 'r1' rated 'q' of this system and instance twice"),
        ([("", "i1", "r1", "q", 4)], "line 2: system is empty"),
    ],
)
def test_bad_files_are_refused_with_the_line(tmp_path, rows, message):
    path = write_csv(tmp_path / "bad.csv", rows)
    with pytest.raises(CommandError, match=message):
        run(str(path))


def test_a_file_without_the_columns_names_them(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("sys,score\nx,4\n")
    with pytest.raises(CommandError, match="missing column"):
        run(str(path))
