"""The evaluation management commands, on the small DSTC9 fixtures."""
import csv
import io
import json

import pytest
from django.core.management import CommandError, call_command

from evaluation.models import Campaign, Rating

from .conftest import DSTC9, FIXTURES

pytestmark = pytest.mark.django_db
TS = ["--challenge", "DSTC9 Track 1", "--test-set", "test"]


def run(*args):
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


@pytest.fixture
def loaded(db):
    run("import_testset", str(DSTC9 / "labels.json"), "--knowledge", str(DSTC9 / "knowledge.json"), "--challenge", "DSTC9 Track 1")
    run("import_entries", str(DSTC9 / "entries"), *TS, "--scores", str(DSTC9 / "score.csv"), "--ground-truth")


def test_select_finalists_by_mean_reciprocal_rank(loaded):
    # f1 ranks: t1e1 1, t2e0 2, t3e0 3, t1e0 4, t4e0 5; r@1: t2e0 1, t1e1 2, t3e0 3, t1e0 4, t4e0 5;
    # bleu-1: t3e0 1, t1e1 2, t2e0 3, t1e0 4, t4e0 5.
    # S: t1e1 (1 + 1/2 + 1/2)/3 = 0.6667, t2e0 (1/2 + 1 + 1/3)/3 = 0.6111, t3e0 (1/3 + 1/3 + 1)/3 = 0.5556
    out = run("select_finalists", *TS, "--metrics", "detection_f1,selection_r@1,generation_bleu-1", "--top", "3", "--campaign", "finals")
    lines = out.splitlines()
    assert lines[1:4] == ["1\tteam1\tentry1\t0.6667", "2\tteam2\tentry0\t0.6111", "3\tteam3\tentry0\t0.5556"]
    campaign = Campaign.objects.get(name="finals")
    assert sorted(e.label for e in campaign.entries.all()) == ["baseline/entry0", "ground-truth/labels", "team1/entry1", "team2/entry0", "team3/entry0"]


def test_select_finalists_unknown_metric(loaded):
    with pytest.raises(CommandError, match="unknown metric"):
        run("select_finalists", *TS, "--metrics", "rouge")


def test_import_human_eval_and_leaderboards(loaded):
    out = run("import_human_eval", str(DSTC9 / "human_eval"), "--campaign", "dstc9-human", *TS)
    assert "into 'dstc9-human'" in out
    assert Rating.objects.count() == int(out.split()[1])
    board = json.loads(run("leaderboard", "dstc9-human", "--format", "json"))
    systems = [row["system"] for row in board["rows"]]
    assert set(systems) == {"baseline/entry0", "ground-truth/labels", "team1/entry1", "team2/entry0", "team3/entry0"}
    for row in board["rows"]:
        assert row["final_ci_low"] <= row["final"] <= row["final_ci_high"]
    table = list(csv.DictReader(io.StringIO(run("leaderboard", "dstc9-human", "--format", "csv"))))
    assert [r["system"] for r in table] == systems
    assert {"rank", "rank_range", "accuracy", "accuracy_ci_low", "appropriateness_ci_high", "final", "instances_rated"} <= set(table[0])
    markdown = run("leaderboard", "dstc9-human", "--format", "md")
    assert markdown.splitlines()[0].startswith("| Tie-group rank | Rank range | System | Appropriateness | Accuracy | Final | Instances rated |")
    assert "(ground truth)" in markdown and "ref" in markdown


def test_compute_results_is_recorded_as_the_page_records_a_computation(loaded, monkeypatch):
    from evaluation.models import CampaignResult, CampaignResultsRun
    from evaluation.stats import report

    run("import_human_eval", str(DSTC9 / "human_eval"), "--campaign", "c", *TS)
    campaign = Campaign.objects.get(name="c")
    real = report.build_report
    monkeypatch.setattr(report, "build_report", lambda *a, **k: (_ for _ in ()).throw(ValueError("the bootstrap ran out of raters")))
    with pytest.raises(CommandError, match="the bootstrap ran out of raters"):
        run("compute_results", "c")
    record = CampaignResultsRun.objects.get(campaign=campaign)
    assert record.status == "failed" and "the bootstrap ran out of raters" in record.error and not CampaignResult.objects.exists()

    monkeypatch.setattr(report, "build_report", real)
    assert run("compute_results", "c").startswith("results for 'c' at inputs ")
    record.refresh_from_db()
    assert record.status == "succeeded" and record.error == "" and record.finished_at is not None
    finished = record.finished_at
    run("leaderboard", "c")  # stored already: found, not computed again
    record.refresh_from_db()
    assert record.finished_at == finished and CampaignResult.objects.filter(campaign=campaign).count() == 1


def test_compute_results_without_ratings_says_so_and_records_nothing(loaded):
    from evaluation.campaigns.services.campaigns import create_campaign
    from evaluation.models import CampaignResultsRun, TestSet

    create_campaign("empty", TestSet.objects.get(), [])
    with pytest.raises(CommandError, match="has no entries"):
        run("compute_results", "empty")
    assert not CampaignResultsRun.objects.exists()


def test_import_human_eval_error_is_a_command_error(loaded, dstc9_copy):
    (dstc9_copy / "human_eval" / "team2" / "entry0.human_eval.json").write_text("[]")
    with pytest.raises(CommandError, match=r"team2/entry0.human_eval.json: has 0 instances but the test set has 12"):
        run("import_human_eval", str(dstc9_copy / "human_eval"), "--campaign", "x", *TS)
    assert not Rating.objects.exists()


def test_leaderboard_unknown_campaign(db):
    with pytest.raises(CommandError, match="no campaign 'nope'"):
        run("leaderboard", "nope")


@pytest.mark.parametrize("level,expected", [("nominal", "0.743"), ("ordinal", "0.815"), ("interval", "0.849"), ("ratio", "0.797")])
def test_agreement_command_on_the_paper_data(level, expected):
    out = run("agreement", str(FIXTURES / "agreement_paper.csv"), "--level", level)
    assert out.startswith(f"alpha ({level}) = {expected} (no interval: too few units, 11 of the 30 needed)")
    assert "units=11 values=40 raters=4" in out


def test_agreement_command_no_variation_and_raters():
    assert "alpha (ordinal) = n/a (no variation)" in run("agreement", str(FIXTURES / "agreement_constant.csv"), "--level", "ordinal")
    out = run("agreement", str(FIXTURES / "agreement_paper.csv"), "--level", "interval", "--raters")
    assert len([line for line in out.splitlines() if "alpha_without=" in line]) == 4
    data = json.loads(run("agreement", str(FIXTURES / "agreement_paper.csv"), "--level", "interval", "--json", "--bootstrap", "0"))
    assert round(data["alpha"]["alpha"], 3) == 0.849


def test_agreement_command_errors(tmp_path):
    with pytest.raises(CommandError):
        run("agreement", str(FIXTURES / "agreement_paper.csv"), "--level", "likert")
    with pytest.raises(CommandError, match="cannot read the CSV"):
        run("agreement", str(tmp_path / "missing.csv"), "--level", "nominal")
    bad = tmp_path / "bad.csv"
    bad.write_text("item,rater,score\nu1,A,1\n")
    with pytest.raises(CommandError, match="unknown column\\(s\\) score; missing value"):
        run("agreement", str(bad), "--level", "nominal")


def test_export_campaign_command(loaded, tmp_path):
    run("import_human_eval", str(DSTC9 / "human_eval"), "--campaign", "c", *TS)
    out = run("export_campaign", "c", "--out", str(tmp_path / "export"))
    assert {line.split("\t")[0] for line in out.splitlines()} >= {"leaderboard.md", "scores.png", "instance_scores.csv"}
    assert (tmp_path / "export" / "leaderboard.md").is_file()


def test_agreement_takes_the_scale_from_the_data_and_names_domain_when_a_value_is_outside_it(tmp_path):
    """Krippendorff's (2011) 4x12 data moved to a 0-4 scale (every value minus one): ordinal and
    interval alpha do not depend on where the scale starts, so the published 0.815 and 0.849 hold
    without --domain; a --domain of 1-5 refuses the 0s and says which option to change."""
    rows = (FIXTURES / "agreement_paper.csv").read_text().splitlines()
    header, body = rows[0], rows[1:]
    value_at = header.split(",").index("value")
    shifted = []
    for line in body:
        cells = line.split(",")
        cells[value_at] = str(int(float(cells[value_at])) - 1)
        shifted.append(",".join(cells))
    zero_based = tmp_path / "zero_based.csv"
    zero_based.write_text("\n".join([header, *shifted]) + "\n")
    assert run("agreement", str(zero_based), "--level", "ordinal", "--bootstrap", "0").startswith("alpha (ordinal) = 0.815")
    assert run("agreement", str(zero_based), "--level", "interval", "--bootstrap", "0").startswith("alpha (interval) = 0.849")
    with pytest.raises(CommandError, match=r"outside the value domain.*--domain"):
        run("agreement", str(zero_based), "--level", "ordinal", "--domain", "1,2,3,4,5")
    with pytest.raises(CommandError, match="--domain 'one,two'"):
        run("agreement", str(zero_based), "--level", "ordinal", "--domain", "one,two")
