"""A rejection message shorter than Prolific takes (100 characters, shown to the participant) was sent all the
same: Prolific refused it, the page showed a failed reject payment, and the work, still unsettled, was paid
automatically when its review window ended. It is now refused at the decision, on the page and in the API,
with the minimum said, before anything is recorded: nothing changes on a refusal."""
import html
from decimal import Decimal as D

import pytest

from annotation.models import Response
from hits.models import JobCrowdConfig, Payment, Posting, ProviderAssignment
from hits.services.config import configure_crowd
from hits.services.confirmation import confirm_assignment
from hits.services.entry import arrive
from hits.services.postings import launch_crowd_job, post_job
from tests.hits.conftest import ANSWERS
from tests.hits.contract import LONG_REJECTION, submit_response

SHORT = "Low effort: the rewrite changed the hotel's area."  # 49 characters


pytestmark = pytest.mark.usefixtures("project_urls")  # the organizer pages live in the project's URLs


@pytest.fixture
def submitted(fake_prolific, job_factory):
    """A Prolific job with one participant's work saved in Quorum and completed on Prolific."""
    job = job_factory(turns=1, reward="0.50")
    configure_crowd(job, provider="prolific", budget="10", prolific_fee_rate="0.3333")
    launch_crowd_job(job)
    post_job(job, concurrency=1)
    job.refresh_from_db()
    study = Posting.objects.get(job=job).external_id
    session = fake_prolific.start_submission(study, "P1")
    arrival = arrive(provider_key="prolific", job=job, params={"PROLIFIC_PID": "P1", "STUDY_ID": study, "SESSION_ID": session})
    submit_response(slot_id=arrival.slot.pk, worker=arrival.assignment.worker, answers=ANSWERS)
    fake_prolific.complete(session)
    confirm_assignment(arrival.assignment.pk)
    return job, ProviderAssignment.objects.get(pk=arrival.assignment.pk)


def _unchanged(fake, job, assignment, response_status):
    assert not Payment.objects.exists()
    assert ProviderAssignment.objects.get(pk=assignment.pk).state == ProviderAssignment.State.SUBMITTED
    assert Response.objects.get(pk=assignment.response_id).status == response_status
    assert JobCrowdConfig.objects.get(job=job).committed == D("0.67")
    assert fake.calls[f"POST /submissions/{assignment.external_id}/transition"] == 0


def test_the_page_refuses_a_short_rejection_message_with_the_minimum_and_records_nothing(submitted, client, organizer, fake_prolific):
    job, assignment = submitted
    status = Response.objects.get(pk=assignment.response_id).status
    client.force_login(organizer)
    page = client.post(f"/crowd/jobs/{job.pk}/settle/", {"action": "reject", "assignments": [assignment.pk], "message": SHORT}, follow=True)
    section = page.content.decode().split('id="crowd-results"', 1)[1].split("</ul>", 1)[0]
    said = [html.unescape(li.split(">", 1)[1].split("</li>", 1)[0]) for li in section.split("<li")[1:]]
    assert said == [
        "Not rejected: Prolific needs a rejection message of at least 100 characters for the participant; "
        f"this one has {len(SHORT)}. Nothing was recorded."
    ]
    _unchanged(fake_prolific, job, assignment, status)


def test_the_api_refuses_a_short_rejection_message_with_a_400_naming_it(submitted, organizer_api, fake_prolific):
    job, assignment = submitted
    status = Response.objects.get(pk=assignment.response_id).status
    refused = organizer_api.post(f"/api/crowd/jobs/{job.pk}/settle/", {"action": "reject", "assignments": [assignment.pk], "message": SHORT}, format="json")
    assert refused.status_code == 400
    assert refused.json()["errors"] == {
        "message": f"Prolific needs a rejection message of at least 100 characters for the participant; this one has {len(SHORT)}"
    }
    _unchanged(fake_prolific, job, assignment, status)

    # A message Prolific takes rejects as before.
    done = organizer_api.post(f"/api/crowd/jobs/{job.pk}/settle/", {"action": "reject", "assignments": [assignment.pk], "message": LONG_REJECTION}, format="json")
    assert done.status_code == 200 and done.json()["ok"] == 1
    assert fake_prolific.submissions[assignment.external_id]["status"] == "REJECTED"


def test_a_review_decision_to_reject_is_refused_when_the_message_it_would_send_is_too_short(submitted, settings, fake_prolific):
    """A reviewer's rejection is sent as QUORUM_REJECTION_MESSAGE: one Prolific refuses would leave the work
    unsettled until Prolific approves it itself, so the decision is refused, saying the minimum and what to do."""
    from annotation.models import CheckOverride
    from annotation.services.quality import QualityError, override_verdict

    job, assignment = submitted
    response = Response.objects.get(pk=assignment.response_id)
    settings.QUORUM_REJECTION_MESSAGE = SHORT
    with pytest.raises(QualityError, match="at least 100 characters.*QUORUM_REJECTION_MESSAGE.*exclude the response instead"):
        override_verdict(response, status=Response.Status.REJECTED, reason="copied the turn", check="vote")
    assert not CheckOverride.objects.exists()
    _unchanged(fake_prolific, job, assignment, response.status)

    settings.QUORUM_REJECTION_MESSAGE = ""  # Quorum's own wording is long enough
    override_verdict(response, status=Response.Status.REJECTED, reason="copied the turn", check="vote")
    assert Response.objects.get(pk=response.pk).status == Response.Status.REJECTED
