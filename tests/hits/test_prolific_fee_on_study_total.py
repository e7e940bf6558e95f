"""Prolific charges its service fee on a study's total reward (its API's "Calculate the study cost" takes
the reward and the places), not on each place rounded to the cent and multiplied. What the builder reads
before launch, what a launch reserves against the budget and what is reported spent follow that rule,
rounded up to the cent with room for Prolific's own rounding in hundredths of a cent (fees.py;
test_prolific_sub_cent_rounding.py holds them against what the fake charges)."""
from decimal import Decimal as D

import pytest
from rest_framework.test import APIClient

from hits.models import JobCrowdConfig, Posting
from hits.services.confirmation import confirm_assignment
from hits.services.entry import arrive
from hits.services.payments import approve_assignments
from hits.services.postings import post_job
from tests.hits.conftest import ANSWERS
from tests.hits.contract import submit_response


@pytest.fixture
def api(organizer):
    client = APIClient()
    client.force_authenticate(organizer)
    return client


def _prolific_job(api, job_factory, *, places, reward, budget, fee_rate="0.3333"):
    job = job_factory(turns=places, reward=reward)
    answer = api.put(
        f"/api/crowd/jobs/{job.pk}/",
        {"provider": "prolific", "budget": budget, "prolific_fee_rate": fee_rate, "minutes_per_assignment": "1"},
        format="json",
    )
    assert answer.status_code == 200, answer.json()
    return job, answer.json()


def test_the_estimate_takes_the_fee_on_the_studys_total(api, job_factory):
    # 7 places at $0.10: $0.70 of rewards, 33.33% of it is $0.2333 -> $0.24 up to the cent (per place: 7 x $0.03 = $0.21).
    _job, overview = _prolific_job(api, job_factory, places=7, reward="0.10", budget="5")
    assert overview["estimate"]["fees"] == "0.24" and overview["estimate"]["total"] == "0.94"


def test_a_launch_that_prolific_would_charge_beyond_the_budget_is_refused(api, job_factory, fake_prolific):
    job, _overview = _prolific_job(api, job_factory, places=7, reward="0.10", budget="0.92")
    refused = api.post(f"/api/crowd/jobs/{job.pk}/launch/")
    assert refused.status_code == 409 and "0.94" in refused.json()["detail"]
    assert not Posting.objects.filter(job=job).exists() and JobCrowdConfig.objects.get(job=job).committed == 0
    assert fake_prolific.studies == {}


def test_what_is_spent_takes_the_fee_on_each_studys_approved_total(api, job_factory, fake_prolific):
    # Three approved places at $0.40 in one study: $1.20, and 33.33% of it is $0.39996 -> $0.41 at most with
    # Prolific's rounding (per place rounded to the cent: 3 x $0.14 = $0.42).
    job, _overview = _prolific_job(api, job_factory, places=3, reward="0.40", budget="10")
    assert api.post(f"/api/crowd/jobs/{job.pk}/launch/").status_code == 202
    post_job(job, concurrency=1)
    job.refresh_from_db()
    study = Posting.objects.get(job=job).external_id
    assert JobCrowdConfig.objects.get(job=job).committed == D("1.61")  # $1.20 + $0.41
    for pid in ("P1", "P2", "P3"):
        session = fake_prolific.start_submission(study, pid)
        arrival = arrive(provider_key="prolific", job=job, params={"PROLIFIC_PID": pid, "STUDY_ID": study, "SESSION_ID": session})
        submit_response(slot_id=arrival.slot.pk, worker=arrival.assignment.worker, answers=ANSWERS)
        fake_prolific.complete(session)
        confirm_assignment(arrival.assignment.pk)
        assert approve_assignments([arrival.assignment.pk])[0].ok
    spent = api.get(f"/api/crowd/jobs/{job.pk}/").json()["spent"]
    assert spent == {"approved": 3, "rewards": "1.20", "bonuses": "0.00", "fees": "0.41", "total": "1.61"}
