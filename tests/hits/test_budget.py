"""Money is capped: what is posted or paid, fees included, never exceeds the job's budget."""
import threading
from decimal import Decimal as D

import pytest
from django.db import IntegrityError, connection, transaction

from annotation.models import Job
from hits.models import JobCrowdConfig, Payment, Posting, ProviderAssignment
from hits.selectors.crowd import estimate_for_job
from hits.services.config import CrowdConfigError, configure_crowd
from hits.services.payments import approve_assignments, execute_payment, reject_assignments
from hits.services.postings import BudgetExceeded, launch_crowd_job, reserve_postings
from tests.hits.contract import LONG_REJECTION
from tests.hits.test_crowd_pages import submitted  # noqa: F401 - a fixture: an MTurk job with three submitted assignments


def test_estimate_before_launch_shows_fees_and_hourly_pay(job_factory):
    job = job_factory(turns=20, redundancy=3, reward="0.50")
    configure_crowd(job, provider="mturk", budget="100", minutes_per_assignment="1.5", assignments_per_posting=9)
    est = estimate_for_job(job)
    # 60 assignments at 0.50 + 0.10 fee
    assert (est.assignments, est.postings, est.total, est.fees, est.hourly_pay) == (60, 7, D("36.00"), D("6.00"), D("20.00"))


def test_launch_beyond_budget_is_refused_and_changes_nothing(job_factory):
    job = job_factory(turns=20, redundancy=3, reward="0.50")
    configure_crowd(job, provider="mturk", budget="35.99")  # the job costs 36.00 with fees
    with pytest.raises(BudgetExceeded, match="36.00"):
        launch_crowd_job(job)
    job.refresh_from_db()
    assert job.state == Job.State.DRAFT
    assert not Posting.objects.filter(job=job).exists()
    assert JobCrowdConfig.objects.get(job=job).committed == 0


def test_launch_within_budget_commits_the_cost(job_factory):
    job = job_factory(turns=20, redundancy=3, reward="0.50")
    configure_crowd(job, provider="mturk", budget="36.00")
    launch_crowd_job(job)
    job.refresh_from_db()
    config = JobCrowdConfig.objects.get(job=job)
    assert job.state == Job.State.LIVE
    assert config.committed == D("36.00")
    assert sum(p.committed_cost for p in Posting.objects.filter(job=job)) == D("36.00")
    assert sorted(p.assignments for p in Posting.objects.filter(job=job)) == [6, 9, 9, 9, 9, 9, 9]


def test_paid_crowd_needs_a_budget(job_factory):
    job = job_factory()
    configure_crowd(job, provider="prolific")
    with pytest.raises(BudgetExceeded, match="set a budget"):
        reserve_postings(job)


def test_the_database_refuses_committed_spend_above_budget(job_factory):
    job = job_factory()
    config = configure_crowd(job, provider="mturk", budget="1.00")
    config.committed = D("1.01")
    with pytest.raises(IntegrityError), transaction.atomic():
        config.save()


def test_budget_cannot_drop_below_what_is_committed(job_factory):
    job = job_factory(turns=3)
    configure_crowd(job, provider="mturk", budget="10")
    reserve_postings(job)
    with pytest.raises(CrowdConfigError, match="already committed"):
        configure_crowd(job, budget="0.50")


def test_request_tokens_are_unique_and_fit_mturk(job_factory):
    job = job_factory(turns=30)
    configure_crowd(job, provider="mturk", budget="100", assignments_per_posting=1)
    postings = reserve_postings(job)
    tokens = [p.request_token for p in postings]
    assert len(set(tokens)) == 30 and all(len(t) <= 64 for t in tokens)
    assert reserve_postings(job) == []  # every slot is carried: nothing more to post


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_launches_and_recollections_never_exceed_budget():
    from tests.hits.conftest import make_job

    job = make_job(turns=1, reward="0.50")
    # Each request posts 10 assignments in HITs of 9 + 1: 10 x 0.60 = 6.00. The budget fits 5.
    configure_crowd(job, provider="mturk", budget="30.00", assignments_per_posting=9)
    outcomes, barrier = [], threading.Barrier(12)

    def recollect():
        try:
            barrier.wait()
            reserve_postings(Job.objects.get(pk=job.pk), assignments=10)
            outcomes.append("posted")
        except BudgetExceeded:
            outcomes.append("refused")
        finally:
            connection.close()

    threads = [threading.Thread(target=recollect) for _ in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    config = JobCrowdConfig.objects.get(job=job)
    posted_cost = sum(p.committed_cost for p in Posting.objects.filter(job=job))
    assert outcomes.count("posted") == 5 and outcomes.count("refused") == 7
    assert config.committed == posted_cost == D("30.00")
    assert Posting.objects.filter(job=job).values("seq").distinct().count() == Posting.objects.filter(job=job).count()


def test_a_rejected_assignment_gives_its_place_back_to_the_budget_once(submitted):  # noqa: F811
    """Rejected work is never paid: its reward and fee are released from the committed spend, once,
    however often the rejection is sent; approved work keeps its share."""
    job, (a, b, _c) = submitted
    config = JobCrowdConfig.objects.get(job=job)
    assert config.committed == D("1.80")  # three places at 0.50 + 20%
    assert reject_assignments([b.pk], LONG_REJECTION)[0].ok
    approve_assignments([a.pk])
    config.refresh_from_db()
    assert config.committed == D("1.20")  # b's 0.60 is back; a's stays spent
    again = reject_assignments([b.pk], LONG_REJECTION)  # refused as already settled: nothing more released
    execute_payment(Payment.objects.get(assignment=b, kind=Payment.Kind.REJECT).pk)  # a repeated call of the confirmed one
    config.refresh_from_db()
    assert config.committed == D("1.20") and ProviderAssignment.objects.get(pk=b.pk).state == "rejected"
    assert len(again) == 1
