"""Automatic judges in a campaign: the CSV checks, the import service and command, the report
(`judge_report`) and the results page's upload and table."""
import io
import json

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from evaluation.models import JudgeRun, JudgeScore, Rating


def judge_csv(campaign, noise=0.3, seed=0, rows=None, header="system,instance,question,score"):
    """A judge that sees each item's mean human rating plus noise, on every instance an entry was
    rated on and on as many again it was not (the judge-only instances PPI uses)."""
    rng = np.random.default_rng(seed)
    lines = [header]
    if rows is None:
        rows = []
        rated = {}
        for entry_label, instance, question, value in (
            (f"{r.entry.team.team_id}/{r.entry.entry_id}", r.instance, r.question, r.value)
            for r in Rating.objects.filter(campaign=campaign).select_related("entry__team")
        ):
            rated.setdefault((entry_label, instance, question), []).append(value)
        for (label, instance, question), values in sorted(rated.items()):
            rows.append((label, instance, question, np.mean(values) + rng.normal(0, noise)))
        size = campaign.test_set.size
        # Knowledge-seeking instances first: the only judge-only instances Eq. 1's intervals use.
        seeking = [bool(label.get("target")) for label in campaign.test_set.labels]
        for label in sorted({key[0] for key in rated}):
            used = {key[1] for key in rated if key[0] == label}
            for instance in sorted((i for i in range(size) if i not in used), key=lambda i: not seeking[i])[: len(used)]:
                for question in campaign.questions:
                    rows.append((label, instance, question, float(rng.uniform(1, 5))))
    lines += [f"{s},{i},{q},{v}" for s, i, q, v in rows]
    return "\n".join(lines) + "\n"


def run(*args):
    out = io.StringIO()
    call_command(*map(str, args), stdout=out)
    return out.getvalue()


@pytest.fixture
def judge_file(campaign, tmp_path):
    path = tmp_path / "judge.csv"
    path.write_text(judge_csv(campaign))
    return path


def test_import_and_report(campaign, judge_file):
    text = run("import_judge_scores", campaign.name, judge_file, "--judge", "llm")
    assert "imported" in text and "judge 'llm'" in text
    judge = JudgeRun.objects.get(campaign=campaign, name="llm")
    assert judge.report and judge.inputs_version == campaign.inputs_version
    assert JudgeScore.objects.filter(run=judge).count() == len(judge_file.read_text().splitlines()) - 1
    body = json.loads(run("judge_report", campaign.name, "--json"))
    assert body["agreement"]["items"]["pearson"]["r"] > 0.8  # the judge is the human mean plus small noise
    assert body["raters_are_positions"] is True
    assert {"winning_rate", "passes", "raters"} <= set(body["alt_test"]) or "skipped" in body["alt_test"]
    sets = body["rank_sets"]
    ranked = {row["system"] for row in body["systems"]}
    for kind in ("ppi", "human_only"):
        assert {row["system"] for row in sets[kind]} == ranked
        assert all(1 <= row["rank_low"] <= row["rank_high"] <= len(ranked) for row in sets[kind])
    # The DSTC9 sample has detection, so intervals and rank sets are on Eq. 1's columns; this
    # judge's extra seeking instances differ by entry, so none is judge-only for every system.
    assert "Eq. 1" in body["intervals_on"]
    assert sets["labelled"] >= 2 and sets["unlabelled"] >= 0 and sets["coverage"] == 0.95
    # Every predicted seeking instance of this sample is rated, so under Eq. 1 the judge adds
    # nothing here (its gain is tested in test_judge_eq1.py).
    for row in body["systems"]:
        assert row["human_only"]["labelled"] >= 2
        assert row["human_only"]["low"] <= row["human_only"]["estimate"] <= row["human_only"]["high"]
    text = run("judge_report", campaign.name, "--judge", "llm")
    assert "items (n=" in text and "alternative-annotator test" in text and "PPI++" in text and "Eq. 1" in text
    # Importing again under the same name replaces the scores, not adds to them.
    run("import_judge_scores", campaign.name, judge_file, "--judge", "llm")
    assert JudgeRun.objects.filter(campaign=campaign).count() == 1


@pytest.mark.parametrize(
    "content, message",
    [
        ("system,instance,question,score,model\n", r"unknown column\(s\) model"),
        ("system,instance,score\n", r"missing column\(s\) question"),
        ("system,instance,question,score\n", "no scores"),
        (None, r"judge.csv line 3: score 'high' is not a number"),
        ("system,instance,question,score\nteam99/entry0,0,accuracy,4\n", r"line 2: system\(s\) 'team99/entry0' are not in the campaign"),
        ("system,instance,question,score\n{s},100000,accuracy,4\n", r"line 2: instance '100000' is not an instance of the test set"),
        ("system,instance,question,score\n{s},0,fluency,4\n", r"line 2: question 'fluency' is not a question of the campaign"),
        ("system,instance,question,score\n{s},0,accuracy,4\n{s},0,accuracy,5\n", "line 3: .* is scored twice"),
    ],
)
def test_bad_files_are_refused_naming_the_line_and_write_nothing(campaign, tmp_path, content, message):
    label = campaign.entries.exclude(is_ground_truth=True).first().label
    if content is None:
        content = f"system,instance,question,score\n{label},0,accuracy,4\n{label},1,accuracy,high\n"
    path = tmp_path / "judge.csv"
    path.write_text(content.replace("{s}", label))
    with pytest.raises(CommandError, match=message):
        run("import_judge_scores", campaign.name, path, "--judge", "llm")
    assert not JudgeRun.objects.exists() and not JudgeScore.objects.exists()


def test_report_needs_a_judge(campaign):
    with pytest.raises(CommandError, match="no judges; import one with import_judge_scores"):
        run("judge_report", campaign.name)


def test_results_page_upload_and_table(campaign, client, organizer, judge_file):
    client.force_login(organizer)
    url = f"/evaluation/{campaign.pk}/judges/"
    response = client.post(url, {"judge": "llm", "file": io.BytesIO(b"system,instance,score\n")}, follow=True)
    assert "Nothing was imported" in response.content.decode() and "missing column(s) question" in response.content.decode()
    with judge_file.open("rb") as handle:
        response = client.post(url, {"judge": "llm", "file": handle}, follow=True)
    page = response.content.decode()
    assert response.status_code == 200 and "Imported" in page
    assert "Automatic judges" in page and "llm" in page and "PPI++" in page and "Alternative-annotator test" in page and "winning rate" in page
    assert 'class="rank-sets"' in page and "Ranks (humans only)" in page
