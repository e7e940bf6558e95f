"""Objective scoring as published: the DSTC9 Track 1 metrics computed from the entries, compared
with a score.csv and fed to Eq. 2; DSTC6 Track 1 result files checked and scored.

The reproduction of the published DSTC9 score.csv reads the real data in the project's shared
data folder (`dstc9-track1-human-eval/` in `tests.shared_data`) at run time.
"""
import json
import re
from pathlib import Path

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from annotation.models import RunStatus
from evaluation.campaigns.services.campaigns import select_finalists
from evaluation.campaigns.services.imports import import_entries, import_test_set
from evaluation.campaigns.services.objective import compare_score_csv, score_dstc6_results, score_entries, wordnet
from evaluation.errors import EvaluationInputError
from evaluation.models import Entry
from evaluation.stats import objective
from tests.shared_data import DSTC9_HUMAN_EVAL, missing, shared_data

DATA = shared_data(DSTC9_HUMAN_EVAL)
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "evaluation" / "dstc9"
EXACT = objective.DETECTION + objective.SELECTION + objective.BLEU + objective.ROUGE


# --- the DSTC9 Track 1 scorer, on cases worked by hand ------------------------------------------------


def _snippet(doc):
    return {"domain": "hotel", "entity_id": 1, "doc_id": doc}


def test_every_sum_is_an_f_measure_over_the_entrys_and_the_true_positives():
    labels = [
        {"target": True, "knowledge": [_snippet(1)], "response": "The hotel has free parking."},
        {"target": True, "knowledge": [_snippet(2)], "response": "Yes, pets are allowed."},
        {"target": False},
        {"target": False},
    ]
    outputs = [
        {"target": True, "knowledge": [_snippet(9), _snippet(1)], "response": "The hotel has free parking."},  # right snippet second
        {"target": False},  # a miss
        {"target": True, "knowledge": [_snippet(3)], "response": "No."},  # a false alarm
        {"target": False},
    ]
    scores = objective.dstc9_scores(labels, outputs)
    # tp = fn = fp = 1: precision = recall = sum / 2.
    assert scores["detection_prec"] == scores["detection_rec"] == scores["detection_f1"] == 0.5
    assert scores["selection_mrr@5"] == pytest.approx(0.25)  # reciprocal rank 1/2, over 2
    assert scores["selection_r@1"] == 0.0
    assert scores["selection_r@5"] == pytest.approx(0.5)
    for metric in objective.BLEU + objective.ROUGE:  # the one scored response is the reference itself
        assert scores[metric] == pytest.approx(0.5), metric
    assert objective.METEOR not in scores  # no WordNet given: left to score.csv


def test_texts_are_normalised_as_the_scorer_did():
    assert objective.normalize("The Hotel's   parking, a FREE one!") == "hotel s parking free one"
    # Articles and punctuation do not count against a response.
    assert objective.bleu("the parking is free.", "Parking is free!", 1) == pytest.approx(1.0)


def test_an_entry_not_aligned_with_the_labels_is_refused():
    with pytest.raises(ValueError, match="3 instances but the labels have 2"):
        objective.dstc9_scores([{"target": False}] * 2, [{"target": False}] * 3)


# --- the published DSTC9 score.csv, reproduced ---------------------------------------------------------


@pytest.fixture(scope="module")
def published(django_db_setup, django_db_blocker):
    if not (DATA / "results").is_dir():
        pytest.skip(missing(DATA))
    with django_db_blocker.unblock():
        test_set = import_test_set("DSTC9 Track 1 (objective)", "test", DATA / "data_eval" / "test" / "labels.json")
        import_entries(test_set, DATA / "results", scores_path=DATA / "results" / "score.csv")
        metrics = [m for m in EXACT if m.startswith(("detection", "selection", "generation_bleu"))]
        before = select_finalists(test_set, metrics, 12)
        summary = score_entries(test_set)
        after = select_finalists(test_set, metrics, 12)
        report = compare_score_csv(test_set, (DATA / "results" / "score.csv").read_text(), tolerance=0.005)
        yield {"test_set": test_set, "summary": summary, "report": report, "before": before, "after": after}
        test_set.challenge.delete()


@pytest.mark.django_db
def test_detection_selection_bleu_and_rouge_of_every_finalist_are_reproduced_exactly(published):
    report = published["report"]
    published_outputs = [p for p in (DATA / "results").glob("*/entry*.json") if not p.name.endswith(".human_eval.json")]
    assert report["entries"] == len(published_outputs) == 11  # the baseline and the 10 finalists whose outputs are in the folder
    for row in report["compared"]:
        if row["metric"] in EXACT:
            assert abs(row["difference"]) < 1e-9, row
    compared = {(r["team_id"], r["entry_id"], r["metric"]) for r in report["compared"]}
    for team, entry in {(r["team_id"], r["entry_id"]) for r in report["compared"]}:
        assert all((team, entry, m) in compared for m in EXACT)
    # Every other row of score.csv is an entry whose outputs were never published.
    assert report["unscored"] and {r["reason"] for r in report["unscored"]} == {"no outputs to score"}


@pytest.mark.django_db
def test_meteor_is_computed_with_wordnet_or_left_to_score_csv_with_the_reason(published):
    meteor = [r for r in published["report"]["compared"] if r["metric"] == objective.METEOR]
    if wordnet() is None:
        assert meteor == []
        assert "WordNet" in published["summary"]["not_computed"][objective.METEOR]
        return
    # NLTK fixed its METEOR matching after 3.5 (the scorer's NLTK in 2020), so today's NLTK scores
    # 0.006 to 0.008 lower than published on every entry; with NLTK 3.5's METEOR the published values are
    # met exactly (docs/measurements.md).
    assert len(meteor) == 11
    assert all(-0.01 < r["difference"] < 0 for r in meteor), meteor


@pytest.mark.django_db
def test_the_computed_scores_feed_eq2_and_pick_the_published_finalists(published):
    before, after = published["before"], published["after"]
    assert list(after["team_id"]) == list(before["team_id"])
    assert list(after["entry_id"]) == list(before["entry_id"])
    team19 = Entry.objects.get(test_set=published["test_set"], team__team_id="team19", entry_id="entry2")
    assert team19.objective_scores["detection_f1"] == team19.computed_scores["detection_f1"]


# --- the service, the command, the API ------------------------------------------------------------------


@pytest.fixture
def small(db):
    test_set = import_test_set("DSTC9 Track 1", "test", FIXTURES / "labels.json", FIXTURES / "knowledge.json")
    import_entries(test_set, FIXTURES / "entries", scores_path=FIXTURES / "score.csv")
    return test_set


def test_scoring_keeps_uploaded_values_apart_and_never_replaces_them(small):
    entry = Entry.objects.filter(test_set=small, outputs__isnull=False).exclude(objective_scores={}).first()
    uploaded = dict(entry.objective_scores)
    score_entries(small)
    entry.refresh_from_db()
    assert set(entry.computed_scores) >= set(EXACT)
    assert entry.objective_scores == uploaded  # what the score file published stays as it was
    # A ranking reads the published value where there is one, Quorum's only where there is none.
    assert entry.scores_for_ranking() == {**entry.computed_scores, **uploaded}
    report = compare_score_csv(small, (FIXTURES / "score.csv").read_text())
    assert {r["metric"] for r in report["compared"]} <= set(uploaded)


@pytest.mark.parametrize(("text", "words"), [
    ("team,entry,x\n1,0,0.5\n", "header"),
    ("team_id,entry_id,detection_f1\nteam3,entry0,high\n", "line 2: detection_f1 = 'high' is not a number"),
    ("team_id,entry_id,detection_f1\n", "no rows"),
])
def test_a_bad_score_csv_is_refused_with_its_line(small, text, words):
    with pytest.raises(EvaluationInputError, match=words):
        compare_score_csv(small, text)


def test_the_command_scores_and_lists_the_differences(small, tmp_path, capsys):
    call_command("score_entries", "--challenge", "DSTC9 Track 1", "--test-set", "test", "--compare", str(FIXTURES / "score.csv"))
    out = capsys.readouterr().out
    assert "scored" in out and "compared" in out and "difference" in out
    # It says the published values stay what they were (it replaced them before).
    assert "beside the uploaded score file's values, which are left as published" in out


@pytest.fixture
def api(organizer):
    client = APIClient()
    client.force_authenticate(organizer)
    return client


def test_the_api_scores_in_the_background_and_compares_an_upload(api, small, django_capture_on_commit_callbacks):
    url = f"/api/evaluation/test-sets/{small.pk}/scoring/"
    assert api.get(url).status_code == 404
    with django_capture_on_commit_callbacks(execute=True):
        started = api.post(url)
    assert started.status_code == 202
    run = api.get(url).json()
    assert run["status"] == RunStatus.SUCCEEDED and run["progress"] == 1.0 and run["done"] == run["total"] > 0
    with (FIXTURES / "score.csv").open("rb") as fh:
        compared = api.post(f"/api/evaluation/test-sets/{small.pk}/score-comparison/", {"scores": fh, "tolerance": 0.01}, format="multipart")
    assert compared.status_code == 200 and compared.json()["compared"]
    bad = api.post(
        f"/api/evaluation/test-sets/{small.pk}/score-comparison/",
        {"scores": _upload("score.csv", b"team_id,entry_id,x\nteam3,entry0,NaN\n")}, format="multipart",
    )
    assert bad.status_code == 400 and "line 2" in bad.json()["detail"]


def _upload(name, content):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile(name, content)


# --- DSTC6 Track 1 result files ----------------------------------------------------------------------------


def _dstc6_test_set(answer_ranks):
    """Dialogs of six candidates each; a result ranks candidate c(i) at rank i, and the answer of dialog
    d is the candidate the result will rank at answer_ranks[d]."""
    return [
        {"dialog_id": f"d{d}", "utterances": ["hi"], "candidates": [{"candidate_id": f"c{i}", "utterance": f"u{i}"} for i in range(1, 7)],
         "answer": {"candidate_id": f"c{rank}"}}
        for d, rank in enumerate(answer_ranks)
    ]


def _results(count, change=None):
    results = [{"dialog_id": f"d{d}", "lst_candidate_id": [{"candidate_id": f"c{i}", "rank": i} for i in range(1, 7)]} for d in range(count)]
    if change:
        change(results)
    return "[\n" + ",\n".join(json.dumps(r) for r in results) + "\n]\n"  # result d on line d + 2


def test_dstc6_precision_at_1_2_5_against_answers_placed_at_known_ranks():
    scores = score_dstc6_results(_dstc6_test_set([1, 2, 5, 6]), _results(4))
    assert scores == {"dialogs": 4, "precision@1": 0.25, "precision@2": 0.5, "precision@5": 0.75}


def _drop_dialog(results):
    results.pop()


def _rank_twice(results):
    results[1]["lst_candidate_id"][1]["candidate_id"] = "c1"


def _zero_index(results):
    for row in results[2]["lst_candidate_id"]:
        row["rank"] -= 1


def _unknown(results):
    results[0]["lst_candidate_id"][5]["candidate_id"] = "c99"


def _missing_candidate(results):
    results[3]["lst_candidate_id"].pop()


def _repeat_rank(results):
    results[1]["lst_candidate_id"][0]["rank"] = 2


@pytest.mark.parametrize(("change", "place"), [
    (_drop_dialog, "dialog d3: no result"),
    (_rank_twice, "line 3, dialog d1, candidate c1: ranked twice"),
    (_zero_index, "line 4, dialog d2, candidate c1: rank 0 is not a whole number from 1 to 6 (ranks are 1-indexed)"),
    (_unknown, "line 2, dialog d0, candidate c99: not a candidate"),
    (_missing_candidate, "line 5, dialog d3, candidate c6: not ranked"),
    (_repeat_rank, "line 3, dialog d1: the ranks must be 1 to 6, each used once"),
])
def test_a_bad_dstc6_result_file_is_refused_with_its_place(change, place):
    with pytest.raises(EvaluationInputError, match=re.escape(place)):
        score_dstc6_results(_dstc6_test_set([1, 2, 5, 6]), _results(4, change))


def test_dstc6_in_the_api_and_a_bad_file_is_a_400_with_its_place(api):
    test_set = json.dumps(_dstc6_test_set([1, 2, 5, 6])).encode()
    good = api.post("/api/evaluation/dstc6/score/", {"test_set": _upload("test.json", test_set), "results": _upload("r.json", _results(4).encode())}, format="multipart")
    assert good.status_code == 200 and good.json()["precision@5"] == 0.75
    bad = api.post(
        "/api/evaluation/dstc6/score/",
        {"test_set": _upload("test.json", test_set), "results": _upload("r.json", _results(4, _rank_twice).encode())}, format="multipart",
    )
    assert bad.status_code == 400 and "line 3, dialog d1, candidate c1" in bad.json()["detail"]


# --- the page ------------------------------------------------------------------------------------------------


def test_the_page_computes_shows_and_compares(client, organizer, small, django_capture_on_commit_callbacks):
    client.force_login(organizer)
    page = f"/evaluation/test-sets/{small.pk}/objective/"
    assert client.get(page).status_code == 200
    with django_capture_on_commit_callbacks(execute=True):
        started = client.post(page + "compute/")
    assert started.status_code == 302
    shown = client.get(page).content.decode()
    assert "Succeeded" in shown and "computed-scores" in shown
    with (FIXTURES / "score.csv").open("rb") as fh:
        compared = client.post(page + "compare/", {"scores": fh, "tolerance": "0.005"})
    assert compared.status_code == 200 and "comparison-summary" in compared.content.decode()
    refused = client.post(page + "compare/", {"scores": _upload("score.csv", b"team_id,entry_id\n"), "tolerance": "0.005"})
    assert refused.status_code == 400 and "the header must be" in refused.content.decode()


def test_the_page_scores_a_dstc6_file_and_names_the_place_of_a_bad_one(client, organizer, small):
    client.force_login(organizer)
    url = f"/evaluation/test-sets/{small.pk}/objective/dstc6/"
    test_set = json.dumps(_dstc6_test_set([1, 2, 5, 6])).encode()
    good = client.post(url, {"test_set": _upload("t.json", test_set), "results": _upload("r.json", _results(4).encode())})
    assert good.status_code == 200 and "precision@5 0.7500" in good.content.decode()
    bad = client.post(url, {"test_set": _upload("t.json", test_set), "results": _upload("r.json", _results(4, _zero_index).encode())})
    assert bad.status_code == 400 and "line 4, dialog d2, candidate c1" in bad.content.decode()


@pytest.mark.parametrize("text", ["[" * 200 + "]" * 200, '[{"dialog_id": NaN}]', "not json"])
def test_a_dstc6_file_that_is_not_json_quorum_reads_is_refused_in_words(text):
    with pytest.raises(EvaluationInputError, match="results.json: refused"):
        score_dstc6_results(_dstc6_test_set([1]), text)


def test_a_run_that_cannot_score_an_entry_fails_with_the_reason(small, django_capture_on_commit_callbacks):
    from evaluation.campaigns.services.objective import start_scoring
    from evaluation.models import ObjectiveScoringRun, Team

    team = Team.objects.create(challenge=small.challenge, team_id="zz-broken")
    Entry.objects.create(team=team, test_set=small, entry_id="entry0", outputs=[{"target": False}])  # not aligned with the labels
    with django_capture_on_commit_callbacks(execute=True):
        start_scoring(small)
    run = ObjectiveScoringRun.objects.get()
    assert run.status == RunStatus.FAILED and "1 instances but the labels have" in run.error
    assert Entry.objects.filter(test_set=small).exclude(computed_scores={}).exists()  # those before it kept their scores


def test_the_sweep_requeues_a_lost_run_and_fails_one_whose_worker_was_lost(small, settings):
    from datetime import timedelta

    from django.utils import timezone

    from evaluation.campaigns.services.objective import settle_lost_scoring
    from evaluation.models import ObjectiveScoringRun

    late = timezone.now() - timedelta(minutes=settings.QUORUM_RUN_DEADLINE_MINUTES + 1)
    lost = ObjectiveScoringRun.objects.create(test_set=small, total=1)
    ObjectiveScoringRun.objects.filter(pk=lost.pk).update(created_at=late)
    killed = ObjectiveScoringRun.objects.create(test_set=small, status=RunStatus.RUNNING, started_at=late)
    fresh = ObjectiveScoringRun.objects.create(test_set=small)
    assert settle_lost_scoring() == {"requeued": 1, "failed": 1}
    lost.refresh_from_db(), killed.refresh_from_db(), fresh.refresh_from_db()
    assert lost.status == RunStatus.SUCCEEDED  # tasks run in-process in tests
    assert killed.status == RunStatus.FAILED and "worker running it was lost" in killed.error
    assert fresh.status == RunStatus.PENDING
