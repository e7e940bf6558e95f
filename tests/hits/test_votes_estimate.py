"""The crowd section's estimate covers the job's own slots; the votes on its responses are a job of their own
(own pay, crowd and budget). A builder reading the rewrite job's estimate is told what the votes will cost too,
on the page and in the API, instead of finding out after launching the votes."""
import pytest
from rest_framework.test import APIClient

from annotation.services.voting import enable_voting, vote_job_of


@pytest.fixture
def api(organizer):
    client = APIClient()
    client.force_authenticate(organizer)
    return client


def _crowd(api, job, **settings):
    answer = api.put(f"/api/crowd/jobs/{job.pk}/", {"minutes_per_assignment": "1", **settings}, format="json")
    assert answer.status_code == 200, answer.json()
    return answer.json()


def test_a_job_without_votes_says_nothing_of_them(api, job_factory):
    job = job_factory(turns=4, reward="0.50")
    assert _crowd(api, job, provider="mturk", budget="10")["votes"] is None


def test_the_votes_are_estimated_beside_the_jobs_own_cost_with_the_vote_jobs_crowd(api, job_factory, client, organizer, settings):
    settings.ROOT_URLCONF = "quorum.urls"  # the organizer pages live in the project's URLs
    job = job_factory(turns=4, redundancy=2, reward="0.50")
    enable_voting(job, votes_per_response=3, vote_reward=0.10)
    overview = _crowd(api, job, provider="mturk", budget="10")
    # 8 responses x 3 votes at $0.10; the vote job has no crowd settings (in-house, no fees).
    votes = overview["votes"]
    assert (votes["votes"], votes["responses"], votes["estimate"]["total"]) == (24, 8, "2.40")
    assert overview["estimate"]["total"] == "4.80"  # the job's own 8 x $0.50 + 20%, votes not in it
    assert "24 votes (8 responses x 3) at $0.10, $2.40 if every response is put to the vote" in votes["note"]
    assert "no crowd settings yet" in votes["note"]

    # Once the vote job is on Prolific, its fee is on the study's total: 24 x $0.10 = $2.40, 33.33% -> $0.81
    # with room for Prolific's rounding of each participant's fee (24 x 3.34 cents would be $0.8016).
    _crowd(api, vote_job_of(job), provider="prolific", budget="3", prolific_fee_rate="0.3333")
    votes = api.get(f"/api/crowd/jobs/{job.pk}/").json()["votes"]
    assert votes["estimate"]["total"] == "3.21"
    assert "$3.21 on Prolific with fees" in votes["note"] and "Its budget is its own ($3.00)." in votes["note"]

    client.force_login(organizer)
    page = client.get(f"/organize/jobs/{job.pk}/").content.decode()
    assert 'id="crowd-votes"' in page and "$3.21 on Prolific with fees" in page
    assert f'href="/organize/jobs/{vote_job_of(job).pk}/"' in page
