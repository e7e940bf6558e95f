"""A job's reviewer decisions and their undo through the REST API (issue 23 follow-up): the list the
review decisions page shows, and `POST /api/jobs/{id}/review/decisions/{decision_id}/undo/` with a
required reason; a decision that stands is a 409 with the reason the page gives, and nothing changes.
Organizers only: annotators get 403, anonymous callers 401."""
import pytest

from annotation.models import DecisionUndo, Response, ResponseTransition
from annotation.services.claims import claim_next_slot, submit_response
from annotation.services.review import bulk_decide
from tests.factories import good_answers, make_corpus, make_live_job

from .test_api import client_for

pytestmark = pytest.mark.django_db

DECISIONS = "/api/jobs/{}/review/decisions/"
UNDO = "/api/jobs/{}/review/decisions/{}/undo/"
UNDO_MANY = "/api/jobs/{}/review/decisions/undo/"


def _submit(job, worker):
    slot = claim_next_slot(job=job, worker=worker)
    return submit_response(slot_id=slot.id, worker=worker, answers=good_answers(slot.item))


@pytest.fixture
def decided(make_annotator, organizer):
    """A job with two responses: both rejected in one bulk decision, then the first excluded."""
    job = make_live_job(make_corpus(dialogs=2, user_turns=1), name="rewrites")
    worker = make_annotator("ann")[1]
    responses = [_submit(job, worker) for _ in range(2)]
    rejected = bulk_decide(job, [r.pk for r in responses], action="reject", reason="looked copied", by=organizer)
    excluded = bulk_decide(job, [responses[0].pk], action="exclude", reason="off topic", by=organizer)[0]
    return job, responses, rejected, excluded


def _state():
    return list(Response.objects.order_by("pk").values_list("pk", "status")), DecisionUndo.objects.count()


def test_the_decisions_are_listed_newest_first_with_who_why_and_the_state_now(organizer_api, decided):
    job, responses, rejected, excluded = decided
    answer = organizer_api.get(DECISIONS.format(job.pk))
    assert answer.status_code == 200
    body = answer.json()
    assert body["count"] == 3
    first = body["results"][0]
    assert first["id"] == excluded.decision_id and first["response"] == responses[0].pk
    assert (first["previous_status"], first["new_status"], first["response_status"]) == ("rejected", "excluded", "excluded")
    assert (first["reason"], first["by"], first["undo"]) == ("off topic", "olga", None)
    assert {row["id"] for row in body["results"][1:]} == {r.decision_id for r in rejected}


def test_an_organizer_undoes_a_decision_with_a_reason_and_the_response_goes_back(organizer_api, decided):
    job, responses, _rejected, excluded = decided
    answer = organizer_api.post(UNDO.format(job.pk, excluded.decision_id), {"reason": "it was on topic"}, format="json")
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert body["response_status"] == "rejected" and body["undo"]["reason"] == "it was on topic" and body["undo"]["by"] == "olga"
    assert Response.objects.get(pk=responses[0].pk).status == "rejected"
    last = ResponseTransition.objects.filter(response=responses[0]).order_by("-created_at", "-pk").first()
    assert (last.from_status, last.to_status) == ("excluded", "rejected") and "it was on topic" in last.reason
    listed = organizer_api.get(DECISIONS.format(job.pk)).json()["results"][0]
    assert listed["id"] == excluded.decision_id and listed["undo"]["reason"] == "it was on topic"


def test_a_decision_that_stands_is_a_409_with_the_pages_reason_and_nothing_changes(organizer_api, decided):
    job, responses, rejected, excluded = decided
    replaced = next(r for r in rejected if r.response_id == responses[0].pk)
    before = _state()
    answer = organizer_api.post(UNDO.format(job.pk, replaced.decision_id), {"reason": "step back"}, format="json")
    assert answer.status_code == 409
    detail = answer.json()["detail"]
    assert detail.startswith("a later decision (excluded") and detail.endswith("replaced it: undo that one first")
    assert _state() == before

    assert organizer_api.post(UNDO.format(job.pk, excluded.decision_id), {"reason": "first"}, format="json").status_code == 200
    again = organizer_api.post(UNDO.format(job.pk, excluded.decision_id), {"reason": "again"}, format="json")
    assert again.status_code == 409 and again.json()["detail"] == "this decision was undone already"


def test_a_bulk_decision_is_undone_with_one_reason_and_each_that_stands_says_why(organizer_api, decided):
    job, responses, rejected, excluded = decided
    ids = [r.decision_id for r in rejected] + [excluded.decision_id, 999999]
    answer = organizer_api.post(UNDO_MANY.format(job.pk), {"decisions": ids, "reason": "wrong job"}, format="json")
    assert answer.status_code == 200, answer.content
    body = answer.json()
    # In the order given: the first rejection was replaced by the exclusion (still standing when its turn came).
    by_id = {r["decision_id"]: r for r in body["results"]}
    assert [r["decision_id"] for r in body["results"]] == ids
    first_reject = next(r for r in rejected if r.response_id == responses[0].pk)
    second_reject = next(r for r in rejected if r.response_id == responses[1].pk)
    assert by_id[first_reject.decision_id]["ok"] is False and "undo that one first" in by_id[first_reject.decision_id]["message"]
    assert by_id[second_reject.decision_id] == {"decision_id": second_reject.decision_id, "response_id": responses[1].pk, "ok": True, "message": "back to accepted"}
    assert by_id[excluded.decision_id]["ok"] is True
    assert by_id[999999] == {"decision_id": 999999, "response_id": None, "ok": False, "message": "not a decision on this job"}
    assert body["undone"] == 2
    assert [Response.objects.get(pk=r.pk).status for r in responses] == ["rejected", "accepted"]


@pytest.mark.parametrize(("body", "field"), [
    ({"decisions": [], "reason": "x"}, "decisions"), ({"decisions": [1]}, "reason"), ({"decisions": ["a"], "reason": "x"}, "decisions"),
    ({"decisions": list(range(1, 502)), "reason": "x"}, "decisions"),
])
def test_a_bad_bulk_undo_is_a_400_naming_the_field_and_changes_nothing(organizer_api, decided, body, field):
    job = decided[0]
    before = _state()
    answer = organizer_api.post(UNDO_MANY.format(job.pk), body, format="json")
    assert answer.status_code == 400 and field in answer.json()
    assert _state() == before


@pytest.mark.parametrize(("body", "field"), [({}, "reason"), ({"reason": "   "}, "reason"), ({"reason": "x", "why": "y"}, "why")])
def test_an_undo_without_a_reason_is_a_400_naming_the_field_and_changes_nothing(organizer_api, decided, body, field):
    job, _responses, _rejected, excluded = decided
    before = _state()
    answer = organizer_api.post(UNDO.format(job.pk, excluded.decision_id), body, format="json")
    assert answer.status_code == 400 and field in answer.json()
    assert _state() == before


def test_a_decision_of_another_job_is_a_404(organizer_api, decided):
    _job, _responses, _rejected, excluded = decided
    other = make_live_job(make_corpus(name="hotels", dialogs=1, user_turns=1), name="other")
    before = _state()
    assert organizer_api.post(UNDO.format(other.pk, excluded.decision_id), {"reason": "x"}, format="json").status_code == 404
    assert organizer_api.post(UNDO.format(other.pk, 10**30), {"reason": "x"}, format="json").status_code == 404
    assert organizer_api.get(DECISIONS.format(other.pk)).json()["count"] == 0
    assert _state() == before


@pytest.mark.parametrize("who, expected", [("anonymous", 401), ("annotator", 403)])
def test_only_organizers_list_or_undo_decisions(decided, make_annotator, who, expected):
    job, _responses, _rejected, excluded = decided
    client = client_for(None if who == "anonymous" else make_annotator("someone")[0])
    before = _state()
    assert client.get(DECISIONS.format(job.pk)).status_code == expected
    assert client.post(UNDO.format(job.pk, excluded.decision_id), {"reason": "mine"}, format="json").status_code == expected
    assert client.post(UNDO_MANY.format(job.pk), {"decisions": [excluded.decision_id], "reason": "mine"}, format="json").status_code == expected
    assert _state() == before
