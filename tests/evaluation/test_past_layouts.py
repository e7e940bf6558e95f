"""Past evaluations import as published (issue 9, items 4 and 5): small fixtures built in each
layout from the DSTC9 fixtures — DSTC10 Track 2 (float ratings, baseline in teamB00, ground truth
in ref/), DSTC11 Track 5 (knowledge without docs, baseline in team00), the published DSTC9
score.csv with numeric ids."""
import json
import shutil

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from evaluation.campaigns.services.imports import import_entries, import_objective_scores, import_test_set
from evaluation.errors import EvaluationInputError
from evaluation.models import Campaign, Entry, Rating

from .conftest import DSTC9

pytestmark = pytest.mark.django_db


def _floats(path):
    data = json.loads(path.read_text())
    path.write_text(json.dumps([None if x is None else {q: [float(v) for v in vs] for q, vs in x.items()} for x in data]))


@pytest.fixture
def dstc10_layout(tmp_path):
    """DSTC10 Track 2: ratings as floats, the baseline in teamB00, the ground truth in ref/."""
    root = tmp_path / "dstc10"
    shutil.copytree(DSTC9 / "human_eval", root)
    (root / "baseline").rename(root / "teamB00")
    (root / "ground-truth").rename(root / "ref")
    for path in root.glob("*/*.human_eval.json"):
        _floats(path)
    return root


def test_dstc10_layout_imports_with_named_baseline_and_ground_truth(test_set, dstc10_layout):
    call_command(
        "import_human_eval", str(dstc10_layout), "--campaign", "dstc10", "--challenge", "DSTC9 Track 1", "--test-set", "test",
        "--baseline-team", "teamB00", "--ground-truth-dir", "ref",
    )
    campaign = Campaign.objects.get(name="dstc10")
    kinds = {e.label: e.kind for e in campaign.entries.all()}
    assert kinds["teamB00/entry0"] == "baseline" and kinds["ref/labels"] == "ground_truth"
    assert set(Rating.objects.filter(campaign=campaign).values_list("value", flat=True)) <= {1, 2, 3, 4, 5}


def test_a_rating_that_is_not_whole_is_refused_with_its_place(test_set, dstc10_layout):
    path = dstc10_layout / "team3" / "entry0.human_eval.json"
    data = json.loads(path.read_text())
    index = next(i for i, x in enumerate(data) if x)
    data[index]["accuracy"][1] = 3.5
    path.write_text(json.dumps(data))
    with pytest.raises(CommandError, match=rf"team3/entry0.human_eval.json, instance {index}: 'accuracy' rating 3.5 \(rating 2\) is not a whole number"):
        call_command("import_human_eval", str(dstc10_layout), "--campaign", "c", "--challenge", "DSTC9 Track 1", "--test-set", "test", "--baseline-team", "teamB00", "--ground-truth-dir", "ref")
    assert not Rating.objects.exists()


def test_dstc11_knowledge_without_docs_imports(db, tmp_path):
    knowledge = json.loads((DSTC9 / "knowledge.json").read_text())
    for entities in knowledge.values():
        for entity in entities.values():
            entity.pop("docs", None)
            entity["reviews"] = {"0": {"sentences": {"0": "Great stay."}}}
    path = tmp_path / "knowledge.json"
    path.write_text(json.dumps(knowledge))
    test_set = import_test_set("DSTC11 Track 5", "test", DSTC9 / "labels.json", path)
    assert test_set.size == len(json.loads((DSTC9 / "labels.json").read_text()))


def test_published_numeric_score_csv_maps_ids_to_folders(test_set, tmp_path):
    root = tmp_path / "entries"
    shutil.copytree(DSTC9 / "entries", root)
    (root / "team3").rename(root / "team03")
    scores = tmp_path / "score.csv"
    scores.write_text("team_id,entry_id,bleu\n0,0,0.1\n3,0,0.5\n1,1,0.4\n7,2,0.3\n")
    import_entries(test_set, root, scores_path=scores)
    assert Entry.objects.get(team__team_id="baseline").objective_scores == {"bleu": 0.1}
    assert Entry.objects.get(team__team_id="team03").objective_scores == {"bleu": 0.5}
    assert Entry.objects.get(team__team_id="team1", entry_id="entry1").objective_scores == {"bleu": 0.4}
    only_scored = Entry.objects.get(team__team_id="team07", entry_id="entry2")  # published scores, outputs not public
    assert only_scored.outputs is None and only_scored.objective_scores == {"bleu": 0.3}


def test_import_entries_with_a_bad_score_file_writes_nothing(test_set, tmp_path):
    scores = tmp_path / "score.csv"
    scores.write_text("team_id,entry_id,bleu\nteam1,entry0,0.5\nteam1,entry1,high\n")
    with pytest.raises(CommandError, match=r"score.csv, line 3: bleu = 'high' is not a number"):
        call_command("import_entries", str(DSTC9 / "entries"), "--challenge", "DSTC9 Track 1", "--test-set", "test", "--scores", str(scores))
    assert not Entry.objects.exists()
    with pytest.raises(EvaluationInputError):
        import_objective_scores(test_set, scores)


def test_finalists_leave_out_an_entry_without_a_metric(test_set, tmp_path):
    from evaluation.campaigns.services.campaigns import select_finalists

    import_entries(test_set, DSTC9 / "entries")
    scores = tmp_path / "score.csv"
    scores.write_text("team_id,entry_id,bleu,r1\nteam1,entry0,0.5,0.2\nteam2,entry0,0.4,0.9\n")
    import_objective_scores(test_set, scores)
    finalists = select_finalists(test_set, ["bleu", "r1"], 12)
    assert set(finalists["team_id"]) == {"team1", "team2"}
    assert "team3/entry0" in finalists.attrs["left_out"]
