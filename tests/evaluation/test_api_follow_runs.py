"""Every 202 of the evaluation API names, in Location, the absolute URL a client follows (a scoring
run, a pairwise report's computation, the campaign whose results are computed), and a campaign's
runs are listed newest first, a page at a time."""

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import RunStatus
from evaluation.campaigns.services.campaigns import create_campaign
from evaluation.campaigns.services.imports import import_entries
from evaluation.models import CampaignRun, ObjectiveScoringRun, PairwiseReport
from tests.annotation.test_api import client_for
from tests.api_follow import followed

from .conftest import DSTC9
from .test_pairwise_report import pairwise_job, vote

pytestmark = pytest.mark.django_db

BASE = "/api/evaluation"


def test_objective_scoring_names_its_run_and_the_run_reports_its_summary(organizer, test_set, django_capture_on_commit_callbacks):
    client = client_for(organizer)
    import_entries(test_set, DSTC9 / "entries")
    with django_capture_on_commit_callbacks() as queued:
        response = client.post(f"{BASE}/test-sets/{test_set.pk}/scoring/")
    waiting = followed(client, response)
    assert (waiting["status"], waiting["finished"], waiting["test_set"]) == ("pending", False, test_set.pk)
    for callback in queued:
        callback()
    done = client.get(response["Location"]).json()
    assert done["status"] == "succeeded" and done["finished"] and done["progress"] == 1.0 and done["summary"]
    assert client.get(f"{BASE}/test-sets/{test_set.pk}/scoring/").json()["url"] == response["Location"]  # the latest


def test_a_failed_scoring_run_reports_its_error_and_is_read_through_its_test_set(organizer, test_set):
    from evaluation.campaigns.services.imports import import_test_set

    other = import_test_set("DSTC9 Track 1", "other", DSTC9 / "labels.json", DSTC9 / "knowledge.json")
    run = ObjectiveScoringRun.objects.create(
        test_set=test_set, status=RunStatus.FAILED, error="entry team3/entry0 has no outputs.json"
    )
    client = client_for(organizer)
    body = client.get(f"{BASE}/test-sets/{test_set.pk}/scoring/{run.pk}/").json()
    assert (body["status"], body["finished"], body["error"]) == ("failed", True, "entry team3/entry0 has no outputs.json")
    assert client.get(f"{BASE}/test-sets/{other.pk}/scoring/{run.pk}/").status_code == 404
    assert client.get(f"{BASE}/test-sets/{test_set.pk}/scoring/{run.pk + 1}/").status_code == 404


def test_a_pairwise_report_request_names_its_computation_and_then_the_ranking(
    organizer, make_annotator, django_capture_on_commit_callbacks
):
    client = client_for(organizer)
    job = pairwise_job(4)
    vote(job, make_annotator("rater")[1], 12)
    with django_capture_on_commit_callbacks() as queued:
        response = client.post(f"{BASE}/pairwise/{job.pk}/")
    waiting = followed(client, response)
    assert (waiting["status"], waiting["finished"], waiting["ranking_url"]) == ("pending", False, None)
    assert waiting["id"] == response.json()["under_way"]["id"]
    for callback in queued:
        callback()
    done = client.get(response["Location"]).json()
    assert done["status"] == "succeeded" and done["finished"] and done["votes"] == 12
    ranking = client.get(done["ranking_url"])
    assert ranking.status_code == 200 and ranking.json()["votes"] == 12


def test_a_failed_pairwise_report_reports_its_error(organizer):
    job = pairwise_job(1)
    report = PairwiseReport.objects.create(
        job=job, status=RunStatus.FAILED, error="The votes cannot be ranked yet: one system only."
    )
    body = client_for(organizer).get(f"{BASE}/pairwise/{job.pk}/reports/{report.pk}/").json()
    assert (body["status"], body["finished"], body["ranking_url"]) == ("failed", True, None)
    assert body["error"] == "The votes cannot be ranked yet: one system only."
    other = pairwise_job(1, name="other pairs")
    assert client_for(organizer).get(f"{BASE}/pairwise/{other.pk}/reports/{report.pk}/").status_code == 404


def test_computing_results_names_the_campaign_whose_results_turn_current(organizer, campaign, django_capture_on_commit_callbacks):
    client = client_for(organizer)
    with django_capture_on_commit_callbacks() as queued:
        response = client.post(f"{BASE}/campaigns/{campaign.pk}/results/")
    waiting = followed(client, response)
    assert response["Location"].endswith(f"{BASE}/campaigns/{campaign.pk}/")
    assert waiting["results"] == "none" and waiting["inputs_version"] == response.json()["inputs_version"]
    for callback in queued:
        callback()
    assert client.get(response["Location"]).json()["results"] == "current"
    ready = client.post(f"{BASE}/campaigns/{campaign.pk}/results/")
    assert ready.status_code == 200 and not ready.has_header("Location")


def test_a_campaigns_runs_are_listed_newest_first_a_page_at_a_time(organizer, test_set):
    campaign = create_campaign("past", test_set, [])
    other = create_campaign("other", test_set, [])
    now = timezone.now()
    runs = []
    for age, kind in enumerate(["plan", "human_eval_import", "plan"]):
        run = CampaignRun.objects.create(campaign=campaign, kind=kind)
        CampaignRun.objects.filter(pk=run.pk).update(created_at=now - timedelta(minutes=age))  # runs[0] is the newest
        runs.append(run)
    CampaignRun.objects.create(campaign=other, kind="plan")
    client = client_for(organizer)
    listed = client.get(f"{BASE}/campaigns/{campaign.pk}/runs/").json()
    assert listed["count"] == 3 and [r["id"] for r in listed["results"]] == [r.pk for r in runs]
    assert listed["results"][0]["url"].endswith(f"/campaigns/{campaign.pk}/runs/{runs[0].pk}/")
    first = client.get(f"{BASE}/campaigns/{campaign.pk}/runs/?limit=2").json()
    assert [r["id"] for r in first["results"]] == [runs[0].pk, runs[1].pk] and first["next"]
    second = client.get(first["next"]).json()
    assert [r["id"] for r in second["results"]] == [runs[2].pk] and second["next"] is None
    assert client.get(f"{BASE}/campaigns/{campaign.pk}/runs/?limit=0").status_code == 400
    assert client.get(f"{BASE}/campaigns/987654/runs/").status_code == 404


def test_the_runs_list_and_the_new_run_routes_answer_as_the_single_run_does(
    organizer, django_user_model, make_annotator, test_set
):
    from quorum.roles import make_organizer

    colleague = django_user_model.objects.create_user("carl")
    make_organizer(colleague)
    campaign = create_campaign("past", test_set, [])
    run = CampaignRun.objects.create(campaign=campaign, kind="plan", created_by=colleague)
    scoring = ObjectiveScoringRun.objects.create(test_set=test_set, created_by=colleague)
    job = pairwise_job(1)
    report = PairwiseReport.objects.create(job=job, created_by=colleague)
    paths = [
        f"{BASE}/campaigns/{campaign.pk}/runs/{run.pk}/",
        f"{BASE}/campaigns/{campaign.pk}/runs/",
        f"{BASE}/test-sets/{test_set.pk}/scoring/{scoring.pk}/",
        f"{BASE}/pairwise/{job.pk}/reports/{report.pk}/",
    ]
    annotator, anonymous = client_for(make_annotator("ann")[0]), client_for()
    for path in paths:
        assert client_for(organizer).get(path).status_code == 200, path  # another organizer's run: every organizer sees it
        assert annotator.get(path).status_code == 403, path
        assert anonymous.get(path).status_code == 401, path
    listed = client_for(organizer).get(paths[1]).json()
    assert [r["id"] for r in listed["results"]] == [run.pk]
