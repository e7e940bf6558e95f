"""Undoing a review decision respects the money at a crowd provider (issue 23): a paid approval is
not un-paid, a rejection sent to the provider stands, a rejection never sent can be undone."""
from decimal import Decimal

import pytest

from annotation.models import Response, Worker
from annotation.services.claims import claim_next_slot, submit_response
from annotation.services.review import bulk_decide
from annotation.services.review_undo import undo_decisions
from hits.models import Payment, Posting, ProviderAssignment
from tests.factories import good_answers, make_corpus, make_live_job

pytestmark = pytest.mark.django_db


@pytest.fixture
def crowd_response(make_annotator):
    """An accepted response whose worker came through an MTurk assignment (submitted, not settled)."""
    job = make_live_job(make_corpus(dialogs=1, user_turns=1), name="rewrites")
    worker = make_annotator("ann")[1]
    slot = claim_next_slot(job=job, worker=worker)
    response = submit_response(slot_id=slot.id, worker=worker, answers=good_answers(slot.item))
    posting = Posting.objects.create(
        job=job, provider="mturk", seq=1, request_token="tok-1", external_id="HIT1", state="created",
        assignments=1, reward=Decimal("0.50"), committed_cost=Decimal("0.60"),
    )
    turker = Worker.objects.create(provider="mturk", external_id="A1TURKER")
    assignment = ProviderAssignment.objects.create(
        posting=posting, provider="mturk", external_id="ASSIGN1", worker=turker, slot=slot, response=response, state="submitted",
    )
    return job, response, assignment


def _settle(assignment, kind, state):
    Payment.objects.create(assignment=assignment, kind=kind, state=state, idempotency_key=f"k-{assignment.pk}",
                           amount=Decimal("0.50") if kind == "approve" else Decimal("0"))
    if state == "confirmed":
        ProviderAssignment.objects.filter(pk=assignment.pk).update(state="approved" if kind == "approve" else "rejected")


def test_a_rejection_never_sent_to_the_provider_is_undone(crowd_response, organizer):
    job, response, _assignment = crowd_response
    decision = bulk_decide(job, [response.pk], action="reject", reason="copied", by=organizer)[0]
    outcome = undo_decisions(job, [decision.decision_id], reason="it was fine", by=organizer)[0]
    assert outcome.ok and outcome.message == "back to accepted"
    assert Response.objects.get(pk=response.pk).status == Response.Status.ACCEPTED


@pytest.mark.parametrize("state, why", [
    ("confirmed", "the rejection of Amazon Mechanical Turk assignment ASSIGN1 was sent to the provider, which keeps it; "
                  "the decision stands. If the worker deserves the pay, give a bonus from the job's crowd page"),
    ("sent", "a settlement of Amazon Mechanical Turk assignment ASSIGN1 is being sent to the provider"),
])
def test_a_rejection_sent_or_on_its_way_to_the_provider_stands(crowd_response, organizer, state, why):
    job, response, assignment = crowd_response
    decision = bulk_decide(job, [response.pk], action="reject", reason="copied", by=organizer)[0]
    _settle(assignment, "reject", state)
    outcome = undo_decisions(job, [decision.decision_id], reason="it was fine", by=organizer)[0]
    assert not outcome.ok and why in outcome.message
    assert Response.objects.get(pk=response.pk).status == Response.Status.REJECTED


def test_a_paid_approval_cannot_be_unpaid_but_an_exclusion_of_it_can_be_undone(crowd_response, organizer):
    job, response, assignment = crowd_response
    rejected = bulk_decide(job, [response.pk], action="reject", reason="copied", by=organizer)[0]
    accepted = bulk_decide(job, [response.pk], action="accept", reason="second look", by=organizer)[0]
    _settle(assignment, "approve", "confirmed")  # the reconciler pays the accepted response
    excluded = bulk_decide(job, [response.pk], action="exclude", reason="off topic", by=organizer)[0]
    assert undo_decisions(job, [excluded.decision_id], reason="on topic", by=organizer)[0].ok  # paid and accepted: consistent
    assert rejected.ok

    outcome = undo_decisions(job, [accepted.decision_id], reason="back to rejected", by=organizer)[0]

    assert not outcome.ok and "approved and paid at the provider" in outcome.message and "exclude the response instead" in outcome.message
    assert Response.objects.get(pk=response.pk).status == Response.Status.ACCEPTED


def test_a_paid_response_cannot_be_rejected_and_nothing_changes(crowd_response, organizer):
    """The review page said "Response 2: rejected (not paid)" of a response Prolific had already
    paid: the record and the money disagreed. The decision is refused, exclusion offered."""
    from annotation.models import CheckOverride

    job, response, assignment = crowd_response
    _settle(assignment, "approve", "confirmed")
    for action in ("reject", "recollect"):
        refused = bulk_decide(job, [response.pk], action=action, reason="copied", by=organizer)[0]
        assert not refused.ok
        assert "approved and paid at the provider" in refused.message and "exclude the response instead" in refused.message
    assert Response.objects.get(pk=response.pk).status == Response.Status.ACCEPTED
    assert not CheckOverride.objects.filter(response=response).exists()
    assert bulk_decide(job, [response.pk], action="exclude", reason="copied", by=organizer)[0].ok
