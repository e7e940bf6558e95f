"""A crowd launch and a reconciliation keep no run of their own: their 202 names, in Location, the
job's crowd overview, the resource whose postings, assignments and payments they change; a posting
the provider refused is shown there with its reason."""

from decimal import Decimal

import pytest
from django.test import TestCase
from rest_framework.test import APIClient

from hits.models import Posting
from tests.api_follow import followed

pytestmark = pytest.mark.django_db


def test_a_launch_names_the_crowd_overview_whose_postings_it_makes(organizer_api, job_factory):
    job = job_factory(turns=2)
    with TestCase.captureOnCommitCallbacks() as queued:
        response = organizer_api.post(f"/api/crowd/jobs/{job.pk}/launch/")
    before = followed(organizer_api, response)
    location = response["Location"]
    assert location.endswith(f"/api/crowd/jobs/{job.pk}/")
    assert set(before["postings"]) == {"intended"} and before["failed_postings"] == []
    with TestCase.captureOnCommitCallbacks(execute=True):
        for callback in queued:  # the provider calls, after commit
            callback()
    after = organizer_api.get(location).json()
    assert "intended" not in after["postings"] and set(after["postings"]) == {"created"}


def test_a_posting_the_provider_refused_shows_its_reason_where_the_launch_points(organizer_api, job_factory):
    job = job_factory()
    with TestCase.captureOnCommitCallbacks(execute=True):
        launched = organizer_api.post(f"/api/crowd/jobs/{job.pk}/launch/")
    followed(organizer_api, launched)
    Posting.objects.create(
        job=job,
        provider="mturk",
        seq=99,
        request_token="refused-99",
        state=Posting.State.FAILED,
        assignments=1,
        reward=Decimal("0.50"),
        committed_cost=Decimal("0.60"),
        error="MTurk refused the HIT: the reward is below the minimum.",
    )
    overview = organizer_api.get(launched["Location"]).json()
    assert overview["failed_postings"] == [{"seq": 99, "error": "MTurk refused the HIT: the reward is below the minimum."}]


def test_a_reconciliation_names_the_crowd_overview_and_is_for_organizers_only(organizer_api, job_factory, make_annotator):
    job = job_factory()
    with TestCase.captureOnCommitCallbacks() as queued:
        response = organizer_api.post(f"/api/crowd/jobs/{job.pk}/reconcile/")
    overview = followed(organizer_api, response)
    location = response["Location"]
    assert location.endswith(f"/api/crowd/jobs/{job.pk}/") and overview["provider"]
    assert len(queued) == 1
    annotator = APIClient()
    annotator.force_authenticate(make_annotator("ann")[0])
    assert annotator.post(f"/api/crowd/jobs/{job.pk}/reconcile/").status_code == 403
    assert annotator.get(location).status_code == 403
    assert organizer_api.post("/api/crowd/jobs/987654/reconcile/").status_code == 404
