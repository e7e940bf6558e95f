"""Spreadsheet-safe CSV cells (quorum.csv_safety) and the numeric reports that use them."""
import csv
import io

from evaluation.campaigns import leaderboard
from evaluation.stats import pairwise_report
from quorum.csv_safety import Writer, formatted_cell, safe_cell


def test_text_that_starts_like_a_formula_is_quoted_and_nothing_else_changes():
    for text in ("=1+1", "+1", "-1", "@A1", "\tx", "\rx", "-0.5"):
        assert safe_cell(text) == "'" + text
    for text in ("1+1", "a=b", " =1", "", "'=already"):
        assert safe_cell(text) == text
    for number in (-0.5, -3, 0, 2.25, None, True):
        assert safe_cell(number) is number  # numbers passed as numbers stay numbers


def test_the_writer_quotes_text_cells_and_keeps_negative_numbers_numeric():
    buffer = io.StringIO()
    Writer(buffer, lineterminator="\n").writerow(["=cmd", -0.5, -2, "ok"])
    assert next(csv.reader(io.StringIO(buffer.getvalue()))) == ["'=cmd", "-0.5", "-2", "ok"]
    assert formatted_cell(-0.5) == "-0.5" and formatted_cell(1 / 3) == repr(1 / 3) and formatted_cell("-team") == "'-team" and formatted_cell(None) == ""


def test_leaderboard_csv_quotes_a_formula_like_team_and_keeps_negative_scores():
    report = {
        "questions": ["q"],
        "systems": [
            {"rank": 1, "rank_low": 1, "rank_high": 2, "system": "=HYPERLINK(\"x\")", "kind": "entry",
             "questions": {"q": {"score": -0.5, "ci_low": -0.75, "ci_high": -0.25, "n": 3}},
             "final": -0.5, "final_ci_low": -0.75, "final_ci_high": -0.25, "n": 3},
        ],
        "method": {},
    }
    [row] = list(csv.DictReader(io.StringIO(leaderboard.to_csv(report))))
    assert row["system"] == "'=HYPERLINK(\"x\")"
    assert float(row["q"]) == -0.5 and float(row["final_ci_low"]) == -0.75 and row["rank_range"] == "1-2"
    assert leaderboard.rows(report)[0]["system"] == "=HYPERLINK(\"x\")"  # the JSON rows keep the raw name


def test_pairwise_ranking_csv_quotes_system_names_and_keeps_log_strengths():
    table = [{"rank": 1, "rank_low": 1, "rank_high": 1, "system": "@evil", "log_strength": -0.25, "ci_low": None}]
    [row] = list(csv.DictReader(io.StringIO(pairwise_report.to_csv(table))))
    assert row["system"] == "'@evil" and float(row["log_strength"]) == -0.25 and row["ci_low"] == ""


def test_interactive_results_csv_quotes_a_formula_like_system_name(monkeypatch):
    from evaluation.stats import interactive

    names = ["rank", "rank_low", "rank_high", "system", "dialogs", "goals", "workers"]
    names += [f"{n}{suffix}" for n in interactive.STATISTICS for suffix in ("", "_ci_low", "_ci_high")] + ["failed_calls"]
    row = dict.fromkeys(names, -0.25) | {"system": "+SUM(A1)", "rank_low": None}
    [written] = list(csv.DictReader(io.StringIO(interactive.to_csv({"systems": [row]}))))
    assert written["system"] == "'+SUM(A1)" and float(written["dialogs"]) == -0.25 and written["rank_low"] == ""
