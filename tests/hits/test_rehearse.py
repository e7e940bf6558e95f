"""`manage.py rehearse`: a job's whole crowd path against a local fake, with workers over real HTTP."""
from decimal import Decimal as D
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Job, Response, Worker
from hits.fakes.workers import LeftLocalNetwork, SimulatedCrowdWorker
from hits.models import JobCrowdConfig, Payment, Posting, ProviderAssignment
from hits.services.config import configure_crowd
from hits.services.rehearsal import rehearse
from tests.hits.conftest import make_job

pytestmark = pytest.mark.django_db(transaction=True)  # the app serves the workers from another thread


@pytest.fixture
def small_job(settings, transactional_db):
    settings.ROOT_URLCONF = "quorum.urls"  # the real task pages, not the hits tests' stand-ins
    settings.QUORUM_MTURK_LIVE = False
    job = make_job(turns=3, redundancy=1, reward="0.50", name="rehearsed job")
    configure_crowd(job, provider="mturk", budget="5.00", assignments_per_posting=2, minutes_per_assignment="1.5")
    return job


def _untouched(job):
    job.refresh_from_db()
    assert job.state == Job.State.DRAFT
    assert not Posting.objects.filter(job=job).exists()
    assert JobCrowdConfig.objects.get(job=job).committed == D("0.00")


@pytest.mark.parametrize("provider", ["mturk", "prolific"])
def test_rehearsal_posts_serves_submits_and_pays_on_a_copy(small_job, provider):
    report = rehearse(small_job, provider, workers=2, keep=True)
    copy = Job.objects.get(pk=report.copy_id)

    # The workers came in through the entry URL, saved their answers, and were sent back to the fake.
    assert [w.ok for w in report.workers] == [True, True], [w.error for w in report.workers]
    assert report.sent_back == 2
    assert Response.objects.filter(item__job=copy).count() == report.submissions == 2
    # Reconciled and approved: each submission paid once, and spend within the budget.
    assert report.assignments == {"approved": 2}
    assert Payment.objects.filter(assignment__posting__job=copy, kind="approve", state="confirmed").count() == 2
    # Three places at 0.50: MTurk's 20% on each (3 x 0.60), Prolific's 33.33% on the study's 1.50 (0.49995,
    # which Prolific may state as 3 x 16.67 cents -> 0.51, up to the cent).
    reserved = D("1.80") if provider == "mturk" else D("2.01")
    assert report.committed == reserved and report.within_budget
    assert set(report.postings) == {"closed"}
    assert copy.state == Job.State.FINISHED and JobCrowdConfig.objects.get(job=copy).rehearsal
    _untouched(small_job)


def test_command_prints_the_summary_and_deletes_the_copy(small_job):
    out = StringIO()
    jobs_before = Job.objects.count()
    call_command("rehearse", small_job.pk, "--provider", "mturk", "--workers", "2", stdout=out)
    text = out.getvalue()
    assert "2 of 2 finished" in text
    assert "2 saved in Quorum, 2 sent back to the provider" in text
    assert "approve confirmed x2 (1.00 USD)" in text
    assert "1.80 USD committed of a 5.00 USD budget (within budget)" in text
    # Nothing of the rehearsal stays behind: no copy, no listings, no simulated workers.
    assert Job.objects.count() == jobs_before
    assert not ProviderAssignment.objects.exists() and not Posting.objects.exists()
    assert not Worker.objects.filter(external_id__istartswith="rehearsal").exists()
    _untouched(small_job)


def test_more_workers_than_slots_are_told_no_work_is_left(small_job):
    report = rehearse(small_job, "mturk", workers=4)
    assert sum(w.ok for w in report.workers) == 3
    assert "no assignment left" in report.workers[3].error  # the fake has no fourth place either


def test_refused_when_live_mturk_is_on(small_job, settings):
    settings.QUORUM_MTURK_LIVE = True
    jobs_before = Job.objects.count()
    with pytest.raises(CommandError, match="QUORUM_MTURK_LIVE"):
        call_command("rehearse", small_job.pk, "--provider", "prolific", stdout=StringIO())
    assert Job.objects.count() == jobs_before
    _untouched(small_job)


def test_over_budget_the_launch_is_refused_and_reported(small_job):
    configure_crowd(small_job, budget="1.00")  # 3 assignments cost 1.80 with fees
    out = StringIO()
    with pytest.raises(CommandError, match="problems"):
        call_command("rehearse", small_job.pk, "--provider", "mturk", stdout=out)
    assert "launch refused" in out.getvalue() and "budget" in out.getvalue()
    assert not Posting.objects.exists()
    _untouched(small_job)


def test_a_job_without_budget_cannot_be_rehearsed(small_job):
    configure_crowd(small_job, provider="inhouse", budget=None)
    with pytest.raises(CommandError, match="no crowd budget"):
        call_command("rehearse", small_job.pk, "--provider", "mturk", stdout=StringIO())


def test_simulated_worker_never_opens_a_real_address():
    worker = SimulatedCrowdWorker("A1", allowed_origins=["http://127.0.0.1:1"], provider_origin="http://127.0.0.1:2")
    with pytest.raises(LeftLocalNetwork, match="www.mturk.com"):
        worker._request("POST", "https://www.mturk.com/mturk/externalSubmit", data={"assignmentId": "X"})
