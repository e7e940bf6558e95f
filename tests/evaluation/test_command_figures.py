"""The management commands write a figure as the pages do (quorum.numbers: half up from the value the
JSON carries, no sign on zero), so what an organizer copies from a terminal is what the page and
the downloads show. They used Python's format, which rounds the binary value: an alpha of 0.5625
read 0.562 from `agreement` and 0.563 on a page, a DSTC6 precision@1 of 1/32 read 0.0312 from
`score_entries` and 0.0313 on the objective scores page, and an alpha of -2e-16 read "-0.000".
(select_finalists: tests/evaluation/test_finalists_agree.py.)"""
import io
import json
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command

from quorum import numbers

pytestmark = pytest.mark.django_db

# Two raters on four items; Krippendorff's alpha of these is 0.5625 (interval) exactly in binary.
HALF_WAY = [("i0", "r0", 3), ("i0", "r1", 2), ("i1", "r0", 1), ("i1", "r1", 1), ("i2", "r0", 1), ("i2", "r1", 2), ("i3", "r0", 1), ("i3", "r1", 1)]
# Alpha of these is 0 up to rounding (nominal): -2.2e-16 in binary.
ZERO = [("i0", "r0", 3), ("i0", "r1", 3), ("i1", "r0", 1), ("i1", "r1", 2), ("i2", "r0", 3), ("i2", "r1", 3), ("i3", "r0", 2), ("i3", "r1", 3), ("i4", "r0", 3), ("i4", "r1", 2)]


@pytest.mark.parametrize(("rows", "level"), [(HALF_WAY, "interval"), (ZERO, "nominal")])
def test_the_agreement_command_writes_alpha_as_the_pages_write_the_apis_value(rows, level, organizer_api, tmp_path):
    text = "item,rater,value\n" + "".join(f"{i},{r},{v}\n" for i, r, v in rows)
    path = tmp_path / "ratings.csv"
    path.write_text(text)
    api = organizer_api.post("/api/evaluation/agreement/", {"file": SimpleUploadedFile("r.csv", text.encode()), "level": level, "bootstrap": 0}, format="multipart")
    alpha = api.json()["alpha"]["alpha"]
    out = io.StringIO()
    call_command("agreement", str(path), "--level", level, "--bootstrap", "0", stdout=out)
    printed = re.match(rf"alpha \({level}\) = (\S+) ", out.getvalue()).group(1)
    assert printed == numbers.decimals(alpha)
    assert not printed.startswith("-0.000")


def test_score_entries_writes_dstc6_precision_as_the_objective_scores_page(client, organizer, test_set, tmp_path):
    # 32 dialogs of six candidates, the answer ranked first in one: precision@1 is 1/32 = 0.03125.
    dialogs = [{"dialog_id": f"d{d}", "utterances": ["hi"], "candidates": [{"candidate_id": f"c{i}", "utterance": f"u{i}"} for i in range(1, 7)],
                "answer": {"candidate_id": "c1" if d == 0 else "c6"}} for d in range(32)]
    results = [{"dialog_id": f"d{d}", "lst_candidate_id": [{"candidate_id": f"c{i}", "rank": i} for i in range(1, 7)]} for d in range(32)]
    (tmp_path / "test.json").write_text(json.dumps(dialogs))
    (tmp_path / "results.json").write_text(json.dumps(results))
    client.force_login(organizer)
    page = client.post(
        f"/evaluation/test-sets/{test_set.pk}/objective/dstc6/",
        {"test_set": SimpleUploadedFile("t.json", json.dumps(dialogs).encode()), "results": SimpleUploadedFile("r.json", json.dumps(results).encode())},
    ).content.decode()
    shown = dict(re.findall(r"(precision@\d) (\d\.\d+)", page))
    out = io.StringIO()
    call_command("score_entries", "--dstc6-test-set", str(tmp_path / "test.json"), "--dstc6-results", str(tmp_path / "results.json"), stdout=out)
    printed = dict(re.findall(r"(precision@\d)=(\d\.\d+)", out.getvalue()))
    assert printed == shown
    assert shown["precision@1"] == numbers.decimals(1 / 32, 4)


# --- every command that prints a figure writes it with quorum.numbers --------------------------

COMMANDS = __import__("pathlib").Path(__file__).resolve().parents[2] / "evaluation" / "management" / "commands"


def _own_formatting(path):
    """Where a command formats a number itself: an f-string's format spec for a float, a percentage
    or an exponent (":.3f", ":+.3f", ":.1%"), or round()/format() (dates' "%Y" specs are not figures)."""
    import ast

    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.FormattedValue) and node.format_spec is not None:
            spec = "".join(v.value for v in node.format_spec.values if isinstance(v, ast.Constant))
            if re.fullmatch(r"[+\- ]?[,_]?\d*(\.\d+)?[efg%EFG]", spec):
                found.append(f"{path.name}:{node.lineno} ':{spec}'")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("round", "format"):
            found.append(f"{path.name}:{node.lineno} {node.func.id}()")
    return found


def test_no_command_writes_a_figure_with_pythons_own_formatting():
    # judge_report, plan_power, simulate_allocation and compute_results did (":.3f", ":+.3f", ":.4f", ":.1%", ":.1f").
    offenders = [where for path in sorted(COMMANDS.glob("*.py")) for where in _own_formatting(path)]
    assert offenders == []


def test_the_guard_sees_a_format_spec(tmp_path):
    path = tmp_path / "cmd.py"
    path.write_text('x = 1.5\ny = f"{x:.3f} {x:+.3f} {x:.1%} {x}"\nz = round(x, 2)\nd = f"{x:%Y-%m-%d}"\n')
    assert sorted(w.split(" ", 1)[1] for w in _own_formatting(path)) == ["':+.3f'", "':.1%'", "':.3f'", "round()"]


HALF = 4.9985  # stored as 4.99849999...: Python's ".3f" writes 4.998, a person (and the page) 4.999


def _judge_report_of(values):
    interval = {"estimate": values, "low": values - 0.5, "high": 0.0015, "labelled": 40, "unlabelled": 12, "lam": 0.125}
    corr = {"n": 40, "pearson": {"r": 0.0625}, "spearman": {"r": HALF / 10}, "kendall": {"r": -2e-16}}
    return {
        "items_scored_by_judge": 80, "items_rated_by_humans": 40, "raters_are_positions": False, "intervals_on": "plain means",
        "agreement": {"items": corr, "systems": corr},
        "alt_test": {"epsilon": 0.1, "scoring": "neg_rmse", "winning_rate": 0.125, "raters_tested": 3, "raters_left_out": 0,
                     "advantage_probability": 0.0625, "passes": False},
        "systems": [{"system": "team1/entry0", "human_only": interval, "ppi": interval, "width_ratio": 0.875}],
        "pairs": [{"a": "team1/entry0", "b": "team2/entry0", "human_only": interval, "ppi": interval, "resolved": False, "width_ratio": 0.875}],
    }


def test_judge_report_writes_each_figure_as_the_campaign_page(campaign, monkeypatch):
    from evaluation.management.commands import judge_report
    from evaluation.models import JudgeRun

    JudgeRun.objects.create(campaign=campaign, name="llm")
    monkeypatch.setattr(judge_report, "compute_judge_report", lambda run, **kwargs: _judge_report_of(HALF))
    out = io.StringIO()
    call_command("judge_report", campaign.name, stdout=out)
    text = out.getvalue()
    # The page's places: estimates and intervals 3, winning rate 2, width ratio 2 (campaign_results.html).
    assert "human-only 4.999 [4.499, 0.002] (n=40)" in text
    assert "PPI++ 4.999 [4.499, 0.002]" in text and "lambda 0.13" in text
    assert "Spearman 0.500" in text and "Pearson 0.063" in text and "Kendall 0.000" in text
    assert "winning rate 0.13 over" in text and "advantage probability 0.063" in text and "width ratio 0.88" in text
    assert "4.998" not in text and "-0.000" not in text
