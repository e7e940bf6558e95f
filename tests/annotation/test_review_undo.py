"""Undo of a review decision (issue 23): a single or bulk accept/reject taken back from the audit
trail with a reason; the response returns to its previous state, the undo is an audit row, and what
cannot be undone is refused with the reason while the others go on."""
import pytest
from django.urls import reverse

from annotation.models import CheckOverride, DecisionUndo, Response, ResponseTransition
from annotation.services.claims import claim_next_slot, submit_response
from annotation.services.quality import QualityError
from annotation.services.review import bulk_decide
from annotation.services.review_undo import undo_decision, undo_decisions
from tests.factories import good_answers, make_corpus, make_live_job

pytestmark = pytest.mark.django_db


def _submit(job, worker):
    slot = claim_next_slot(job=job, worker=worker)
    return submit_response(slot_id=slot.id, worker=worker, answers=good_answers(slot.item))


@pytest.fixture
def three(make_annotator):
    job = make_live_job(make_corpus(dialogs=3, user_turns=1), name="rewrites")
    worker = make_annotator("ann")[1]
    responses = [_submit(job, worker) for _ in range(3)]
    return job, responses


def test_a_bulk_rejection_is_undone_with_its_reason_in_each_audit_trail(three, organizer):
    job, responses = three
    results = bulk_decide(job, [r.pk for r in responses], action="reject", reason="looked copied", by=organizer)
    assert all(r.ok for r in results)
    assert Response.objects.filter(pk__in=[r.pk for r in responses], status="rejected").count() == 3

    undone = undo_decisions(job, [r.decision_id for r in results], reason="they were original after all", by=organizer)

    assert [u.ok for u in undone] == [True, True, True]
    assert [u.message for u in undone] == ["back to accepted"] * 3
    for response in responses:
        response.refresh_from_db()
        assert response.status == Response.Status.ACCEPTED
        assert "override" not in response.checks  # the reviewer's verdict no longer stands
        last = ResponseTransition.objects.filter(response=response).order_by("-created_at", "-pk").first()
        assert (last.from_status, last.to_status, last.by) == ("rejected", "accepted", organizer)
        assert "they were original after all" in last.reason and "looked copied" in last.reason
    assert DecisionUndo.objects.filter(reason="they were original after all").count() == 3


def test_an_undone_decision_is_not_undone_twice_and_a_replaced_one_waits_for_the_later(three, organizer):
    job, responses = three
    first = responses[0]
    reject = bulk_decide(job, [first.pk], action="reject", reason="r1", by=organizer)[0]
    exclude = bulk_decide(job, [first.pk], action="exclude", reason="r2", by=organizer)[0]

    with pytest.raises(QualityError, match="later decision .*excluded.* undo that one first"):
        undo_decision(CheckOverride.objects.get(pk=reject.decision_id), reason="no")
    assert undo_decision(CheckOverride.objects.get(pk=exclude.decision_id), reason="step back") == "rejected"
    # Now the rejection is the standing decision again, and the response's checks say so.
    first.refresh_from_db()
    assert first.status == "rejected" and first.checks["override"]["reason"] == "r1"
    with pytest.raises(QualityError, match="undone already"):
        undo_decision(CheckOverride.objects.get(pk=exclude.decision_id), reason="again")
    assert undo_decision(CheckOverride.objects.get(pk=reject.decision_id), reason="all the way") == "accepted"


def test_a_response_moved_on_since_the_decision_is_refused_and_the_others_go_on(three, organizer):
    from annotation.services.response_status import transition

    job, responses = three
    results = bulk_decide(job, [r.pk for r in responses], action="reject", reason="bad", by=organizer)
    transition(responses[1], Response.Status.EXCLUDED, actor="flags", reason="flagged later")  # not a reviewer's decision

    undone = undo_decisions(job, [r.decision_id for r in results] + [999999], reason="oops", by=organizer)

    assert [u.ok for u in undone] == [True, False, True, False]
    assert undone[1].message.startswith("the response is excluded") and "decide it again" in undone[1].message
    assert undone[3].message == "not a decision on this job"
    assert Response.objects.get(pk=responses[1].pk).status == "excluded"


def test_an_undo_needs_a_reason_and_changes_nothing_without_one(three, organizer):
    job, responses = three
    results = bulk_decide(job, [responses[0].pk], action="reject", reason="bad", by=organizer)
    with pytest.raises(QualityError, match="reason"):
        undo_decisions(job, [results[0].decision_id], reason="  ")
    assert Response.objects.get(pk=responses[0].pk).status == "rejected"
    assert not DecisionUndo.objects.exists()


def test_a_recollected_item_cannot_be_undone(make_annotator, organizer):
    job = make_live_job(make_corpus(dialogs=1, user_turns=1), name="rewrites")
    response = _submit(job, make_annotator("ann")[1])
    result = bulk_decide(job, [response.pk], action="recollect", reason="redo it", by=organizer)[0]
    assert result.ok
    outcome = undo_decisions(job, [result.decision_id], reason="oops")[0]
    assert not outcome.ok and "re-collected" in outcome.message
    assert Response.objects.get(pk=response.pk).status == "rejected"


def test_the_decisions_page_groups_a_bulk_decision_and_undoes_it(client, three, organizer):
    job, responses = three
    results = bulk_decide(job, [r.pk for r in responses[:2]], action="reject", reason="copied", by=organizer)
    client.force_login(organizer)
    page = client.get(reverse("organizer:job-review-decisions", kwargs={"pk": job.pk}))
    assert page.status_code == 200
    body = page.content.decode()
    assert body.count('class="card decision-group"') == 1 and 'data-count="2"' in body

    refused = client.post(reverse("organizer:job-review-undo", kwargs={"pk": job.pk}), {"decision": [results[0].decision_id], "reason": ""}, follow=True)
    assert "Nothing was undone: give the reason" in refused.content.decode()
    assert Response.objects.get(pk=responses[0].pk).status == "rejected"

    done = client.post(
        reverse("organizer:job-review-undo", kwargs={"pk": job.pk}),
        {"decision": [r.decision_id for r in results], "reason": "wrong job"},
        follow=True,
    )
    text = done.content.decode()
    assert "2 of 2 decisions undone" in text and "undone by olga: “wrong job”" in text
    assert Response.objects.filter(pk__in=[r.pk for r in responses], status="accepted").count() == 3
