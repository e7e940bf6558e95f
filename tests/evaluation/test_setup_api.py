"""Setting up an evaluation through the API: test sets, their logs, entries with objective scores.

Every refusal is a 400 that says why and names the file or archive member (never a server path),
and leaves nothing behind.
"""
import io
import json
import zipfile

import pytest
from rest_framework.test import APIClient

from evaluation.campaigns.services.campaigns import compute_campaign_results, create_campaign
from evaluation.campaigns.services.imports import import_human_eval
from evaluation.models import Campaign, Challenge, Entry, TestSet

from .conftest import DSTC9
from .test_api_finalists_human_eval import zipped

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.evaluation.api_test_urls")]

BASE = "/api/evaluation"


def upload(content, name):
    handle = io.BytesIO(content if isinstance(content, bytes) else content.encode("utf-8"))
    handle.name = name
    return handle


def fixture_file(name):
    return upload((DSTC9 / name).read_bytes(), name)


def logs_for(n):
    return json.dumps([[{"speaker": "U", "text": f"question {i}"}] for i in range(n)])


def archive_of(members: dict):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    buffer.seek(0)
    buffer.name = "upload.zip"
    return buffer


def labels_count():
    return len(json.loads((DSTC9 / "labels.json").read_text()))


@pytest.fixture
def api(organizer):
    client = APIClient()
    client.force_authenticate(organizer)
    return client


def new_endpoints(test_set):
    """(method, path, body) of every set-up endpoint; each must refuse anonymous and annotators."""
    return [
        ("get", f"{BASE}/test-sets/", None),
        ("post", f"{BASE}/test-sets/", {"challenge": "C", "name": "t", "labels": fixture_file("labels.json")}),
        ("post", f"{BASE}/test-sets/{test_set.pk}/logs/", {"logs": upload(logs_for(labels_count()), "logs.json")}),
        ("post", f"{BASE}/test-sets/{test_set.pk}/entries/", {"archive": zipped(DSTC9 / "entries")}),
    ]


@pytest.mark.parametrize("role, expected", [("anonymous", 401), ("annotator", 403)])
def test_only_organizers_may_set_up(role, expected, test_set, make_annotator):
    client = APIClient()
    if role == "annotator":
        client.force_authenticate(make_annotator("ann")[0])
    for method, path, body in new_endpoints(test_set):
        response = getattr(client, method)(path, data=body, format="multipart" if body else None)
        assert response.status_code == expected, (method, path, response.content[:200])
    assert TestSet.objects.count() == 1 and not Entry.objects.exists() and not test_set.logs


def test_organizers_may_call_every_set_up_endpoint(api, test_set):
    statuses = [getattr(api, m)(p, data=b, format="multipart" if b else None).status_code for m, p, b in new_endpoints(test_set)]
    assert statuses == [200, 201, 200, 200]


def test_a_test_set_from_files_then_its_logs(api):
    created = api.post(
        f"{BASE}/test-sets/", {"challenge": "DSTC9 Track 1", "name": "test", "labels": fixture_file("labels.json"), "knowledge": fixture_file("knowledge.json")}, format="multipart"
    )
    assert created.status_code == 201, created.content
    body = created.json()
    assert body["size"] == labels_count() and body["has_logs"] is False and body["entries"] == 0
    logged = api.post(f"{BASE}/test-sets/{body['id']}/logs/", {"logs": upload(logs_for(body["size"]), "logs.json")}, format="multipart")
    assert logged.status_code == 200 and logged.json()["has_logs"] is True
    listed = api.get(f"{BASE}/test-sets/").json()
    assert [t["name"] for t in listed] == ["test"]


def test_a_test_set_from_one_zip_with_knowledge_beside_the_test_folder(api):
    n = labels_count()
    archive = archive_of(
        {"data/test/labels.json": (DSTC9 / "labels.json").read_text(), "data/test/logs.json": logs_for(n), "data/knowledge.json": (DSTC9 / "knowledge.json").read_text()}
    )
    created = api.post(f"{BASE}/test-sets/", {"challenge": "DSTC9 Track 1", "name": "test", "archive": archive}, format="multipart")
    assert created.status_code == 201, created.content
    test_set = TestSet.objects.get()
    assert test_set.size == n and len(test_set.logs) == n and test_set.knowledge


@pytest.mark.parametrize(
    "files, reason",
    [
        ({"labels": upload("[{", "x.json")}, "labels.json: not valid JSON"),
        ({"labels": fixture_file("labels.json"), "logs": upload(logs_for(2), "logs.json")}, "logs.json: has 2 instances"),
        ({"labels": fixture_file("labels.json"), "knowledge": upload("{}", "k.json")}, "labels.json, instance"),
        ({"archive": upload(b"not a zip", "x.zip")}, "not a .zip archive"),
        ({"archive": archive_of({"test/logs.json": "[]"})}, "the archive has no labels.json"),
        ({"archive": archive_of({"a/labels.json": "[]", "b/labels.json": "[]"})}, "a/labels.json, b/labels.json"),
        ({"archive": archive_of({"../labels.json": "[]"})}, "'../labels.json' points outside the archive"),
        ({"archive": archive_of({"test/labels.json": "[1]"})}, "test/labels.json, instance 0"),
        ({}, "either labels"),
        ({"archive": archive_of({"labels.json": "[]"}), "logs": upload("[]", "logs.json")}, "put knowledge.json and logs.json inside it"),
    ],
)
def test_bad_test_sets_are_400s_naming_the_file_and_write_nothing(api, files, reason):
    response = api.post(f"{BASE}/test-sets/", {"challenge": "C", "name": "t", **files}, format="multipart")
    assert response.status_code == 400
    text = json.dumps(response.json())
    assert reason in text, text
    assert "quorum-upload" not in text and "/tmp" not in text  # the member's name, not the server's temp path
    assert not TestSet.objects.exists() and not Challenge.objects.exists()


def test_a_second_test_set_of_the_same_name_is_refused(api, test_set):
    response = api.post(f"{BASE}/test-sets/", {"challenge": "DSTC9 Track 1", "name": "test", "labels": fixture_file("labels.json")}, format="multipart")
    assert response.status_code == 400 and "already has a test set" in response.json()["detail"]


def test_entries_and_scores_from_a_zip_then_finalists_and_a_campaign(api, test_set):
    response = api.post(
        f"{BASE}/test-sets/{test_set.pk}/entries/",
        {"archive": zipped(DSTC9 / "entries"), "scores": fixture_file("score.csv"), "ground_truth": True},
        format="multipart",
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["entries"] == 6 and body["scores"] is True and "team1/entry1" in body["labels"]
    assert Entry.objects.get(team__team_id="baseline").is_baseline
    assert Entry.objects.get(is_ground_truth=True).outputs == test_set.labels
    assert Entry.objects.get(team__team_id="team2").objective_scores["selection_r@1"] == 0.85
    finals = api.post(f"{BASE}/test-sets/{test_set.pk}/finalists/", {"metrics": ["detection_f1", "selection_r@1"], "top": 2, "campaign": "finals"}, format="json")
    assert finals.status_code == 200
    campaign = Campaign.objects.get(name="finals")
    assert campaign.entries.filter(is_baseline=True).exists() and campaign.entries.filter(is_ground_truth=True).exists()


def test_baseline_folders_are_named_by_the_caller(api, test_set):
    archive = archive_of({"teamB00/entry0.json": (DSTC9 / "entries/baseline/entry0.json").read_text()})
    response = api.post(f"{BASE}/test-sets/{test_set.pk}/entries/", {"archive": archive, "baseline_teams": ["teamB00"]}, format="multipart")
    assert response.status_code == 200, response.content
    assert Entry.objects.get(team__team_id="teamB00").is_baseline


@pytest.mark.parametrize(
    "extra, scores, reason",
    [
        ({"team9/entry0.json": "["}, None, "team9/entry0.json: not valid JSON"),
        ({"team9/entry0.json": "[]"}, None, "team9/entry0.json: has 0 instances"),
        ({"../team9/entry0.json": "[]"}, None, "points outside the archive"),
        ({}, "team_id,entry_id,bleu\nteam1,entry0,high\n", "score.csv, line 2: bleu = 'high' is not a number"),
        ({}, "team,entry,bleu\n", "score.csv: the header must be team_id,entry_id"),
        ({}, "team_id,entry_id,bleu\nteam7,entry0,0.5\n", "score.csv, line 2: no entry team7/entry0"),
    ],
)
def test_bad_entries_or_scores_are_400s_naming_the_member_and_write_nothing(api, test_set, extra, scores, reason):
    data = {"archive": zipped(DSTC9 / "entries", extra=extra)}
    if scores is not None:
        data["scores"] = upload(scores, "my-scores.csv")
    response = api.post(f"{BASE}/test-sets/{test_set.pk}/entries/", data, format="multipart")
    assert response.status_code == 400
    text = response.json()["detail"]
    assert reason in text, text
    assert "quorum-upload" not in text and "/tmp" not in text
    assert not Entry.objects.exists()  # entries and scores: all or nothing


def test_an_empty_archive_and_an_unknown_test_set_are_refused(api, test_set):
    empty = api.post(f"{BASE}/test-sets/{test_set.pk}/entries/", {"archive": archive_of({"readme.txt": "hi"})}, format="multipart")
    assert empty.status_code == 400 and "no <team>/<entry>.json files found" in empty.json()["detail"]
    assert "one folder down" not in empty.json()["detail"]
    nested = api.post(f"{BASE}/test-sets/{test_set.pk}/entries/", {"archive": archive_of({"results/team19/entry2.json": "[]"})}, format="multipart")
    assert nested.status_code == 400
    assert "(they are one folder down, in results/: zip the team folders themselves)" in nested.json()["detail"]
    assert api.post(f"{BASE}/test-sets/999999/entries/", {"archive": zipped(DSTC9 / "entries")}, format="multipart").status_code == 404
    assert api.post(f"{BASE}/test-sets/999999/logs/", {"logs": upload("[]", "logs.json")}, format="multipart").status_code == 404


def test_bad_logs_are_refused_and_keep_the_stored_ones(api, test_set):
    response = api.post(f"{BASE}/test-sets/{test_set.pk}/logs/", {"logs": upload('[["no"]]', "l.json")}, format="multipart")
    assert response.status_code == 400 and response.json()["detail"].startswith("logs.json:")
    test_set.refresh_from_db()
    assert test_set.logs == []


def test_results_move_a_campaign_past_draft(test_set):
    campaign = create_campaign("past", test_set, [])
    import_human_eval(campaign, DSTC9 / "human_eval")
    campaign.refresh_from_db()
    assert campaign.state == Campaign.State.DRAFT  # ratings alone do not move it
    compute_campaign_results(campaign.pk)
    campaign.refresh_from_db()
    assert campaign.state == Campaign.State.CLOSED  # imported ratings: nothing more is collected


def test_schema_documents_the_set_up_endpoints(api):
    schema = api.get("/api/schema/", {"format": "json"}).json()
    for path in ("/api/evaluation/test-sets/", "/api/evaluation/test-sets/{id}/logs/", "/api/evaluation/test-sets/{id}/entries/"):
        assert path in schema["paths"], sorted(schema["paths"])
    entries = schema["paths"]["/api/evaluation/test-sets/{id}/entries/"]["post"]
    assert "multipart/form-data" in entries["requestBody"]["content"] and "400" in entries["responses"]
