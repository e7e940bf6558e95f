"""A re-collection's place posted at the crowd, then taken back because a reviewer accepted the
turned-down response after all, stops being listed (no worker is sent to an item that needs nobody)
and its reservation goes back to the budget once no worker can still be inside the listing."""
from datetime import timedelta
from decimal import Decimal

import pytest
from django.test import TestCase
from django.utils import timezone

from annotation.models import Slot, Worker
from annotation.services.claims import claim_next_slot, submit_response
from annotation.services.review import bulk_decide
from hits.models import JobCrowdConfig, Posting, ProviderAssignment
from hits.providers.base import Confirmation
from hits.services.config import configure_crowd
from hits.services.confirmation import apply_verdict
from hits.services.postings import launch_crowd_job
from hits.services.reconcile import reconcile_job
from tests.hits.conftest import ANSWERS

pytestmark = pytest.mark.django_db


def _committed(job):
    return JobCrowdConfig.objects.get(job=job).committed


def _postings(job):
    return list(Posting.objects.filter(job=job).order_by("seq").values_list("assignments", "state"))


@pytest.fixture
def recollected(fake_prolific, job_factory, organizer):
    """A live Prolific job of two items, one answered, whose response a reviewer sent back to be
    collected again: the new place is posted as a study of its own."""
    job = job_factory(turns=2, reward="0.50")
    configure_crowd(job, provider="prolific", budget="3.00", prolific_fee_rate="0.3333")
    with TestCase.captureOnCommitCallbacks(execute=True):
        job = launch_crowd_job(job)
    worker = Worker.objects.create(provider="prolific", external_id="P-WRITER")
    slot = claim_next_slot(job=job, worker=worker)
    response = submit_response(slot_id=slot.id, worker=worker, answers=ANSWERS)
    entry = ProviderAssignment.objects.create(  # the Prolific submission it came through
        posting=Posting.objects.get(job=job), provider="prolific", external_id="SUB-WRITER", worker=worker, slot=slot,
        response=response, state="submitted",
    )
    apply_verdict(entry, response, Confirmation(Confirmation.CONFIRMED, "Prolific lists the submission"))
    with TestCase.captureOnCommitCallbacks(execute=True):
        [result] = bulk_decide(job, [response.pk], action="recollect", reason="unreadable", by=organizer)
    assert result.ok, result.message
    assert _postings(job) == [(2, Posting.State.CREATED), (1, Posting.State.CREATED)]
    assert _committed(job) == Decimal("2.01")  # $1.00 + $0.34 fee, then $0.50 + $0.17 (Prolific's fee rounded up)
    return job, response


def test_accepting_the_response_closes_the_re_collections_listing_and_gives_its_money_back(recollected, organizer):
    job, response = recollected
    with TestCase.captureOnCommitCallbacks(execute=True):  # the reconciliation the withdrawal asks for runs here
        [result] = bulk_decide(job, [response.pk], action="accept", reason="fine after all", by=organizer)
    assert "re-collection, which no one had started, is withdrawn" in result.message
    assert not Slot.objects.filter(job=job, collection=2).exists()
    assert _postings(job) == [(2, Posting.State.CREATED), (1, Posting.State.CLOSED)]  # the launch's study stays

    # Its place goes back once no worker can still be inside the closed study (the claim timeout).
    later = timezone.now() + timedelta(minutes=job.claim_timeout_minutes + 30)
    summary = reconcile_job(job.pk, now=later, grace_seconds=0)
    assert summary["released"] == "0.67" and _committed(job) == Decimal("1.34")
    assert reconcile_job(job.pk, now=later, grace_seconds=0)["released"] == "0.00"  # once


def test_a_listing_a_worker_has_taken_a_place_on_is_not_closed(recollected, organizer):
    job, response = recollected
    newest = Posting.objects.filter(job=job).order_by("-seq").first()
    participant = Worker.objects.create(provider="prolific", external_id="P-INSIDE")
    ProviderAssignment.objects.create(posting=newest, provider="prolific", external_id="SUB-1", worker=participant, state="accepted")
    with TestCase.captureOnCommitCallbacks(execute=True):
        bulk_decide(job, [response.pk], action="accept", reason="fine after all", by=organizer)
    # Someone is inside the re-collection's study, and the launch's is larger than the one place
    # too many (its other place is still needed): both stay listed.
    assert _postings(job) == [(2, Posting.State.CREATED), (1, Posting.State.CREATED)]
    assert _committed(job) == Decimal("2.01")
