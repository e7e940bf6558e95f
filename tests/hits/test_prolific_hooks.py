"""Prolific's submission status hooks, against the local fake over HTTP: subscribing, signed deliveries,
each event once, returned and timed-out claims freed at once, AWAITING REVIEW confirming a response."""
import json

import pytest

from annotation.models import Response, Slot
from annotation.services.claims import submit_response
from hits import providers
from hits.models import Posting, ProviderAssignment, ProviderEvent
from hits.services.config import configure_crowd
from hits.services.postings import launch_crowd_job, post_job
from tests.hits.conftest import ANSWERS

HOOK_PATH = "/crowd/prolific/hooks/"


@pytest.fixture
def study(fake_prolific, job_factory):
    job = job_factory(turns=3)
    configure_crowd(job, provider="prolific", budget="20")
    launch_crowd_job(job)
    post_job(job, concurrency=1)
    return job, Posting.objects.get(job=job)


def _subscribe(fake, monkeypatch, target):
    result = providers.get("prolific").subscribe_hooks(workspace_id="ws1", target_url=target)
    monkeypatch.setenv("PROLIFIC_HOOK_SECRET", result["secret"])
    return result


def _arrive(client, fake, posting, pid):
    session = fake.start_submission(posting.external_id, pid)
    query = f"PROLIFIC_PID={pid}&STUDY_ID={posting.external_id}&SESSION_ID={session}"
    assert client.get(f"/crowd/prolific/{posting.job_id}/?{query}").status_code == 302
    return ProviderAssignment.objects.get(external_id=session)


def _one_delivery(study, fake, client, monkeypatch, pid, end):
    """A participant arrives and their submission ends at Prolific (`end`): (assignment, the signed delivery)."""
    _, posting = study
    _subscribe(fake, monkeypatch, "https://quorum.example.org" + HOOK_PATH)
    assignment = _arrive(client, fake, posting, pid)
    end(assignment.external_id)
    return assignment, fake.deliveries.pop()


def _post(client, delivery):
    return client.post(HOOK_PATH, data=delivery["body"], content_type="application/json", headers=delivery["headers"])


def test_subscribing_makes_a_confirmed_subscription(fake_prolific, monkeypatch):
    result = _subscribe(fake_prolific, monkeypatch, "https://quorum.example.org" + HOOK_PATH)
    sub = fake_prolific.subscriptions[result["subscription"]]
    assert sub["is_enabled"] and sub["event_type"] == "submission.status.change"
    assert sub["target_url"] == "https://quorum.example.org" + HOOK_PATH
    assert result["secret"] == fake_prolific.hook_secrets["ws1"]
    # Subscribing again reuses the workspace's one secret.
    assert _subscribe(fake_prolific, monkeypatch, "https://quorum.example.org" + HOOK_PATH)["secret"] == result["secret"]


@pytest.mark.django_db(transaction=True)
def test_hooks_over_http_free_returned_claims_and_confirm_submissions(study, fake_prolific, live_server, client, monkeypatch, work_tokens):
    job, posting = study
    _subscribe(fake_prolific, monkeypatch, live_server.url + HOOK_PATH)
    returned, timed_out, finished = (_arrive(client, fake_prolific, posting, pid) for pid in ("preturns", "ptimeout", "pfinish"))
    # The prompt confirmation fails (Prolific refuses the call at that moment): the response waits.
    monkeypatch.setenv("PROLIFIC_TOKEN", "expired-token")
    response = submit_response(slot_id=finished.slot_id, worker=finished.worker, answers=ANSWERS)
    monkeypatch.setenv("PROLIFIC_TOKEN", "secret-prolific-token")
    assert Response.objects.get(pk=response.pk).status == Response.Status.AWAITING_CONFIRMATION

    fake_prolific.return_submission(returned.external_id)
    fake_prolific.time_out(timed_out.external_id)
    fake_prolific.complete(finished.external_id)
    assert fake_prolific.deliver() == [200, 200, 200]

    for gone in (returned, timed_out):
        gone.refresh_from_db()
        assert gone.state == ProviderAssignment.State.RETURNED and gone.place is None
        assert Slot.objects.get(pk=gone.slot_id).state == Slot.State.OPEN  # at once, not at the claim's expiry
    assert Response.objects.counted().filter(pk=response.pk).exists()
    assert ProviderEvent.objects.count() == 3


def test_a_bad_signature_is_refused_with_a_reason_and_changes_nothing(study, fake_prolific, client, monkeypatch, work_tokens):
    assignment, delivery = _one_delivery(study, fake_prolific, client, monkeypatch, "pforged", fake_prolific.return_submission)
    forged = dict(delivery, headers={**delivery["headers"], "X-Prolific-Request-Signature": "bm90IGEgc2lnbmF0dXJl"})
    answer = _post(client, forged)
    assert answer.status_code == 403 and "signature" in answer.json()["detail"]
    unsigned = dict(delivery, headers={"X-Event-ID": "e1"})
    assert _post(client, unsigned).status_code == 403
    tampered = dict(delivery, body=delivery["body"].replace(b"RETURNED", b"APPROVED"))
    assert _post(client, tampered).status_code == 403
    assignment.refresh_from_db()
    assert assignment.state == ProviderAssignment.State.ACCEPTED and assignment.place is not None
    assert Slot.objects.get(pk=assignment.slot_id).state == Slot.State.CLAIMED
    assert not ProviderEvent.objects.exists()


def test_an_event_delivered_twice_is_acted_on_once(study, fake_prolific, client, monkeypatch, work_tokens):
    _, delivery = _one_delivery(study, fake_prolific, client, monkeypatch, "ptwice", fake_prolific.time_out)
    first, second = _post(client, delivery), _post(client, delivery)
    assert first.status_code == second.status_code == 200
    assert first.json()["detail"] == "returned: claim freed" and second.json()["detail"] == "duplicate"
    assert ProviderEvent.objects.filter(event_id=delivery["headers"]["X-Event-ID"]).count() == 1
    assert json.loads(delivery["body"])["status"] == "TIMED-OUT"
