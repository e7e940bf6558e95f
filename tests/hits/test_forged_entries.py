"""Crowd entries cannot be forged (issue 8): invented identities on a one-place listing.

Anyone who knows a HIT id or a study id can invent assignmentId/workerId (MTurk) or
PROLIFIC_PID/SESSION_ID (Prolific). Through the real entry views and against the local fakes:
a posting admits at most as many workers as it has assignments, and nothing an invented identity
stores ever counts.
"""
from datetime import timedelta
from urllib.parse import urlencode

import pytest
from django.test import TestCase
from django.utils import timezone

from annotation.models import Response, Slot
from annotation.services.claims import submit_response
from hits.models import Payment, Posting, ProviderAssignment
from hits.services.config import configure_crowd
from hits.services.confirmation import confirm_assignment
from hits.services.payments import approve_assignments, bonus_assignments
from hits.services.postings import launch_crowd_job, post_job
from hits.services.reconcile import reconcile_job
from tests.hits.conftest import ANSWERS

INVENTED = 10


def _one_place_job(job_factory, provider):
    job = job_factory(turns=3, name=f"{provider} one place")
    configure_crowd(job, provider=provider, budget="20", assignments_per_posting=1)
    launch_crowd_job(job)
    post_job(job, concurrency=1)
    posting = Posting.objects.filter(job=job).order_by("seq").first()
    # One listing with one place: the others are not what this test is about.
    Posting.objects.filter(job=job).exclude(pk=posting.pk).delete()
    Posting.objects.filter(pk=posting.pk).update(assignments=1)
    return job, Posting.objects.get(pk=posting.pk)


def _mturk_entry(job, posting, i):
    return f"/crowd/mturk/{job.pk}/?" + urlencode({
        "assignmentId": f"3INVENTED{i:020d}", "hitId": posting.external_id, "workerId": f"A1INVENTED{i:04d}",
        "turkSubmitTo": "https://www.mturk.com",
    })


def _prolific_entry(job, posting, i):
    return f"/crowd/prolific/{job.pk}/?" + urlencode({
        "PROLIFIC_PID": f"invented{i:04d}", "STUDY_ID": posting.external_id, "SESSION_ID": f"session{i:04d}",
    })


@pytest.mark.parametrize("provider, entry", [("mturk", _mturk_entry), ("prolific", _prolific_entry)])
def test_ten_invented_identities_get_at_most_one_place(request, job_factory, client, work_tokens, provider, entry):
    request.getfixturevalue(f"fake_{provider}")
    job, posting = _one_place_job(job_factory, provider)
    answers = [client.get(entry(job, posting, i)) for i in range(INVENTED)]
    admitted = [r for r in answers if r.status_code == 302]
    assert len(admitted) <= 1
    assert all(r.status_code == 409 and "return it" in r.content.decode() for r in answers if r.status_code != 302)
    assert Slot.objects.filter(job=job).exclude(state=Slot.State.OPEN).count() <= 1
    assert ProviderAssignment.objects.filter(posting=posting, place__isnull=False).count() <= 1


@pytest.mark.parametrize("provider, entry", [("mturk", _mturk_entry), ("prolific", _prolific_entry)])
def test_an_invented_identity_never_stores_a_counted_response(request, job_factory, client, work_tokens, provider, entry):
    request.getfixturevalue(f"fake_{provider}")
    job, posting = _one_place_job(job_factory, provider)
    for i in range(INVENTED):
        client.get(entry(job, posting, i))
    admitted = ProviderAssignment.objects.filter(posting=posting, slot__isnull=False)
    assert admitted.count() == 1  # the first invented identity takes the one place; the check below is not vacuous
    for assignment in admitted:
        # The invented worker answers through the task page, which stores the response.
        with TestCase.captureOnCommitCallbacks(execute=True):  # the prompt confirmation task runs on commit
            response = submit_response(slot_id=assignment.slot_id, worker=assignment.worker, answers=ANSWERS)
        response.refresh_from_db()
        assert response.status != Response.Status.ACCEPTED
        assert not Response.objects.counted().filter(pk=response.pk).exists()
        assert not approve_assignments([assignment.pk])[0].ok and not bonus_assignments([(assignment.pk, "1.00", "x")])[0].ok
        # However long it waits, the provider never confirms it: rejected, never paid, its place given back.
        confirm_assignment(assignment.pk, now=timezone.now() + timedelta(days=1))
        response.refresh_from_db()
        assignment.refresh_from_db()
        assert response.status == Response.Status.REJECTED
        assert response.transitions.filter(to_status=Response.Status.REJECTED, actor=f"provider:{provider}").exists()
        assert assignment.state == ProviderAssignment.State.VOID and assignment.place is None
        # The item gets its slot back: a real worker collects what the invented one took.
        assert Slot.objects.filter(item_id=response.item_id, state=Slot.State.OPEN).exists()
    reconcile_job(job.pk, grace_seconds=0)
    assert not Response.objects.filter(item__job=job).counted().exists()
    assert not Payment.objects.filter(assignment__posting=posting).exclude(kind=Payment.Kind.REJECT).exists()


def test_mturk_waits_for_the_worker_to_submit_there_before_judging(fake_mturk, job_factory, client, work_tokens):
    """A real worker saves in Quorum first and submits at MTurk after: until then MTurk does not list the
    assignment, which is not yet a reason to reject."""
    job, posting = _one_place_job(job_factory, "mturk")
    assignment_id = fake_mturk.accept(posting.external_id, "A1REALWORKER")
    client.get(f"/crowd/mturk/{job.pk}/?" + urlencode({
        "assignmentId": assignment_id, "hitId": posting.external_id, "workerId": "A1REALWORKER",
        "turkSubmitTo": "https://www.mturk.com",
    }))
    assignment = ProviderAssignment.objects.get(external_id=assignment_id)
    with TestCase.captureOnCommitCallbacks(execute=True):
        response = submit_response(slot_id=assignment.slot_id, worker=assignment.worker, answers=ANSWERS)
    response.refresh_from_db()
    assert response.status == Response.Status.AWAITING_CONFIRMATION  # asked at once: "not yet"
    fake_mturk.submit(assignment_id)
    assert reconcile_job(job.pk, grace_seconds=0)["confirmations"] == {"confirmed": 1}
    response.refresh_from_db()
    assert Response.objects.counted().filter(pk=response.pk).exists()
