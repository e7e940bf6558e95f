"""What a builder meets running a Prolific job for the first time: live spending needs its switch, one
place per participant, the preview in Prolific's words, and no preview of finished work."""
import pytest
import requests

from annotation.models import Job, Slot
from annotation.services.jobs import JobError, finish_job, launch_job
from hits import providers
from hits.models import JobCrowdConfig, Payment, Posting, ProviderAssignment
from hits.providers.prolific import ProlificProvider
from hits.services.config import configure_crowd
from hits.services.payments import approve_assignments, bonus_assignments
from hits.services.postings import launch_crowd_job, post_job, send_posting
from tests.hits.conftest import ANSWERS
from tests.hits.contract import submit_response

REAL_API = "https://api.prolific.com"


class NoCalls(requests.Session):
    """A session that fails the test if Quorum calls out at all."""

    def __init__(self):
        super().__init__()
        self.calls = []

    def request(self, method, url, *args, **kwargs):
        self.calls.append((method, url))
        raise AssertionError(f"no call may reach Prolific: {method} {url}")


@pytest.fixture
def real_prolific(settings, monkeypatch):
    """Prolific's own API with a token set, and the live switch off (its default)."""
    settings.QUORUM_PROLIFIC_API_URL = REAL_API
    settings.QUORUM_PROLIFIC_LIVE = False
    monkeypatch.setenv("PROLIFIC_TOKEN", "a-real-looking-token")
    session = NoCalls()
    with providers.override("prolific", ProlificProvider(session=session)):
        yield session


def test_the_live_switch_is_off_by_default():
    from django.conf import settings

    assert settings.QUORUM_PROLIFIC_LIVE is False


def test_a_token_alone_does_not_launch_on_prolifics_own_api(real_prolific, job_factory):
    job = job_factory(turns=2)
    configure_crowd(job, provider="prolific", budget="10")
    with pytest.raises(JobError, match="QUORUM_PROLIFIC_LIVE") as refused:
        launch_job(job)
    assert str(refused.value).startswith("Not launched on Prolific: ")
    assert Job.objects.get(pk=job.pk).state == Job.State.DRAFT
    assert not Posting.objects.filter(job=job).exists() and JobCrowdConfig.objects.get(job=job).committed == 0
    assert real_prolific.calls == []


def test_with_the_switch_on_prolifics_own_api_is_called(real_prolific, job_factory, settings):
    settings.QUORUM_PROLIFIC_LIVE = True
    job = job_factory(turns=2)
    configure_crowd(job, provider="prolific", budget="10")
    launch_crowd_job(job)
    assert Job.objects.get(pk=job.pk).state == Job.State.LIVE
    with pytest.raises(AssertionError, match="no call may reach Prolific"):
        post_job(job, concurrency=1)
    assert real_prolific.calls and real_prolific.calls[0][1].startswith(REAL_API)


def test_a_posting_left_intended_is_not_sent_once_the_switch_is_off(real_prolific, job_factory, settings):
    settings.QUORUM_PROLIFIC_LIVE = True
    job = job_factory(turns=2)
    configure_crowd(job, provider="prolific", budget="10")
    launch_crowd_job(job)
    settings.QUORUM_PROLIFIC_LIVE = False
    posting = send_posting(Posting.objects.get(job=job).pk, grace_seconds=0)
    assert posting.state == Posting.State.INTENDED and "QUORUM_PROLIFIC_LIVE" in posting.error
    assert JobCrowdConfig.objects.get(job=job).committed > 0  # still reserved: the reconciler sends it once the switch is on
    assert real_prolific.calls == []


def _posted_study(job_factory, turns):
    """A Prolific job posted at the local fake: the job, live, and its study's id."""
    job = job_factory(turns=turns)
    configure_crowd(job, provider="prolific", budget="10")
    launch_crowd_job(job)
    post_job(job, concurrency=1)
    job.refresh_from_db()
    return job, Posting.objects.get(job=job).external_id


@pytest.fixture
def submitted_prolific(fake_prolific, job_factory):
    """A posted Prolific job (at the local fake) with one confirmed submission."""
    from hits.services.confirmation import confirm_assignment
    from hits.services.entry import arrive

    job, study = _posted_study(job_factory, 2)
    session = fake_prolific.start_submission(study, "P1PARTICIPANT")
    arrival = arrive(provider_key="prolific", job=job, params={"PROLIFIC_PID": "P1PARTICIPANT", "STUDY_ID": study, "SESSION_ID": session})
    submit_response(slot_id=arrival.slot.pk, worker=arrival.assignment.worker, answers=ANSWERS)
    fake_prolific.complete(session)
    confirm_assignment(arrival.assignment.pk)
    return job, arrival.assignment


def test_a_local_fake_needs_no_switch(submitted_prolific, fake_prolific):
    job, assignment = submitted_prolific
    assert Posting.objects.get(job=job).state == Posting.State.CREATED
    assert approve_assignments([assignment.pk])[0].ok


def test_without_the_switch_approving_and_bonuses_are_refused_before_any_call(submitted_prolific, settings, monkeypatch):
    job, assignment = submitted_prolific
    committed = JobCrowdConfig.objects.get(job=job).committed
    settings.QUORUM_PROLIFIC_API_URL = REAL_API
    session = NoCalls()
    with providers.override("prolific", ProlificProvider(session=session)):
        approved, = approve_assignments([assignment.pk])
        bonus, = bonus_assignments([(assignment.pk, "0.50", "Careful work")])
    for result in (approved, bonus):
        assert not result.ok and "QUORUM_PROLIFIC_LIVE" in result.error
    assert session.calls == [] and not Payment.objects.exists()
    assert JobCrowdConfig.objects.get(job=job).committed == committed
    assert ProviderAssignment.objects.get(pk=assignment.pk).state == ProviderAssignment.State.SUBMITTED


def test_a_participant_takes_one_place_in_a_job_whatever_session_they_bring(fake_prolific, job_factory, client, work_tokens):
    job, study = _posted_study(job_factory, 3)
    session1, session2, session3 = (fake_prolific.start_submission(study, pid) for pid in ("P1", "P1", "P2"))
    first = client.get(f"/crowd/prolific/{job.pk}/", {"PROLIFIC_PID": "P1", "STUDY_ID": study, "SESSION_ID": session1})
    assert first.status_code == 302
    again = client.get(f"/crowd/prolific/{job.pk}/", {"PROLIFIC_PID": "P1", "STUDY_ID": study, "SESSION_ID": session1})
    assert again.status_code == 302  # the same submission comes back to its own item
    held = ProviderAssignment.objects.get(posting__job=job)

    def arrives_again_refused():
        second = client.get(f"/crowd/prolific/{job.pk}/", {"PROLIFIC_PID": "P1", "STUDY_ID": study, "SESSION_ID": session2})
        assert second.status_code == 400
        body = second.content.decode()
        assert "already taken part in this study" in body and "return this submission on Prolific" in body
        assert ProviderAssignment.objects.filter(posting__job=job).count() == 1
        assert Slot.objects.filter(job=job).exclude(state=Slot.State.OPEN).count() == 1

    arrives_again_refused()  # while the first item is open
    submit_response(slot_id=held.slot_id, worker=held.worker, answers=ANSWERS)
    assert ProviderAssignment.objects.get(pk=held.pk).state == ProviderAssignment.State.SUBMITTED  # confirmed
    arrives_again_refused()  # and once it is submitted: no second item
    # Another participant is let in as before.
    other = client.get(f"/crowd/prolific/{job.pk}/", {"PROLIFIC_PID": "P2", "STUDY_ID": study, "SESSION_ID": session3})
    assert other.status_code == 302


def test_the_preview_speaks_prolifics_words_and_a_finished_job_offers_none(fake_prolific, job_factory, client):
    job, _study = _posted_study(job_factory, 1)
    body = client.get(f"/crowd/prolific/{job.pk}/").content.decode()
    assert "Take part from Prolific to start" in body and "Accept" not in body
    finish_job(Job.objects.get(pk=job.pk))
    finished = client.get(f"/crowd/prolific/{job.pk}/")
    assert finished.status_code == 400
    assert "This study has finished and takes no more participants" in finished.content.decode()
    assert "preview" not in finished.content.decode().lower()
