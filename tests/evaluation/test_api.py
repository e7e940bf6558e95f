"""The evaluation API: who may call what, refusals with reasons, leaderboard formats, agreement."""
import csv
import io
import json

import pandas as pd
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from rest_framework.test import APIClient

from annotation.quality import agreement
from evaluation.campaigns import leaderboard
from evaluation.campaigns.services.campaigns import compute_campaign_results, create_campaign, refresh_inputs_version
from evaluation.models import CampaignResult, Rating

from .conftest import FIXTURES

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.evaluation.api_test_urls")]

BASE = "/api/evaluation"


def client_for(user=None):
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


def csv_upload(text, name="ratings.csv"):
    return SimpleUploadedFile(name, text.encode("utf-8") if isinstance(text, str) else text, content_type="text/csv")


def agreement_form(text="item,rater,value\na,r1,1\na,r2,2\nb,r1,4\nb,r2,4\nc,r1,5\nc,r2,5\n", **extra):
    return {"file": csv_upload(text), "level": "ordinal", "bootstrap": 0, **extra}


# The permission matrix: (method, path, body) for every endpoint; organizers get the "ok" status.
def endpoints(campaign):
    pk = campaign.pk
    return [
        ("get", f"{BASE}/campaigns/", None, 200),
        ("get", f"{BASE}/campaigns/{pk}/", None, 200),
        ("post", f"{BASE}/campaigns/{pk}/results/", None, 202),
        ("get", f"{BASE}/campaigns/{pk}/leaderboard/", None, 409),  # nothing computed yet: a reason, not a 500
        ("get", f"{BASE}/campaigns/{pk}/agreement/", None, 409),
        ("post", f"{BASE}/agreement/", "form", 200),
    ]


@pytest.mark.parametrize("role, expected", [("anonymous", 401), ("annotator", 403), ("organizer", "ok")])
def test_permission_matrix(role, expected, campaign, organizer, make_annotator):
    user = {"anonymous": None, "annotator": lambda: make_annotator("ann")[0], "organizer": lambda: organizer}[role]
    client = client_for(user() if callable(user) else user)
    for method, path, body, ok in endpoints(campaign):
        data = agreement_form() if body == "form" else None
        response = getattr(client, method)(path, data=data, format="multipart" if body == "form" else None)
        want = ok if expected == "ok" else expected
        assert response.status_code == want, (role, method, path, response.status_code, response.content[:300])
        if expected != "ok":
            assert "detail" in response.json()
    assert not CampaignResult.objects.exists()  # the 202 queued work on commit; nothing was computed in the request


def test_campaign_list_and_detail_show_status(organizer, campaign):
    client = client_for(organizer)
    listed = client.get(f"{BASE}/campaigns/").json()
    row = next(r for r in listed["results"] if r["id"] == campaign.pk)
    assert row["ratings"] == Rating.objects.filter(campaign=campaign).count() and row["results"] == "none"
    compute_campaign_results(campaign.pk)
    detail = client.get(f"{BASE}/campaigns/{campaign.pk}/").json()
    assert detail["results"] == "current" and detail["crowd_job"] is None
    assert {e["label"] for e in detail["entries"]} == {e.label for e in campaign.entries.all()}
    assert client.get(f"{BASE}/campaigns/99999/").status_code == 404


def test_the_campaign_list_counts_ratings_without_reading_the_test_sets_files(organizer, campaign):
    """DSTC9's test set holds megabytes of JSON and its campaign 124k ratings: the list once grouped
    every rating with the whole test set row, which never answered on SQLite and filled the disk."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client = client_for(organizer)
    with CaptureQueriesContext(connection) as queries:
        listed = client.get(f"{BASE}/campaigns/").json()
        detail = client.get(f"{BASE}/campaigns/{campaign.pk}/").json()
    row = next(r for r in listed["results"] if r["id"] == campaign.pk)
    assert row["ratings"] == detail["ratings"] == Rating.objects.filter(campaign=campaign).count() > 0
    listing = [q["sql"] for q in queries.captured_queries if 'FROM "evaluation_campaign"' in q["sql"]]
    assert listing and not [sql for sql in listing if '"labels"' in sql or 'GROUP BY "evaluation_campaign"' in sql]


def test_recompute_queues_on_commit_then_reports_ready(organizer, campaign, django_capture_on_commit_callbacks):
    client = client_for(organizer)
    with django_capture_on_commit_callbacks(execute=True):
        queued = client.post(f"{BASE}/campaigns/{campaign.pk}/results/")
    assert queued.status_code == 202 and queued.json()["status"] == "queued"
    assert CampaignResult.objects.filter(campaign=campaign, inputs_version=queued.json()["inputs_version"]).exists()
    ready = client.post(f"{BASE}/campaigns/{campaign.pk}/results/")
    assert ready.status_code == 200 and ready.json()["status"] == "ready"


def test_recompute_without_ratings_is_a_400_with_a_reason(organizer, test_set):
    empty = create_campaign("empty", test_set, [])
    response = client_for(organizer).post(f"{BASE}/campaigns/{empty.pk}/results/")
    assert response.status_code == 400 and "has no entries" in response.json()["detail"]


def test_leaderboard_formats_match_the_stored_report(organizer, campaign):
    result = compute_campaign_results(campaign.pk)
    client = client_for(organizer)
    url = f"{BASE}/campaigns/{campaign.pk}/leaderboard/"
    as_json = client.get(url)
    assert as_json.status_code == 200 and as_json["Content-Type"].startswith("application/json")
    body = as_json.json()
    assert body["stale"] is False and body["rows"] == json.loads(json.dumps(leaderboard.rows(result.report)))
    assert client.get(url, {"format": "json"}).json()["rows"] == body["rows"]
    as_csv = client.get(url, {"format": "csv"})
    assert as_csv.status_code == 200 and as_csv["Content-Type"].startswith("text/csv")
    table = list(csv.DictReader(io.StringIO(as_csv.content.decode())))
    assert [r["system"] for r in table] == [r["system"] for r in body["rows"]]
    assert as_csv.content.decode() == leaderboard.to_csv(result.report)
    as_md = client.get(url, {"format": "md"})
    assert as_md.status_code == 200 and as_md["Content-Type"].startswith("text/markdown")
    assert as_md.content.decode() == leaderboard.to_markdown(result.report)
    bad = client.get(url, {"format": "xml"})
    assert bad.status_code == 400 and "format must be one of json, csv, md" in json.dumps(bad.json())


def test_changed_ratings_serve_the_older_results_marked_stale(organizer, campaign):
    compute_campaign_results(campaign.pk)
    rating = Rating.objects.filter(campaign=campaign).first()
    rating.value = 1 if rating.value != 1 else 2
    rating.save()
    refresh_inputs_version(campaign)
    client = client_for(organizer)
    board = client.get(f"{BASE}/campaigns/{campaign.pk}/leaderboard/", {"format": "csv"})
    assert board.status_code == 200 and board["X-Results-Stale"] == "1"
    assert client.get(f"{BASE}/campaigns/{campaign.pk}/agreement/").json()["stale"] is True


def test_campaign_agreement_comes_from_the_stored_report(organizer, campaign):
    result = compute_campaign_results(campaign.pk)
    body = client_for(organizer).get(f"{BASE}/campaigns/{campaign.pk}/agreement/").json()
    assert body["agreement"]["accuracy"]["levels"]["ordinal"]["alpha"] == pytest.approx(result.report["agreement"]["accuracy"]["levels"]["ordinal"]["alpha"])
    assert body["inputs_version"] == result.inputs_version and body["stale"] is False


def test_agreement_upload_matches_the_agreement_module(organizer):
    path = FIXTURES / "agreement_paper.csv"
    response = client_for(organizer).post(
        f"{BASE}/agreement/", {"file": csv_upload(path.read_bytes()), "level": "interval", "bootstrap": 1000, "raters": "true"}, format="multipart"
    )
    assert response.status_code == 200, response.content
    expected = agreement.agreement_report(pd.read_csv(path, dtype={"item": str, "rater": str}), "interval", bootstrap=1000)
    body = response.json()
    assert body["alpha"]["alpha"] == pytest.approx(expected.result.alpha)
    assert body["alpha"]["ci_low"] == pytest.approx(expected.result.ci_low)
    assert len(body["raters"]) == len(expected.raters)


def test_constant_ratings_give_n_a_not_an_error(organizer):
    text = (FIXTURES / "agreement_constant.csv").read_text()
    response = client_for(organizer).post(f"{BASE}/agreement/", agreement_form(text, level="nominal"), format="multipart")
    assert response.status_code == 200 and response.json()["alpha"]["undefined"] is True


@pytest.mark.parametrize(
    "form, field, reason",
    [
        ({"text": "who,what\n1,2\n"}, "file", "header must be item,rater,value"),
        ({"text": "item,rater,value\na,r1,1\na,r1,2\n"}, "file", "more than once"),
        ({"text": "item,rater,value\na,r1,9\na,r2,2\n", "domain": "1,2,3,4,5"}, "file", "outside the value domain"),
        ({"text": b"\xff\xfe\x00bad"}, "file", "not UTF-8"),
        ({"text": ""}, "file", "file is empty"),
        ({"text": 'item,rater,value\na,"r1,1\n'}, "file", "cannot read the CSV"),
        ({"level": "cardinal"}, "level", "not a valid choice"),
        ({"bootstrap": 10}, "bootstrap", "0 (no interval) or 1000"),
        ({"domain": "1,two,3"}, "domain", "numbers separated by commas"),
    ],
)
def test_bad_agreement_uploads_are_400s_with_reasons(organizer, form, field, reason):
    data = agreement_form(**{k: v for k, v in form.items() if k != "text"})
    if "text" in form:
        data["file"] = csv_upload(form["text"])
    response = client_for(organizer).post(f"{BASE}/agreement/", data, format="multipart")
    assert response.status_code == 400, response.content
    assert reason in " ".join(response.json()[field])


def test_missing_file_is_a_400(organizer):
    response = client_for(organizer).post(f"{BASE}/agreement/", {"level": "ordinal"}, format="multipart")
    assert response.status_code == 400 and "file" in response.json()


def test_schema_with_the_evaluation_api_generates_without_warnings(settings, tmp_path):
    settings.ROOT_URLCONF = "tests.evaluation.api_only_urls"
    out = tmp_path / "schema.yml"
    call_command("spectacular", "--fail-on-warn", "--validate", "--file", str(out))
    text = out.read_text()
    assert "/api/evaluation/campaigns/{id}/leaderboard/" in text or "/api/evaluation/campaigns/{pk}/leaderboard/" in text
