"""The API for finalist selection and for importing past human evaluations (zipped DSTC9 layout)."""
import io
import zipfile

import pytest
from rest_framework.test import APIClient

from evaluation.campaigns.services.campaigns import create_campaign
from evaluation.campaigns.services.imports import import_entries, import_objective_scores
from evaluation.models import Campaign, CampaignRun, Rating

from .conftest import DSTC9

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(organizer):
    client = APIClient()
    client.force_authenticate(organizer)
    return client


def zipped(directory, *, extra=None):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(directory.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(directory).as_posix())
        for name, content in (extra or {}).items():
            archive.writestr(name, content)
    buffer.seek(0)
    buffer.name = "human_eval.zip"
    return buffer


def test_finalists_by_mean_reciprocal_rank_and_a_campaign_with_reference_rows(api, test_set):
    import_entries(test_set, DSTC9 / "entries")
    import_objective_scores(test_set, DSTC9 / "score.csv")
    metric = open(DSTC9 / "score.csv").readline().strip().split(",")[2]
    response = api.post(f"/api/evaluation/test-sets/{test_set.pk}/finalists/", {"metrics": [metric], "top": 2, "campaign": "finals"}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert [row["rank"] for row in body["finalists"]] == sorted(row["rank"] for row in body["finalists"])
    assert len({row["team_id"] for row in body["finalists"]}) == len(body["finalists"]) <= 2  # best entry per team
    campaign = Campaign.objects.get(pk=body["campaign"])
    labels = set(campaign.entries.values_list("entry_id", flat=True))
    assert {row["entry_id"] for row in body["finalists"]} <= labels
    assert campaign.entries.filter(is_baseline=True).exists() or campaign.entries.filter(is_ground_truth=True).exists()


@pytest.mark.parametrize(
    "payload,field",
    [({"metrics": []}, "metrics"), ({"metrics": ["no-such-metric"]}, "detail"), ({"metrics": ["x"], "top": 0}, "top")],
)
def test_bad_finalist_requests_are_400_with_a_reason(api, test_set, payload, field):
    import_entries(test_set, DSTC9 / "entries")
    import_objective_scores(test_set, DSTC9 / "score.csv")
    response = api.post(f"/api/evaluation/test-sets/{test_set.pk}/finalists/", payload, format="json")
    assert response.status_code == 400 and field in response.json()


def _started(response):
    """The run a 202 started: its body, after checking where it says to follow it."""
    assert response.status_code == 202, response.content
    body = response.json()
    assert response["Location"] == body["url"] and body["kind"] == "human_eval_import"
    return body


def test_zipped_human_evaluations_are_imported_in_a_background_run_all_or_nothing(api, test_set, django_capture_on_commit_callbacks):
    campaign = create_campaign("past", test_set, [])
    url = f"/api/evaluation/campaigns/{campaign.pk}/human-evals/"
    with django_capture_on_commit_callbacks() as queued:
        started = _started(api.post(url, {"file": zipped(DSTC9 / "human_eval")}, format="multipart"))
    assert started["status"] == "pending" and not started["finished"] and started["result"] is None
    assert not Rating.objects.filter(campaign=campaign).exists()  # nothing before the run
    queued[0]()  # the worker runs it
    done = api.get(started["url"]).json()
    ratings = Rating.objects.filter(campaign=campaign)
    assert done["status"] == "succeeded" and done["finished"] and done["progress"] == 1.0
    assert done["result"]["ratings"] == ratings.count() > 0
    assert done["result"]["entries"] == ratings.values("entry").distinct().count()

    other = create_campaign("broken", test_set, [])
    with django_capture_on_commit_callbacks(execute=True):
        broken = _started(api.post(
            f"/api/evaluation/campaigns/{other.pk}/human-evals/",
            {"file": zipped(DSTC9 / "human_eval", extra={"team9/e1.json": "[", "team9/e1.human_eval.json": "[]"})},
            format="multipart",
        ))
    failed = api.get(broken["url"]).json()
    assert failed["status"] == "failed" and failed["finished"] and "team9" in failed["error"] and failed["result"] is None
    assert failed["error"].startswith("Nothing was imported: ")
    assert not Rating.objects.filter(campaign=other).exists()


def test_archives_that_escape_their_folder_or_are_not_zips_are_refused_at_once(api, test_set, django_capture_on_commit_callbacks):
    campaign = create_campaign("past", test_set, [])
    url = f"/api/evaluation/campaigns/{campaign.pk}/human-evals/"
    evil = zipped(DSTC9 / "human_eval", extra={"../escape.json": "[]"})
    not_zip = io.BytesIO(b"plain text")
    not_zip.name = "x.zip"
    nested = io.BytesIO()
    with zipfile.ZipFile(nested, "w") as archive:  # the folder holding the team folders was zipped, not the team folders
        archive.writestr("human_eval/team1/entry0.human_eval.json", "[]")
    nested.seek(0)
    nested.name = "nested.zip"
    with django_capture_on_commit_callbacks() as queued:
        response = api.post(url, {"file": evil}, format="multipart")
        assert response.status_code == 400 and "outside" in str(response.json())
        response = api.post(url, {"file": not_zip}, format="multipart")
        assert response.status_code == 400 and "not a .zip archive" in str(response.json()["file"])
        response = api.post(url, {"file": nested}, format="multipart")
        assert response.status_code == 400 and "holds no <team>/<entry>.human_eval.json at its top level" in response.json()["file"][0]
    assert queued == [] and not CampaignRun.objects.exists()
    assert not Rating.objects.filter(campaign=campaign).exists()


def test_a_run_is_read_through_its_own_campaign(api, test_set):
    campaign = create_campaign("past", test_set, [])
    other = create_campaign("other", test_set, [])
    run = CampaignRun.objects.create(campaign=campaign, kind="plan", status="running", done=3, total=4)
    body = api.get(f"/api/evaluation/campaigns/{campaign.pk}/runs/{run.pk}/").json()
    assert (body["status"], body["progress"], body["finished"], body["kind"]) == ("running", 0.75, False, "plan")
    assert api.get(f"/api/evaluation/campaigns/{other.pk}/runs/{run.pk}/").status_code == 404
    assert api.get(f"/api/evaluation/campaigns/{campaign.pk}/runs/{run.pk + 1}/").status_code == 404


def test_annotators_cannot_use_these_endpoints(make_annotator, test_set):
    user, _ = make_annotator("ann")
    client = APIClient()
    client.force_authenticate(user)
    assert client.post(f"/api/evaluation/test-sets/{test_set.pk}/finalists/", {"metrics": ["x"]}, format="json").status_code == 403
    campaign = create_campaign("past", test_set, [])
    assert client.post(f"/api/evaluation/campaigns/{campaign.pk}/human-evals/", {}, format="multipart").status_code == 403
    run = CampaignRun.objects.create(campaign=campaign, kind="human_eval_import")
    assert client.get(f"/api/evaluation/campaigns/{campaign.pk}/runs/{run.pk}/").status_code == 403
