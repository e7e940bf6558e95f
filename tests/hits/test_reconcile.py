"""Settlement before the provider's auto-approval deadline, and following what the provider did."""
from datetime import timedelta

from django.utils import timezone

from annotation.models import Response, Slot
from hits.models import Payment, Posting, ProviderAssignment
from hits.services.config import configure_crowd
from hits.services.postings import launch_crowd_job, post_job
from hits.services.reconcile import jobs_to_reconcile, reconcile_job
from tests.hits.conftest import ANSWERS
from tests.hits.contract import submit_response


def _job_with_submission(fake_mturk, job_factory, client, auto_approval_days=3):
    from urllib.parse import urlencode

    job = job_factory(turns=2)
    configure_crowd(job, provider="mturk", budget="10", assignments_per_posting=2, auto_approval_days=auto_approval_days)
    launch_crowd_job(job)
    post_job(job, concurrency=1)
    hit = Posting.objects.get(job=job).external_id
    assignment_id = fake_mturk.accept(hit, "A1SETTLE")
    client.get(f"/crowd/mturk/{job.pk}/?" + urlencode(
        {"assignmentId": assignment_id, "hitId": hit, "workerId": "A1SETTLE", "turkSubmitTo": "https://www.mturk.com"}
    ))
    assignment = ProviderAssignment.objects.get(external_id=assignment_id)
    response = submit_response(slot_id=assignment.slot_id, worker=assignment.worker, answers=ANSWERS)
    fake_mturk.submit(assignment_id)
    return job, assignment_id, response


def test_undecided_responses_wait_and_are_settled_before_the_deadline(fake_mturk, job_factory, client, work_tokens):
    job, assignment_id, response = _job_with_submission(fake_mturk, job_factory, client, auto_approval_days=3)
    Response.objects.filter(pk=response.pk).update(status=Response.Status.AWAITING_REVIEW)  # votes still open

    reconcile_job(job.pk, grace_seconds=0)
    assert fake_mturk.assignments[assignment_id]["AssignmentStatus"] == "Submitted"

    # Two and a half days later (12 hours before MTurk would approve by itself) Quorum settles.
    later = timezone.now() + timedelta(days=2, hours=13)
    summary = reconcile_job(job.pk, grace_seconds=0, now=later)
    assert summary["settled"] == {"approve": 1}
    assert fake_mturk.assignments[assignment_id]["AssignmentStatus"] == "Approved"


def test_accepted_work_waits_the_review_window_and_a_builders_rejection_in_it_stands(fake_mturk, job_factory, client, work_tokens):
    """With 24 hours to review, accepted work is not paid at the next reconciliation: the builder may
    still reject it; what they leave alone is paid once the window is over."""
    from annotation.services.review import bulk_decide

    job, assignment_id, response = _job_with_submission(fake_mturk, job_factory, client, auto_approval_days=3)
    configure_crowd(job, review_hours=24)
    reconcile_job(job.pk, grace_seconds=0)  # confirms the submission: the response is accepted, not yet paid
    assert Response.objects.get(pk=response.pk).status == Response.Status.ACCEPTED
    assert fake_mturk.assignments[assignment_id]["AssignmentStatus"] == "Submitted"
    assert not Payment.objects.filter(kind="approve").exists()

    # The builder looks within the window and rejects it: that is what is settled.
    bulk_decide(job, [response.pk], action="reject", reason="the area is lost in the paraphrase")
    summary = reconcile_job(job.pk, grace_seconds=0)
    assert summary["settled"] == {"reject": 1}
    assert fake_mturk.assignments[assignment_id]["AssignmentStatus"] == "Rejected"


def test_accepted_work_left_alone_is_paid_when_the_review_window_ends(fake_mturk, job_factory, client, work_tokens):
    job, assignment_id, _response = _job_with_submission(fake_mturk, job_factory, client, auto_approval_days=3)
    configure_crowd(job, review_hours=24)
    assert reconcile_job(job.pk, grace_seconds=0)["settled"] == {}
    assert reconcile_job(job.pk, grace_seconds=0, now=timezone.now() + timedelta(hours=23))["settled"] == {}
    summary = reconcile_job(job.pk, grace_seconds=0, now=timezone.now() + timedelta(hours=24, minutes=1))
    assert summary["settled"] == {"approve": 1}
    assert fake_mturk.assignments[assignment_id]["AssignmentStatus"] == "Approved"


def test_by_default_accepted_work_waits_a_day_for_the_builder_before_it_is_paid(fake_mturk, job_factory, client, work_tokens):
    """A job whose builder never set the review window still gets one: worker flags (a 15-minute sweep) and
    votes come after a submission, so paying at the next reconciliation would pay before anyone could look."""
    from hits.models import JobCrowdConfig

    job, assignment_id, response = _job_with_submission(fake_mturk, job_factory, client, auto_approval_days=3)
    assert JobCrowdConfig.objects.get(job=job).review_hours == 24
    reconcile_job(job.pk, grace_seconds=0)  # confirms it: accepted, not paid
    assert Response.objects.get(pk=response.pk).status == Response.Status.ACCEPTED
    assert reconcile_job(job.pk, grace_seconds=0, now=timezone.now() + timedelta(hours=23, minutes=50))["settled"] == {}
    assert fake_mturk.assignments[assignment_id]["AssignmentStatus"] == "Submitted"
    summary = reconcile_job(job.pk, grace_seconds=0, now=timezone.now() + timedelta(hours=24, minutes=1))
    assert summary["settled"] == {"approve": 1}
    assert fake_mturk.assignments[assignment_id]["AssignmentStatus"] == "Approved"


def test_a_review_window_past_the_providers_deadline_still_settles_before_it(fake_mturk, job_factory, client, work_tokens):
    job, assignment_id, _response = _job_with_submission(fake_mturk, job_factory, client, auto_approval_days=1)
    configure_crowd(job, review_hours=72)  # longer than MTurk waits: Quorum settles 12 hours before MTurk would
    assert reconcile_job(job.pk, grace_seconds=0)["settled"] == {}
    summary = reconcile_job(job.pk, grace_seconds=0, now=timezone.now() + timedelta(hours=13))
    assert summary["settled"] == {"approve": 1}


def test_a_rejected_response_is_rejected_at_the_provider_with_a_message(fake_mturk, job_factory, client, work_tokens):
    job, assignment_id, response = _job_with_submission(fake_mturk, job_factory, client)
    Response.objects.filter(pk=response.pk).update(status=Response.Status.REJECTED)
    reconcile_job(job.pk, grace_seconds=0)
    remote = fake_mturk.assignments[assignment_id]
    assert remote["AssignmentStatus"] == "Rejected" and len(remote["RequesterFeedback"]) > 50


def test_a_settlement_made_at_the_provider_is_followed_not_repeated(fake_mturk, job_factory, client, work_tokens):
    job, assignment_id, response = _job_with_submission(fake_mturk, job_factory, client)
    Response.objects.filter(pk=response.pk).update(status=Response.Status.AWAITING_REVIEW)
    fake_mturk.assignments[assignment_id]["AssignmentStatus"] = "Approved"  # auto-approved at MTurk
    calls_before = fake_mturk.calls["ApproveAssignment"]
    reconcile_job(job.pk, grace_seconds=0)
    assert ProviderAssignment.objects.get(external_id=assignment_id).state == "approved"
    assert fake_mturk.calls["ApproveAssignment"] == calls_before
    assert not Payment.objects.filter(kind="approve", state__in=["intended", "sent"]).exists()


def test_a_returned_prolific_submission_frees_the_slot(fake_prolific, job_factory, client, work_tokens):
    from urllib.parse import urlencode

    job = job_factory(turns=1)
    configure_crowd(job, provider="prolific", budget="10")
    launch_crowd_job(job)
    post_job(job, concurrency=1)
    study = Posting.objects.get(job=job).external_id
    session = fake_prolific.start_submission(study, "pidreturn")
    client.get(f"/crowd/prolific/{job.pk}/?" + urlencode({"PROLIFIC_PID": "pidreturn", "STUDY_ID": study, "SESSION_ID": session}))
    assert Slot.objects.filter(job=job, state="claimed").count() == 1
    fake_prolific.submissions[session]["status"] = "RETURNED"
    reconcile_job(job.pk, grace_seconds=0)
    assert ProviderAssignment.objects.get(external_id=session).state == "returned"
    assert Slot.objects.filter(job=job, state="open").count() == 1


def test_jobs_with_open_work_are_the_ones_reconciled(fake_mturk, job_factory, client, work_tokens):
    job, _, _ = _job_with_submission(fake_mturk, job_factory, client)
    idle = job_factory(turns=1, name="idle")
    assert job.pk in jobs_to_reconcile() and idle.pk not in jobs_to_reconcile()


def test_listings_close_when_every_slot_is_submitted(fake_mturk, job_factory, client, work_tokens):
    from urllib.parse import urlencode

    job = job_factory(turns=1)
    configure_crowd(job, provider="mturk", budget="10", assignments_per_posting=1)
    launch_crowd_job(job)
    post_job(job, concurrency=1)
    posting = Posting.objects.get(job=job)
    assert reconcile_job(job.pk, grace_seconds=0)["closed"] == 0  # work left: the HIT stays up
    assignment_id = fake_mturk.accept(posting.external_id, "A1LAST")
    client.get(f"/crowd/mturk/{job.pk}/?" + urlencode(
        {"assignmentId": assignment_id, "hitId": posting.external_id, "workerId": "A1LAST", "turkSubmitTo": "https://www.mturk.com"}
    ))
    assignment = ProviderAssignment.objects.get(external_id=assignment_id)
    submit_response(slot_id=assignment.slot_id, worker=assignment.worker, answers=ANSWERS)
    fake_mturk.submit(assignment_id)
    assert reconcile_job(job.pk, grace_seconds=0)["closed"] == 1
    assert Posting.objects.get(pk=posting.pk).state == "closed"
    assert fake_mturk.hits[posting.external_id]["HITStatus"] == "Unassignable"


def _arrive_and_submit(fake_mturk, client, job, hit, worker):
    from urllib.parse import urlencode

    assignment_id = fake_mturk.accept(hit, worker)
    client.get(f"/crowd/mturk/{job.pk}/?" + urlencode(
        {"assignmentId": assignment_id, "hitId": hit, "workerId": worker, "turkSubmitTo": "https://www.mturk.com"}
    ))
    assignment = ProviderAssignment.objects.get(external_id=assignment_id)
    submit_response(slot_id=assignment.slot_id, worker=assignment.worker, answers=ANSWERS)
    fake_mturk.submit(assignment_id)
    return assignment_id


def test_a_finished_jobs_listing_closes_and_its_unfilled_places_go_back_once_no_one_can_be_inside(
    fake_mturk, job_factory, client, work_tokens, django_capture_on_commit_callbacks, queued_by_name
):
    from decimal import Decimal as D

    from annotation.services.jobs import finish_job
    from hits.models import JobCrowdConfig

    job = job_factory(turns=4, reward="0.50")  # one HIT of 4 places at 0.50 + 0.10 fee: 2.40 reserved
    # No review window (paid at once): this is about the places, and a job with nothing left to settle.
    configure_crowd(job, provider="mturk", budget="10", assignments_per_posting=4, review_hours=0)
    launch_crowd_job(job)
    post_job(job, concurrency=1)
    posting = Posting.objects.get(job=job)
    _arrive_and_submit(fake_mturk, client, job, posting.external_id, "A1FIRST")
    inside = fake_mturk.accept(posting.external_id, "A2INSIDE")  # took a place at MTurk, has not come back yet
    assert JobCrowdConfig.objects.get(job=job).committed == D("2.40")

    with django_capture_on_commit_callbacks(execute=True):
        finish_job(job)  # the builder has enough: two places were never taken
    assert ("hits.tasks.reconcile_job", job.pk) in queued_by_name  # the listing is closed now, not at the next beat
    summary = reconcile_job(job.pk, grace_seconds=0)
    assert summary["closed"] == 1 and fake_mturk.hits[posting.external_id]["HITStatus"] == "Unassignable"
    assert summary["released"] == "0.00"  # a worker inside may still submit within the assignment's duration
    assert JobCrowdConfig.objects.get(job=job).committed == D("2.40")

    fake_mturk.submit(inside)  # submitted at MTurk after the close: still seen, and settled like any other
    later = timezone.now() + timedelta(minutes=job.claim_timeout_minutes, seconds=1)
    summary = reconcile_job(job.pk, grace_seconds=0, now=later)
    assert ProviderAssignment.objects.get(external_id=inside).missing_response
    # Four places at 0.60 each: two paid (the one inside is paid by default: Quorum never received its
    # answers, but the worker should not pay for that), two never taken, whose 1.20 goes back.
    assert summary["released"] == "1.20"
    assert fake_mturk.assignments[inside]["AssignmentStatus"] == "Approved"
    assert JobCrowdConfig.objects.get(job=job).committed == D("1.20")
    assert Posting.objects.get(pk=posting.pk).released_at is not None

    reconcile_job(job.pk, grace_seconds=0, now=later + timedelta(hours=1))  # again: nothing given back twice
    assert JobCrowdConfig.objects.get(job=job).committed == D("1.20")
    assert job.pk not in jobs_to_reconcile()
