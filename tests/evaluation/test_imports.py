"""Imports of DSTC9 material: all or nothing, errors that name the file and the instance."""
import json

import pytest

from evaluation.campaigns.services.campaigns import create_campaign
from evaluation.campaigns.services.imports import (
    import_entries,
    import_entry,
    import_human_eval,
    import_objective_scores,
    import_test_set,
)
from evaluation.errors import EvaluationInputError
from evaluation.models import Campaign, Entry, Rating, TestSet

from .conftest import DSTC9

pytestmark = pytest.mark.django_db


def edit_json(path, change):
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def test_import_test_set(test_set):
    assert test_set.size == 12
    assert sum(item["target"] for item in test_set.labels) == 9
    assert test_set.knowledge["hotel"]["7"]["name"] == "Birch House"


def test_test_set_errors_name_file_and_index(dstc9_copy):
    edit_json(dstc9_copy / "labels.json", lambda d: d[4].pop("target"))
    with pytest.raises(EvaluationInputError, match=r"labels.json, instance 4: 'target' must be true or false"):
        import_test_set("C", "test", dstc9_copy / "labels.json", dstc9_copy / "knowledge.json")
    assert not TestSet.objects.exists()


def test_test_set_knowledge_references_are_checked(dstc9_copy):
    edit_json(dstc9_copy / "labels.json", lambda d: d[0]["knowledge"][0].update(doc_id=99))
    with pytest.raises(EvaluationInputError, match=r"instance 0: knowledge hotel/7/99 is not in knowledge.json"):
        import_test_set("C", "test", dstc9_copy / "labels.json", dstc9_copy / "knowledge.json")


def test_invalid_json_is_reported(tmp_path):
    bad = tmp_path / "labels.json"
    bad.write_text("[{")
    with pytest.raises(EvaluationInputError, match="labels.json: not valid JSON"):
        import_test_set("C", "test", bad)


def test_entries_and_scores(test_set):
    entries = import_entries(test_set, DSTC9 / "entries")
    assert sorted(e.label for e in entries) == ["baseline/entry0", "team1/entry0", "team1/entry1", "team2/entry0", "team3/entry0", "team4/entry0"]
    assert Entry.objects.get(team__team_id="baseline").is_baseline
    assert import_objective_scores(test_set, DSTC9 / "score.csv") == 6
    assert Entry.objects.get(team__team_id="team2").objective_scores["selection_r@1"] == 0.85


def test_misaligned_entry_is_refused(test_set, dstc9_copy):
    edit_json(dstc9_copy / "entries" / "team2" / "entry0.json", lambda d: d.pop())
    with pytest.raises(EvaluationInputError, match=r"team2/entry0.json: has 11 instances but the test set has 12"):
        import_entries(test_set, dstc9_copy / "entries")
    assert not Entry.objects.exists()  # the valid entries before it were not written either


def test_scores_csv_errors_change_nothing(test_set, tmp_path):
    import_entries(test_set, DSTC9 / "entries")
    csv_path = tmp_path / "score.csv"
    csv_path.write_text("team_id,entry_id,bleu\nteam1,entry0,0.5\nteam9,entry0,0.1\n")
    with pytest.raises(EvaluationInputError, match=r"score.csv, line 3: no entry team9/entry0"):
        import_objective_scores(test_set, csv_path)
    assert Entry.objects.get(team__team_id="team1", entry_id="entry0").objective_scores == {}
    csv_path.write_text("team_id,entry_id,bleu\nteam1,entry0,high\n")
    with pytest.raises(EvaluationInputError, match=r"line 2: bleu = 'high' is not a number"):
        import_objective_scores(test_set, csv_path)


def test_import_human_eval(campaign):
    assert campaign.rater_ids_known is False
    assert sorted(e.label for e in campaign.entries.all()) == ["baseline/entry0", "ground-truth/labels", "team1/entry1", "team2/entry0", "team3/entry0"]
    assert Entry.objects.get(team__team_id="ground-truth").is_ground_truth
    # team1/entry1 detects 9 of the 9 targets: 9 instances x 2 questions x 3 raters
    assert Rating.objects.filter(campaign=campaign, entry__team__team_id="team1").count() == 54
    assert set(Rating.objects.values_list("rater", flat=True)) == {"pos1", "pos2", "pos3"}
    assert len(campaign.inputs_version) == 64


def test_human_eval_errors_are_all_or_nothing(test_set, dstc9_copy):
    campaign = create_campaign("c", test_set, [])
    path = dstc9_copy / "human_eval" / "team3" / "entry0.human_eval.json"
    edit_json(path, lambda d: d[2]["accuracy"].__setitem__(1, 6))
    with pytest.raises(EvaluationInputError, match=r"team3/entry0.human_eval.json, instance 2: 'accuracy' rating 6 \(rating \d\) is not a whole number from 1 to 5"):
        import_human_eval(campaign, dstc9_copy / "human_eval")
    assert not Rating.objects.exists() and not Entry.objects.exists()


def test_ratings_of_a_team_the_test_set_does_not_have_name_the_team(test_set, dstc9_copy):
    campaign = create_campaign("c", test_set, [])
    source = dstc9_copy / "human_eval" / "team3"
    stray = dstc9_copy / "only_ratings" / "team99"
    stray.mkdir(parents=True)
    (stray / "entry0.human_eval.json").write_text((source / "entry0.human_eval.json").read_text())
    with pytest.raises(EvaluationInputError, match=r"has no entry team99/entry0; import the entries first"):
        import_human_eval(campaign, dstc9_copy / "only_ratings")
    assert not Rating.objects.exists()


def test_human_eval_refuses_ratings_outside_detected_targets(test_set, dstc9_copy):
    campaign = create_campaign("c", test_set, [])
    # instance 3 is not knowledge-seeking in labels.json
    edit_json(dstc9_copy / "human_eval" / "team2" / "entry0.human_eval.json", lambda d: d.__setitem__(3, {"accuracy": [4, 4, 4]}))
    with pytest.raises(EvaluationInputError, match=r"instance 3: rated, but the instance is not knowledge-seeking"):
        import_human_eval(campaign, dstc9_copy / "human_eval")
    # instance 1 is a target that team3/entry0 did not detect
    edit_json(dstc9_copy / "human_eval" / "team2" / "entry0.human_eval.json", lambda d: d.__setitem__(3, None))
    edit_json(dstc9_copy / "human_eval" / "team3" / "entry0.human_eval.json", lambda d: d.__setitem__(1, {"accuracy": [4, 4, 4]}))
    with pytest.raises(EvaluationInputError, match=r"team3/entry0.human_eval.json, instance 1: rated, but the entry did not detect"):
        import_human_eval(campaign, dstc9_copy / "human_eval")


def test_reimport_needs_replace(campaign):
    before = Rating.objects.count()
    with pytest.raises(EvaluationInputError, match="already has ratings of"):
        import_human_eval(campaign, DSTC9 / "human_eval")
    import_human_eval(campaign, DSTC9 / "human_eval", replace=True)
    assert Rating.objects.count() == before


def test_entry_with_other_outputs_is_not_replaced(test_set):
    import_entry(test_set, "team1", "entry0", DSTC9 / "entries" / "team1" / "entry0.json")
    with pytest.raises(EvaluationInputError, match="team1/entry0 already exists with different outputs"):
        import_entry(test_set, "team1", "entry0", DSTC9 / "entries" / "team2" / "entry0.json")


def test_campaign_names_are_unique(test_set):
    create_campaign("c", test_set, [])
    with pytest.raises(EvaluationInputError, match="already exists"):
        create_campaign("c", test_set, [])
    assert Campaign.objects.count() == 1
