"""The organizer API for crowds: who may call it, the estimate before launch, refusal over budget,
and bulk settlement with a result per element."""
from urllib.parse import urlencode

import pytest
from django.test import TestCase
from rest_framework.test import APIClient

from hits.models import JobCrowdConfig, Posting, ProviderAssignment
from hits.services.confirmation import confirm_assignment
from tests.hits.conftest import ANSWERS
from tests.hits.contract import LONG_REJECTION, submit_response


@pytest.fixture
def api(organizer):
    client = APIClient()
    client.force_authenticate(organizer)
    return client


@pytest.mark.parametrize("who, expected", [("anonymous", {401, 403}), ("annotator", {403}), ("organizer", {200})])
def test_only_organizers_may_use_the_crowd_api(who, expected, job_factory, make_annotator, organizer):
    job = job_factory()
    client = APIClient()
    if who == "annotator":
        client.force_authenticate(make_annotator("ann")[0])
    elif who == "organizer":
        client.force_authenticate(organizer)
    for method, path in (("get", ""), ("put", ""), ("post", "launch/"), ("post", "settle/"), ("post", "bonus/")):
        response = getattr(client, method)(f"/api/crowd/jobs/{job.pk}/{path}", {}, format="json")
        if who == "organizer":
            assert response.status_code in {200, 202, 400, 409}, (method, path, response.status_code)
        else:
            assert response.status_code in expected, (method, path)


def test_estimate_shows_fees_hourly_pay_and_launch_over_budget_is_409(api, job_factory):
    job = job_factory(turns=10, redundancy=3, reward="0.50")
    response = api.put(
        f"/api/crowd/jobs/{job.pk}/",
        {"provider": "mturk", "budget": "17.99", "minutes_per_assignment": "2", "assignments_per_posting": 9},
        format="json",
    )
    assert response.status_code == 200
    estimate = response.json()["estimate"]
    assert estimate == {
        "provider": "mturk", "assignments": 30, "postings": 4, "rewards": "15.00", "fees": "3.00", "total": "18.00",
        "hourly_pay": "15.00",
    }
    refused = api.post(f"/api/crowd/jobs/{job.pk}/launch/")
    assert refused.status_code == 409 and "18.00" in refused.json()["detail"]
    assert not Posting.objects.filter(job=job).exists()


def test_bad_settings_are_a_400_with_reasons(api, job_factory):
    job = job_factory()
    response = api.put(
        f"/api/crowd/jobs/{job.pk}/", {"provider": "mturk", "requirements": {"min_approval_rate": 150}}, format="json"
    )
    assert response.status_code == 400 and "requirements.min_approval_rate" in response.json()["errors"]


@pytest.mark.parametrize(
    "body, field",
    [
        ({"provider": "prolific", "budget": "5", "prolific_fee_rate": "1.5"}, "prolific_fee_rate"),
        ({"provider": "prolific", "budget": "5", "prolific_fee_rate": "0.12345"}, "prolific_fee_rate"),
        ({"provider": "mturk", "budget": "5", "auto_approval_days": 31}, "auto_approval_days"),
        ({"provider": "mturk", "budget": "-1"}, "budget"),
        ({"provider": "mturk", "budget": "5", "title": "t" * 201}, "title"),
    ],
)
def test_provider_options_and_shared_settings_are_checked_once_by_the_service(api, job_factory, body, field):
    job = job_factory()
    response = api.put(f"/api/crowd/jobs/{job.pk}/", body, format="json")
    assert response.status_code == 400 and list(response.json()["errors"]) == [field], response.json()
    assert not JobCrowdConfig.objects.filter(job=job).exists()


def test_provider_options_are_stored_with_the_crowd_settings_and_shown_back(api, job_factory):
    job = job_factory(turns=10, redundancy=1, reward="1.00")
    response = api.put(
        f"/api/crowd/jobs/{job.pk}/", {"provider": "prolific", "budget": "50", "prolific_fee_rate": "0.4286"}, format="json"
    )
    assert response.status_code == 200
    body = response.json()
    assert body["provider_options"] == {"prolific_fee_rate": "0.4286"} and body["prolific_fee_rate"] == "0.4286"
    assert body["estimate"]["fees"] == "4.29"  # 42.86% of the study's 10.00, the job's own rate
    config = JobCrowdConfig.objects.get(job=job)
    assert config.provider_options == {"prolific_fee_rate": "0.4286", "sandbox": True}  # every provider's, defaults filled
    moved = api.put(f"/api/crowd/jobs/{job.pk}/", {"provider": "mturk", "sandbox": False}, format="json").json()
    assert moved["sandbox"] is False and "prolific_fee_rate" not in moved
    assert JobCrowdConfig.objects.get(job=job).provider_options["prolific_fee_rate"] == "0.4286"  # kept for a move back


def test_the_schema_documents_every_provider_setting_from_its_options(api, settings):
    settings.ROOT_URLCONF = "quorum.urls"  # the schema lives in the project's URLs
    schema = api.get("/api/schema/?format=json").json()
    body = schema["components"]["schemas"]["CrowdConfig"]["properties"]
    assert body["sandbox"]["type"] == "boolean" and "sandbox" in body["sandbox"]["description"]
    assert "Prolific's service fee" in body["prolific_fee_rate"]["description"]
    assert "min_approval_rate" in body["requirements"]["description"]


def test_bulk_settle_and_bonus_return_a_result_per_element(api, fake_mturk, job_factory, client, work_tokens):
    job = job_factory(turns=2)
    assert api.put(f"/api/crowd/jobs/{job.pk}/", {"provider": "mturk", "budget": "10", "assignments_per_posting": 2},
                   format="json").status_code == 200
    with TestCase.captureOnCommitCallbacks(execute=True):  # launch posts after commit, in a task
        assert api.post(f"/api/crowd/jobs/{job.pk}/launch/").status_code == 202
    hit = Posting.objects.get(job=job).external_id
    ids = []
    for worker in ("A1API0001", "A1API0002"):
        assignment_id = fake_mturk.accept(hit, worker)
        client.get(f"/crowd/mturk/{job.pk}/?" + urlencode(
            {"assignmentId": assignment_id, "hitId": hit, "workerId": worker, "turkSubmitTo": "https://www.mturk.com"}))
        assignment = ProviderAssignment.objects.get(external_id=assignment_id)
        submit_response(slot_id=assignment.slot_id, worker=assignment.worker, answers=ANSWERS)
        fake_mturk.submit(assignment_id)
        confirm_assignment(assignment.pk)  # what the prompt task or the reconciler does
        ids.append(assignment.pk)

    response = api.post(f"/api/crowd/jobs/{job.pk}/settle/",
                        {"action": "reject", "assignments": [ids[0], 424242], "message": LONG_REJECTION}, format="json")
    body = response.json()
    assert response.status_code == 200 and (body["ok"], body["failed"]) == (1, 1)
    assert [r["ok"] for r in body["results"]] == [True, False]

    response = api.post(f"/api/crowd/jobs/{job.pk}/bonus/",
                        {"bonuses": [{"assignment": ids[1], "amount": "0.20", "reason": "Fast and careful"},
                                     {"assignment": 424242, "amount": "0.20", "reason": "x"}]}, format="json")
    assert [r["ok"] for r in response.json()["results"]] == [True, False]
    assert fake_mturk.bonuses_per_assignment()[ProviderAssignment.objects.get(pk=ids[1]).external_id] == 1

    overview = api.get(f"/api/crowd/jobs/{job.pk}/").json()
    assert overview["assignments"]["rejected"]["n"] == 1 and overview["payments"]["bonus"]["confirmed"]["n"] == 1
    listing = api.get(f"/api/crowd/jobs/{job.pk}/assignments/").json()["results"]
    assert {row["state"] for row in listing} == {"rejected", "submitted"}
