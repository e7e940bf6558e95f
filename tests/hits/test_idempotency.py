"""A retry after a crash between the intent row and the call never makes a second HIT or pays twice."""
from decimal import Decimal as D

import pytest
from django.utils import timezone

from annotation.models import Worker
from hits.models import Payment, Posting, ProviderAssignment
from hits.services.config import configure_crowd
from hits.services.payments import execute_payment, intend_bonus
from hits.services.postings import post_job, reserve_postings
from hits.services.reconcile import reconcile_job


def _crashed_after_create(fake_mturk, posting):
    """The HIT was made at MTurk with our token, then the process died before recording it."""
    from hits.services.postings import prepare_provider

    prepare_provider(posting.job)
    config = posting.job.crowd
    config.refresh_from_db()
    fake_mturk.provider.create_posting(posting, config)
    Posting.objects.filter(pk=posting.pk).update(attempts=1, attempted_at=timezone.now())


@pytest.mark.parametrize("id_in_message", [True, False])
def test_reconcile_after_a_crash_mid_posting_makes_no_second_hit(fake_mturk, job_factory, id_in_message):
    fake_mturk.id_in_duplicate_message = id_in_message
    job = job_factory(turns=6)
    configure_crowd(job, provider="mturk", budget="20", assignments_per_posting=1)
    postings = reserve_postings(job)
    for posting in postings[:4]:  # four calls reached MTurk, two did not
        _crashed_after_create(fake_mturk, posting)
    assert len(fake_mturk.hits) == 4

    summary = reconcile_job(job.pk, grace_seconds=0)

    assert summary["postings_sent"] == {"created": 6}
    assert len(fake_mturk.hits) == 6 and fake_mturk.duplicate_hits() == 0
    assert fake_mturk.duplicates_refused == 4
    hit_by_token = {h["RequesterAnnotation"]: h["HITId"] for h in fake_mturk.hits.values()}
    for posting in Posting.objects.filter(job=job):
        assert posting.state == "created" and posting.external_id == hit_by_token[posting.request_token]


def test_a_fresh_attempt_is_left_to_the_process_that_made_it(fake_mturk, job_factory):
    job = job_factory(turns=1)
    configure_crowd(job, provider="mturk", budget="5", assignments_per_posting=1)
    posting = reserve_postings(job)[0]
    Posting.objects.filter(pk=posting.pk).update(attempts=1, attempted_at=timezone.now())
    reconcile_job(job.pk, grace_seconds=300)
    assert Posting.objects.get(pk=posting.pk).state == "intended" and not fake_mturk.hits


def test_throttling_and_faults_on_the_wire_still_give_one_hit_per_posting(fake_mturk, job_factory, settings):
    settings.QUORUM_MTURK_MAX_ATTEMPTS = 1  # botocore's own backoff sleeps for real; the provider's retries do not here
    fake_mturk.throttle_rate, fake_mturk.fault_rate = 0.3, 0.1
    job = job_factory(turns=30)
    configure_crowd(job, provider="mturk", budget="100", assignments_per_posting=1)
    summary = post_job(job, concurrency=1)
    for _ in range(3):  # what was still throttled is repeated by the reconciler
        reconcile_job(job.pk, grace_seconds=0)
    assert fake_mturk.throttled > 0 and fake_mturk.faulted > 0
    assert Posting.objects.filter(job=job, state="created").count() == 30, summary
    assert len(fake_mturk.hits) == 30 and fake_mturk.duplicate_hits() == 0


def _submitted_assignment(job, provider, posting, worker_id, external_id):
    worker, _ = Worker.objects.get_or_create(provider=provider, external_id=worker_id)
    return ProviderAssignment.objects.create(
        posting=posting, provider=provider, external_id=external_id, worker=worker, state="submitted",
        submitted_at=timezone.now(),
    )


def test_mturk_bonus_retried_after_a_crash_is_paid_once(fake_mturk, job_factory):
    job = job_factory(turns=1)
    configure_crowd(job, provider="mturk", budget="20", assignments_per_posting=1)
    post_job(job, concurrency=1)
    posting = Posting.objects.get(job=job)
    assignment_id = fake_mturk.accept(posting.external_id, "A1BONUSWORKER")
    fake_mturk.submit(assignment_id)
    assignment = _submitted_assignment(job, "mturk", posting, "A1BONUSWORKER", assignment_id)
    payment = intend_bonus(assignment, "0.40", "Excellent paraphrases")
    # The call went out, the process died before recording the outcome:
    Payment.objects.filter(pk=payment.pk).update(state="sent", sent_at=timezone.now())
    fake_mturk.provider.bonus(Payment.objects.get(pk=payment.pk))

    reconcile_job(job.pk, grace_seconds=0)

    assert Payment.objects.get(pk=payment.pk).state == "confirmed"
    assert fake_mturk.bonuses_per_assignment()[assignment_id] == 1


def _prolific_submission(fake_prolific, job):
    configure_crowd(job, provider="prolific", budget="20")
    post_job(job, concurrency=1)
    posting = Posting.objects.get(job=job)
    session = fake_prolific.start_submission(posting.external_id, "pid1")
    fake_prolific.complete(session)
    return _submitted_assignment(job, "prolific", posting, "pid1", session)


def test_prolific_bonus_that_was_paid_before_the_crash_is_not_paid_again(fake_prolific, job_factory):
    from hits import providers

    assignment = _prolific_submission(fake_prolific, job_factory(turns=1))
    payment = intend_bonus(assignment, "1.00", "Great care")
    provider = providers.get("prolific")
    reference = provider.prepare_bonus(payment)
    Payment.objects.filter(pk=payment.pk).update(state="sent", sent_at=timezone.now(), provider_reference=reference)
    provider.bonus(Payment.objects.get(pk=payment.pk))  # paid; then the crash

    for _ in range(2):
        reconcile_job(assignment.posting.job_id, grace_seconds=0)
        execute_payment(payment.pk)

    assert fake_prolific.payments_per_participant()["pid1"] == 1
    assert Payment.objects.get(pk=payment.pk).state == "confirmed"


def test_prolific_bonus_whose_outcome_is_unknown_is_flagged_never_repaid(fake_prolific, job_factory):
    assignment = _prolific_submission(fake_prolific, job_factory(turns=1))
    payment = intend_bonus(assignment, "1.00", "Great care")
    # Marked sent, then the crash: did the pay call reach Prolific? Quorum cannot know.
    Payment.objects.filter(pk=payment.pk).update(state="sent", sent_at=timezone.now(), provider_reference="unknown")

    summary = reconcile_job(assignment.posting.job_id, grace_seconds=0)

    payment.refresh_from_db()
    assert summary["payments"] == {"needs_attention": 1}
    assert payment.state == "sent" and payment.needs_attention
    assert fake_prolific.payments_per_participant()["pid1"] == 0


def test_prolific_study_created_before_a_crash_is_found_not_recreated(fake_prolific, job_factory):
    from hits import providers

    job = job_factory(turns=2)
    configure_crowd(job, provider="prolific", budget="20")
    posting = reserve_postings(job)[0]
    Posting.objects.filter(pk=posting.pk).update(attempts=1, attempted_at=timezone.now())
    posting.refresh_from_db()
    study_id = providers.get("prolific").create_posting(posting, job.crowd)

    reconcile_job(job.pk, grace_seconds=0)

    assert len(fake_prolific.studies) == 1
    assert Posting.objects.get(pk=posting.pk).external_id == study_id
    assert fake_prolific.studies[study_id]["status"] == "ACTIVE"


def test_prolific_token_is_never_stored_or_shown(fake_prolific, job_factory, caplog):
    job = job_factory(turns=1)
    configure_crowd(job, provider="prolific", budget="20")
    with caplog.at_level("DEBUG"):
        post_job(job, concurrency=1)
    assert "secret-prolific-token" not in caplog.text
    from hits.models import JobCrowdConfig

    stored = " ".join(str(v) for v in JobCrowdConfig.objects.filter(job=job).values().first().values())
    assert "secret-prolific-token" not in stored
    assert D(JobCrowdConfig.objects.get(job=job).committed) > 0
