"""Re-collections are posted in batches: votes turn responses down one at a time, and each place
posted at once made a Prolific study (an MTurk HIT) of one place per voted-down item. A place waits
QUORUM_RECOLLECTION_POST_DELAY_SECONDS, and the first delayed post takes every place added meanwhile."""
import pytest
from django.test import TestCase

from annotation.models import Worker
from annotation.services.claims import claim_next_slot, submit_response
from annotation.services.review import bulk_decide
from hits import tasks
from hits.models import Posting, ProviderAssignment
from hits.providers.base import Confirmation
from hits.services.config import configure_crowd
from hits.services.confirmation import apply_verdict
from hits.services.postings import launch_crowd_job, post_job
from tests.hits.conftest import ANSWERS

pytestmark = pytest.mark.django_db


def _answered_by_the_crowd(job, n):
    responses = []
    for i in range(n):
        worker = Worker.objects.create(provider="prolific", external_id=f"P-{i}")
        slot = claim_next_slot(job=job, worker=worker)
        response = submit_response(slot_id=slot.id, worker=worker, answers=ANSWERS)
        entry = ProviderAssignment.objects.create(
            posting=Posting.objects.filter(job=job).first(), provider="prolific", external_id=f"SUB-{i}", worker=worker,
            slot=slot, response=response, state="submitted",
        )
        apply_verdict(entry, response, Confirmation(Confirmation.CONFIRMED, "Prolific lists the submission"))
        responses.append(response)
    return responses


def _live_on_prolific(job_factory):
    job = job_factory(turns=3, reward="0.50")
    configure_crowd(job, provider="prolific", budget="10.00", prolific_fee_rate="0.3333")
    job = launch_crowd_job(job)
    post_job(job, concurrency=1)
    return job


@pytest.fixture
def queued(monkeypatch):
    """The broker as a list: what was queued for later, with its countdown (tasks otherwise run at once here)."""
    calls = []
    monkeypatch.setattr("quorum.background.runs_inline", lambda: False)
    monkeypatch.setattr(tasks.post_job, "apply_async", lambda args, countdown=None: calls.append((tuple(args), countdown)))
    monkeypatch.setattr(tasks.post_job, "delay", lambda *args: calls.append((args, None)))
    return calls


def test_two_re_collections_share_one_listing(fake_prolific, job_factory, organizer, settings, queued):
    settings.QUORUM_RECOLLECTION_POST_DELAY_SECONDS = 300
    job = _live_on_prolific(job_factory)
    first, second = _answered_by_the_crowd(job, 2)
    queued.clear()

    for response in (first, second):  # two decisions, as two votes would come in
        with TestCase.captureOnCommitCallbacks(execute=True):
            [result] = bulk_decide(job, [response.pk], action="recollect", reason="unreadable", by=organizer)
        assert result.ok, result.message
    assert queued == [((job.pk,), 300), ((job.pk,), 300)]  # each waits; none posted yet
    assert Posting.objects.filter(job=job).count() == 1

    post_job(job, concurrency=1)  # the first delayed post: both places in one study
    post_job(job, concurrency=1)  # the second finds nothing left to post
    assert list(Posting.objects.filter(job=job).order_by("seq").values_list("assignments", "state")) == [
        (3, Posting.State.CREATED), (2, Posting.State.CREATED)
    ]


def test_with_no_delay_each_re_collection_is_posted_at_once(fake_prolific, job_factory, organizer, settings, queued):
    settings.QUORUM_RECOLLECTION_POST_DELAY_SECONDS = 0
    job = _live_on_prolific(job_factory)
    [response] = _answered_by_the_crowd(job, 1)
    queued.clear()
    with TestCase.captureOnCommitCallbacks(execute=True):
        bulk_decide(job, [response.pk], action="recollect", reason="unreadable", by=organizer)
    assert queued == [((job.pk,), None)]


def test_an_in_house_re_collection_is_open_at_once(job_factory, make_annotator, organizer, settings, queued):
    settings.QUORUM_RECOLLECTION_POST_DELAY_SECONDS = 300
    job = job_factory(turns=3, reward="0.50")
    configure_crowd(job, provider="inhouse", budget="10.00")
    job = launch_crowd_job(job)
    worker = make_annotator("writer")[1]
    slot = claim_next_slot(job=job, worker=worker)
    response = submit_response(slot_id=slot.id, worker=worker, answers=ANSWERS)
    queued.clear()
    with TestCase.captureOnCommitCallbacks(execute=True):
        bulk_decide(job, [response.pk], action="recollect", reason="unreadable", by=organizer)
    assert queued == [((job.pk,), None)]  # no listing to share: annotators may take it now
