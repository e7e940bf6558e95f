"""Prolific hooks with hostile fields (issue 25, low items): correctly signed deliveries whose
body is over-long, holds NUL or a lone surrogate, nests deeply, or has NaN are refused with a 4xx
and a reason, never a 500; a timestamp of "nan" is refused; a captured delivery replayed under a
new X-Event-ID is refused. Signed here with the hooks' own `signature`."""
import json
import time

import pytest

from hits.models import ProviderEvent
from hits.providers.prolific import hooks

HOOK_PATH = "/crowd/prolific/hooks/"
SECRET = "a-prolific-hook-secret"

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _secret(monkeypatch):
    monkeypatch.setenv("PROLIFIC_HOOK_SECRET", SECRET)


def _deliver(client, body: bytes, *, event_id="evt-1", timestamp=None):
    timestamp = str(int(time.time())) if timestamp is None else timestamp
    headers = {
        hooks.SIGNATURE_HEADER: hooks.signature(SECRET, timestamp, body), hooks.TIMESTAMP_HEADER: timestamp,
        hooks.EVENT_ID_HEADER: event_id,
    }
    return client.post(HOOK_PATH, data=body, content_type="application/json", headers=headers)


def _event(**fields) -> bytes:
    return json.dumps({"event_type": hooks.EVENT_TYPE, "resource_id": "sub1", "status": "RETURNED", "participant_id": "p1", **fields}).encode()


HOSTILE = {
    "long_resource_id": _event(resource_id="x" * 100_000),
    "long_status": _event(status="A" * 5000),
    "nul_in_resource_id": b'{"event_type": "submission.status.change", "resource_id": "a\\u0000b", "status": "RETURNED"}',
    "nul_in_participant": b'{"event_type": "submission.status.change", "resource_id": "a", "status": "RETURNED", "participant_id": "\\u0000"}',
    "lone_surrogate": b'{"event_type": "submission.status.change", "resource_id": "\\ud800", "status": "RETURNED"}',
    "deep_nesting": b'{"event_type": "submission.status.change", "resource_id": ' + b"[" * 5000 + b"]" * 5000 + b', "status": "x"}',
    "object_as_id": _event(resource_id={"a": 1}),
    "list_as_status": _event(status=["RETURNED"]),
    "bool_as_id": _event(resource_id=True),
    "nan": b'{"event_type": "submission.status.change", "resource_id": NaN, "status": "RETURNED"}',
    "infinity": b'{"event_type": "submission.status.change", "resource_id": 1e999, "status": "RETURNED"}',
    "invalid_utf8": b'{"event_type": "submission.status.change", "resource_id": "\xff", "status": "RETURNED"}',
    "not_an_object": b'["submission.status.change"]',
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_signed_delivery_with_hostile_fields_is_a_4xx_with_a_reason(client, case):
    answer = _deliver(client, HOSTILE[case])
    assert 400 <= answer.status_code < 500 and answer.json()["detail"]
    assert not ProviderEvent.objects.exists()


@pytest.mark.parametrize("timestamp", ["nan", "inf", "-inf", "1e9", "-1", " 1", "0x10", "1" * 30, "١٢٣"])
def test_a_timestamp_that_is_not_whole_unix_seconds_is_refused(client, timestamp):
    answer = _deliver(client, _event(), timestamp=timestamp)
    assert answer.status_code == 403 and "timestamp" in answer.json()["detail"]


def test_a_captured_delivery_replayed_under_a_new_event_id_is_refused(client):
    body, timestamp = _event(resource_id="unknown-submission"), str(int(time.time()))
    first = _deliver(client, body, event_id="evt-a", timestamp=timestamp)
    assert first.status_code == 200
    assert _deliver(client, body, event_id="evt-a", timestamp=timestamp).json()["detail"] == "duplicate"  # a redelivery
    replay = _deliver(client, body, event_id="evt-b", timestamp=timestamp)
    assert replay.status_code == 403 and "replay" in replay.json()["detail"]
    assert list(ProviderEvent.objects.values_list("event_id", flat=True)) == ["evt-a"]
