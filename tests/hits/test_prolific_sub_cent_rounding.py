"""Fractions of a cent against Prolific's. Prolific states its fees in hundredths of a cent ("Set up
bonuses": fees 283.34 cents on 850) without saying how it rounds them, so Quorum's budget must hold the
largest charge those roundings give: a budget that only fits the fee rounded half up to the cent is
refused, and what the local fake charges (per participant, half up to the hundredth of a cent) never
passes what Quorum reserved. A bonus is sent in whole cents, a fraction of a cent is refused, and the
organizer is told what each bonus is charged with fees."""
from decimal import ROUND_CEILING, ROUND_HALF_UP, Decimal

import pytest
from rest_framework.test import APIClient

from hits.models import JobCrowdConfig, Payment, Posting
from hits.providers.prolific import fees
from hits.services.confirmation import confirm_assignment
from hits.services.entry import arrive
from hits.services.payments import bonus_assignments
from hits.services.postings import post_job
from tests.hits.conftest import ANSWERS
from tests.hits.contract import submit_response

D = Decimal
HUNDREDTH = D("0.01")  # of a cent


@pytest.fixture
def api(organizer):
    client = APIClient()
    client.force_authenticate(organizer)
    return client


def _prolific_job(api, job_factory, *, places, reward, budget):
    job = job_factory(turns=places, reward=reward)
    answer = api.put(
        f"/api/crowd/jobs/{job.pk}/",
        {"provider": "prolific", "budget": budget, "prolific_fee_rate": "0.3333", "minutes_per_assignment": "1"},
        format="json",
    )
    assert answer.status_code == 200, answer.json()
    return job


def _committed_cents(job) -> Decimal:
    return JobCrowdConfig.objects.get(job=job).committed * 100


def test_a_budget_that_fits_only_the_fee_rounded_half_up_is_refused(api, job_factory, fake_prolific):
    # 7 places at $0.10 and 33.33%: $0.70 + $0.23331. Half up that is $0.93, and Prolific takes 93.31 cents.
    job = _prolific_job(api, job_factory, places=7, reward="0.10", budget="0.93")
    refused = api.post(f"/api/crowd/jobs/{job.pk}/launch/")
    assert refused.status_code == 409, refused.json()
    assert "costs 0.94 USD with fees" in refused.json()["detail"]
    assert not Posting.objects.filter(job=job).exists() and JobCrowdConfig.objects.get(job=job).committed == 0
    assert fake_prolific.studies == {} and fake_prolific.charges == []

    assert api.put(f"/api/crowd/jobs/{job.pk}/", {"budget": "0.94"}, format="json").status_code == 200
    assert api.post(f"/api/crowd/jobs/{job.pk}/launch/").status_code == 202
    post_job(job, concurrency=1)
    (study,) = fake_prolific.studies.values()
    assert study["reward"] == 10  # whole cents, as Prolific takes a study's reward
    assert fake_prolific.charged_cents() == D("93.31") <= _committed_cents(job) == 94


def test_prolific_rounding_each_participants_fee_up_is_within_the_budget(api, job_factory, fake_prolific):
    # 3 places at $0.50: 33.33% of $1.50 is 49.995 cents, half up $0.50; Prolific states 3 x 16.67 = 50.01.
    job = _prolific_job(api, job_factory, places=3, reward="0.50", budget="2.00")
    assert api.post(f"/api/crowd/jobs/{job.pk}/launch/").status_code == 409
    assert fake_prolific.charges == []
    assert api.put(f"/api/crowd/jobs/{job.pk}/", {"budget": "2.01"}, format="json").status_code == 200
    assert api.post(f"/api/crowd/jobs/{job.pk}/launch/").status_code == 202
    post_job(job, concurrency=1)
    assert fake_prolific.charged_cents() == D("200.01") <= _committed_cents(job) == 201


def _submitted(job, fake_prolific, pid="P1"):
    study = Posting.objects.get(job=job).external_id
    session = fake_prolific.start_submission(study, pid)
    arrival = arrive(provider_key="prolific", job=job, params={"PROLIFIC_PID": pid, "STUDY_ID": study, "SESSION_ID": session})
    submit_response(slot_id=arrival.slot.pk, worker=arrival.assignment.worker, answers=ANSWERS)
    fake_prolific.complete(session)
    confirm_assignment(arrival.assignment.pk)
    return arrival.assignment


@pytest.fixture
def launched(api, job_factory, fake_prolific):
    job = _prolific_job(api, job_factory, places=1, reward="0.50", budget="5")
    assert api.post(f"/api/crowd/jobs/{job.pk}/launch/").status_code == 202
    post_job(job, concurrency=1)
    job.refresh_from_db()  # live now
    return job, _submitted(job, fake_prolific)


def test_a_bonus_is_sent_in_whole_cents_and_the_api_says_what_it_is_charged(api, launched, fake_prolific):
    job, assignment = launched
    before = _committed_cents(job)
    # $0.10 and 33.33% of it: 3.333 cents of fee. Half up the budget would hold 13 cents for Prolific's 13.33.
    answer = api.post(
        f"/api/crowd/jobs/{job.pk}/bonus/",
        {"bonuses": [{"assignment": assignment.pk, "amount": "0.10", "reason": "Careful work"}]}, format="json",
    )
    assert answer.status_code == 200
    (result,) = answer.json()["results"]
    assert result["ok"] and (result["amount"], result["charged"]) == ("0.10", "0.14")
    (bulk,) = fake_prolific.bulk_bonuses.values()
    assert bulk["rows"] == [("P1", D("0.10"))]
    charged = fake_prolific.charged_cents() - fake_prolific.charges[0][2]  # the bonus, after the study
    assert charged == D("13.33") <= _committed_cents(job) - before == 14


def test_a_bonus_with_a_fraction_of_a_cent_is_refused_and_nothing_is_sent(api, launched, fake_prolific):
    job, assignment = launched
    before = _committed_cents(job)
    (result,) = bonus_assignments([(assignment.pk, "0.125", "Careful work")])
    assert not result.ok and "whole cents" in result.error and "0.125" in result.error
    answer = api.post(
        f"/api/crowd/jobs/{job.pk}/bonus/",
        {"bonuses": [{"assignment": assignment.pk, "amount": "0.125", "reason": "Careful work"}]}, format="json",
    )
    assert answer.status_code == 400 and "decimal places" in str(answer.json())
    assert not Payment.objects.filter(kind="bonus").exists() and fake_prolific.bulk_bonuses == {}
    assert _committed_cents(job) == before


def test_the_page_says_what_a_bonus_is_charged(client, organizer, settings, launched, fake_prolific):
    settings.ROOT_URLCONF = "quorum.urls"
    client.force_login(organizer)
    job, assignment = launched
    data = {"assignments": [assignment.pk], "amount": "0.10", "reason": "Careful work"}
    page = client.post(f"/crowd/jobs/{job.pk}/bonus/", data, follow=True).content.decode()
    assert f"Assignment {assignment.pk}: paid a bonus of 0.10 USD, 0.14 USD with fees (confirmed)." in page


def _prolific_worst(cents_each: Decimal, places: int, fee_rate: Decimal, vat_rate: Decimal, rounding) -> Decimal:
    """What Prolific can charge as fee and VAT, in cents, rounding each participant's to the hundredth of a cent."""
    fee = (cents_each * fee_rate).quantize(HUNDREDTH, rounding=rounding)
    return places * (fee + (fee * vat_rate).quantize(HUNDREDTH, rounding=rounding))


@pytest.mark.parametrize(("fee_rate", "vat_rate"), [("0.3333", "0"), ("0.4286", "0"), ("0.3333", "0.2")])
def test_the_fee_quorum_reserves_is_never_below_what_prolific_can_charge(fee_rate, vat_rate):
    fee_rate, vat_rate = D(fee_rate), D(vat_rate)
    with_vat = fee_rate * (1 + vat_rate)  # the job's rate holds VAT (0.3333 with 20% is 0.39996)
    for cents_each in range(1, 400, 3):
        for places in range(1, 40):
            reserved = fees.study_fee(D(cents_each) / 100, places, with_vat) * 100
            for rounding in (ROUND_HALF_UP, ROUND_CEILING):
                assert reserved >= _prolific_worst(D(cents_each), places, fee_rate, vat_rate, rounding), (cents_each, places)
            assert reserved - places * fees.ROUNDING_ALLOWANCE * 100 < D(cents_each) * places * with_vat + 1  # within a cent


def test_no_share_is_no_fee_and_prolific_is_sent_whole_cents():
    assert fees.study_fee(D("0.50"), 10, 0) == D("0.00") and fees.fee(D("1.00"), D("0.3333")) == D("0.34")
    with pytest.raises(ValueError, match="whole number of cents"):
        fees.minor_units(D("0.125"))
    assert (fees.minor_units(D("0.50")), fees.decimal_text(D("4.25"))) == (50, "4.25")
