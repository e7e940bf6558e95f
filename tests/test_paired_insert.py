"""quorum.paired_insert: a stored response and the audit row of its first state, in one statement on
PostgreSQL, both or neither, the instances left as `save()` leaves them."""
import pytest
from django.db import DataError, connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotation.models import Response, ResponseTransition
from annotation.services.claims import claim_next_slot
from annotation.services.response_status import store_with_first_state
from quorum.paired_insert import insert_pair
from tests.factories import make_corpus, make_live_job

pytestmark = pytest.mark.django_db


@pytest.fixture
def unsaved_response(make_annotator):
    job = make_live_job(make_corpus(dialogs=1, user_turns=1))
    _user, worker = make_annotator("anna")
    slot = claim_next_slot(job=job, worker=worker)
    slot.item.job = job  # as the submission has it: the followers of a new state read the job
    claimed_at = timezone.now() - timezone.timedelta(seconds=42)
    return Response(
        slot=slot, item=slot.item, worker=worker, answers={"paraphrase": "a table for two"}, claimed_at=claimed_at,
        status=Response.Status.ACCEPTED,
    )


@pytest.mark.postgres
def test_a_response_and_its_first_state_are_stored_in_one_statement(unsaved_response):
    with CaptureQueriesContext(connection) as captured:
        row = store_with_first_state(unsaved_response, actor="worker", reason="")

    assert len(captured.captured_queries) == 1, [q["sql"] for q in captured.captured_queries]
    stored = Response.objects.get(pk=unsaved_response.pk)
    assert stored.answers == {"paraphrase": "a table for two"}
    # What save() computes for a new row: the moment it was stored, and the seconds from the claim.
    assert stored.submitted_at == unsaved_response.submitted_at is not None
    assert stored.work_seconds == pytest.approx((stored.submitted_at - stored.claimed_at).total_seconds())
    assert unsaved_response.work_seconds == stored.work_seconds
    audit = ResponseTransition.objects.get(response=stored)
    assert (audit.pk, audit.from_status, audit.to_status, audit.actor, audit.by_id) == (row.pk, "", "accepted", "worker", None)
    assert row.response_id == stored.pk and row.created_at is not None
    assert not unsaved_response._state.adding and not row._state.adding


@pytest.mark.postgres  # SQLite does not hold a text to its column's length
@pytest.mark.django_db(transaction=True)  # autocommit: no transaction of the caller's to take the first row back
def test_when_the_audit_row_cannot_be_stored_the_response_is_not_stored_either(unsaved_response):
    follower = ResponseTransition(from_status="", to_status="x" * 500, actor="worker", reason="")  # longer than the column

    with pytest.raises(DataError):
        insert_pair(unsaved_response, follower, "response")

    assert not Response.objects.filter(slot=unsaved_response.slot).exists()
    assert not ResponseTransition.objects.exists()
