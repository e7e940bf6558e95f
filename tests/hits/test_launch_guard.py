"""A crowd job goes live only within its budget, whichever path launches it (annotation's extensions.launch_checks)."""
from decimal import Decimal as D

import pytest

from annotation.extensions import launch_checks
from annotation.models import Job
from annotation.services.jobs import JobError, launch_job
from hits.models import JobCrowdConfig, Posting
from hits.services.config import configure_crowd
from hits.services.postings import BudgetExceeded, launch_budget_check, launch_crowd_job


def _nothing_changed(job):
    job.refresh_from_db()
    assert job.state == Job.State.DRAFT and job.launched_at is None
    assert not Posting.objects.filter(job=job).exists()
    assert JobCrowdConfig.objects.get(job=job).committed == D("0.00")


def test_hits_registers_its_check():
    assert launch_checks["hits.budget"] is launch_budget_check


def test_plain_launch_over_budget_is_refused_before_going_live(job_factory):
    job = job_factory(turns=20, redundancy=3, reward="0.50")
    configure_crowd(job, provider="mturk", budget="35.99")  # the job costs 36.00 with fees
    with pytest.raises(JobError, match="36.00 USD with fees") as refused:
        launch_job(job)
    assert refused.value.field == "state"
    _nothing_changed(job)


def test_plain_launch_of_a_paid_crowd_without_budget_is_refused(job_factory):
    job = job_factory()
    configure_crowd(job, provider="prolific")
    with pytest.raises(JobError, match="set a budget"):
        launch_job(job)
    _nothing_changed(job)


def test_plain_launch_within_budget_reserves_in_the_same_transaction_and_posts(
    job_factory, fake_mturk, django_capture_on_commit_callbacks, settings
):
    settings.QUORUM_MTURK_CONCURRENCY = 1  # the test's transaction is not visible to the posting threads
    job = job_factory(turns=4, redundancy=1, reward="0.50")
    configure_crowd(job, provider="mturk", budget="2.40", assignments_per_posting=2)
    with django_capture_on_commit_callbacks(execute=True):
        launch_job(job)
    job.refresh_from_db()
    assert job.state == Job.State.LIVE
    assert JobCrowdConfig.objects.get(job=job).committed == D("2.40")
    # The launch signal's task posted what the check reserved (tasks run eagerly in tests).
    assert sorted(Posting.objects.filter(job=job).values_list("state", flat=True)) == ["created", "created"]
    assert len(fake_mturk.hits) == 2


def test_crowd_launch_path_still_says_budget_and_reserves_once(job_factory, fake_mturk):
    job = job_factory(turns=3, reward="0.50")
    configure_crowd(job, provider="mturk", budget="1.79")
    with pytest.raises(BudgetExceeded):
        launch_crowd_job(job)
    _nothing_changed(job)
    configure_crowd(job, budget="1.80")
    launch_crowd_job(job)
    assert JobCrowdConfig.objects.get(job=job).committed == D("1.80")  # the check found nothing more to reserve


def test_in_house_jobs_launch_without_a_budget(job_factory):
    plain = job_factory(name="no crowd settings")
    inhouse = job_factory(name="in-house settings")
    configure_crowd(inhouse, provider="inhouse")
    for job in (plain, inhouse):
        launch_job(job)
        job.refresh_from_db()
        assert job.state == Job.State.LIVE


def test_organizer_launch_button_shows_the_budget_reason(job_factory, organizer, client, settings):
    settings.ROOT_URLCONF = "quorum.urls"
    job = job_factory(turns=20, redundancy=3, reward="0.50")
    configure_crowd(job, provider="mturk", budget="10")
    client.force_login(organizer)
    page = client.post(f"/organize/jobs/{job.pk}/launch/", follow=True)
    assert "budget of 10.00 USD" in page.content.decode()
    _nothing_changed(job)
