"""A participant who saved their work in Quorum and then returned the study on Prolific ("Return and cancel
reward" on a submission awaiting review: Prolific pays nothing for it and refuses to approve it). Quorum kept
the assignment submitted and tried to approve it at every reconciliation; Prolific refused each time, the page
showed the approval failing again and again, the place's share of the reservation never went back and the job
stayed on the reconciliation list. Now reconciliation (and Prolific's hook) records it as returned, with
Prolific's status, sends nothing more for it, gives its share back once no one can take the place, and the job
page says so. The work the participant saved stays in Quorum as it was: rejecting or leaving it out is a
person's decision."""
import html
import re
from datetime import timedelta
from decimal import Decimal as D

import pytest
from django.utils import timezone

from annotation.models import Response
from hits.models import JobCrowdConfig, Payment, Posting, ProviderAssignment
from hits.services.config import configure_crowd
from hits.services.confirmation import confirm_assignment
from hits.services.entry import arrive
from hits.services.events import record_status_event
from hits.services.postings import launch_crowd_job, post_job
from hits.services.reconcile import jobs_to_reconcile, reconcile_job
from tests.hits.conftest import ANSWERS
from tests.hits.contract import submit_response

pytestmark = pytest.mark.usefixtures("project_urls")  # the organizer pages live in the project's URLs


def _two_submitted(fake, job_factory, *, review_hours):
    """A study of two places at $0.50 (33.33%: $1.34 reserved, the fee rounded up), both saved in Quorum and completed on Prolific."""
    job = job_factory(turns=2, reward="0.50")
    configure_crowd(job, provider="prolific", budget="10", prolific_fee_rate="0.3333", review_hours=review_hours)
    launch_crowd_job(job)
    post_job(job, concurrency=1)
    job.refresh_from_db()
    study = Posting.objects.get(job=job).external_id
    sessions = []
    for pid in ("P1", "P2"):
        session = fake.start_submission(study, pid)
        arrival = arrive(provider_key="prolific", job=job, params={"PROLIFIC_PID": pid, "STUDY_ID": study, "SESSION_ID": session})
        submit_response(slot_id=arrival.slot.pk, worker=arrival.assignment.worker, answers=ANSWERS)
        fake.complete(session)
        confirm_assignment(arrival.assignment.pk)
        sessions.append(session)
    assert JobCrowdConfig.objects.get(job=job).committed == D("1.34")
    return job, sessions


def _transitions(fake, session):
    return fake.calls[f"POST /submissions/{session}/transition"]


def _returned_row(client, job, assignment):
    body = client.get(f"/organize/jobs/{job.pk}/").content.decode()
    row = re.search(rf'id="crowd-a-{assignment.pk}".*?</tr>', body, re.S).group(0)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", row)).split())


def test_a_study_returned_after_submitting_is_not_approved_again_and_its_place_goes_back(
    fake_prolific, job_factory, organizer_api, client, organizer
):
    job, (kept, returned) = _two_submitted(fake_prolific, job_factory, review_hours=0)
    status_before = ProviderAssignment.objects.get(external_id=returned).response.status
    fake_prolific.return_submission(returned)

    summary = reconcile_job(job.pk, grace_seconds=0)
    assert summary["assignments"]["returned_after_submission"] == 1
    assert summary["settled"] == {"approve": 1}  # the other participant's work only
    assignment = ProviderAssignment.objects.get(external_id=returned)
    assert (assignment.state, assignment.provider_status, assignment.place) == ("returned", "RETURNED", None)
    assert not Payment.objects.filter(assignment=assignment).exists() and _transitions(fake_prolific, returned) == 0
    # The work saved in Quorum stays as it was.
    assert Response.objects.get(pk=assignment.response_id).status == status_before
    assert summary["closed"] == 1  # every slot is submitted: the study takes no one else

    later = timezone.now() + timedelta(minutes=job.claim_timeout_minutes, seconds=1)
    summary = reconcile_job(job.pk, grace_seconds=0, now=later)  # no one can be inside any more
    assert summary["released"] == "0.67"  # the returned place's share of $1.34
    overview = organizer_api.get(f"/api/crowd/jobs/{job.pk}/").json()
    assert overview["committed"] == "0.67" and overview["spent"]["total"] == "0.67"  # what was paid, no more
    assert overview["returned_after_submission"]["assignments"] == 1
    assert job.pk not in jobs_to_reconcile()
    reconcile_job(job.pk, grace_seconds=0, now=later + timedelta(hours=1))
    assert _transitions(fake_prolific, returned) == 0 and JobCrowdConfig.objects.get(job=job).committed == D("0.67")

    client.force_login(organizer)
    row = _returned_row(client, job, assignment)
    assert "Returned or abandoned (RETURNED at the provider)" in row
    assert "returned on Prolific after submitting: not paid, and nothing more is sent for it" in row
    assert "its response stays in Quorum as it is" in row


def test_a_return_after_the_studys_places_were_given_back_gives_its_share_back_at_once(fake_prolific, job_factory):
    job, (kept, returned) = _two_submitted(fake_prolific, job_factory, review_hours=24)
    start = timezone.now()
    assert reconcile_job(job.pk, grace_seconds=0, now=start)["closed"] == 1
    later = start + timedelta(minutes=job.claim_timeout_minutes, seconds=1)
    assert reconcile_job(job.pk, grace_seconds=0, now=later)["released"] == "0.00"  # both places were taken
    assert Posting.objects.get(job=job).released_at is not None

    fake_prolific.return_submission(returned)  # within the review window, after the study's places went back
    summary = reconcile_job(job.pk, grace_seconds=0, now=start + timedelta(hours=25))
    assert summary["assignments"]["returned_after_submission"] == 1 and summary["settled"] == {"approve": 1}
    assert _transitions(fake_prolific, returned) == 0
    assert JobCrowdConfig.objects.get(job=job).committed == D("0.67")  # $1.34 less the returned place's $0.67
    assert job.pk not in jobs_to_reconcile()


def test_prolifics_hook_for_a_return_after_submitting_records_it_once(fake_prolific, job_factory):
    job, (kept, returned) = _two_submitted(fake_prolific, job_factory, review_hours=24)
    event = {"event_type": "submission.status.change", "assignment_external_id": returned, "worker_external_id": "P2",
             "status": "RETURNED", "normalized": "returned"}
    assert record_status_event("prolific", event_id="e1", **event) == (
        "returned after submitting: not settled; its response stays in Quorum"
    )
    assert ProviderAssignment.objects.get(external_id=returned).state == "returned"
    assert record_status_event("prolific", event_id="e2", **event) == "status recorded (RETURNED)"
    fake_prolific.return_submission(returned)
    summary = reconcile_job(job.pk, grace_seconds=0, now=timezone.now() + timedelta(hours=25))
    assert summary["settled"] == {"approve": 1} and _transitions(fake_prolific, returned) == 0
