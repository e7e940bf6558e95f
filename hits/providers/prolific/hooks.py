"""Prolific's hooks: subscribing to submission status events, and receiving them.

From Prolific's API documentation ("Webhooks": Subscribing, Receiving, Verifying, Idempotency):
a workspace has one signing secret (POST /api/v1/hooks/secrets/); a subscription is made with POST
/api/v1/hooks/subscriptions/ {workspace_id, event_type, target_url} and confirmed by posting back the
X-Hook-Secret header it answered with to /api/v1/hooks/subscriptions/<id>/. Each delivery carries
X-Prolific-Request-Signature, the base64 HMAC-SHA256 of the X-Prolific-Request-Timestamp followed by
the body, under the workspace secret, and X-Event-ID, the same across redeliveries. The body of
`submission.status.change` is {resource_id (the submission), event_type, participant_id, status}.
"""
import base64
import hashlib
import hmac
import os
import time

from django.conf import settings
from django.core.cache import cache
from django.http import JsonResponse
from django.urls import path
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from quorum import strict_json

from .status import STATUS

EVENT_TYPE = "submission.status.change"
SIGNATURE_HEADER = "X-Prolific-Request-Signature"
TIMESTAMP_HEADER = "X-Prolific-Request-Timestamp"
EVENT_ID_HEADER = "X-Event-ID"
MAX_FIELD_CHARS = 128


class HookRefused(ValueError):
    """The delivery cannot be trusted or read; the message says why. Nothing was changed."""


def signature(secret: str, timestamp: str, body: bytes) -> str:
    digest = hmac.new(secret.encode(), timestamp.encode() + body, hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


def hook_secret() -> str:
    return os.environ.get(getattr(settings, "QUORUM_PROLIFIC_HOOK_SECRET_ENV", "PROLIFIC_HOOK_SECRET"), "")


def verify(headers, body: bytes, *, secret: str, now: float | None = None) -> dict:
    """The event of a delivery signed with `secret` and recent enough; HookRefused otherwise."""
    if not secret:
        raise HookRefused("hooks are not set up here: the signing secret is not configured")
    sent, timestamp = headers.get(SIGNATURE_HEADER, ""), headers.get(TIMESTAMP_HEADER, "")
    if not sent or not timestamp:
        raise HookRefused(f"unsigned: {SIGNATURE_HEADER} and {TIMESTAMP_HEADER} are required")
    if not hmac.compare_digest(signature(secret, timestamp, body), sent):
        raise HookRefused("the signature does not match the body and timestamp")
    if not (timestamp.isascii() and timestamp.isdigit() and len(timestamp) <= 12):
        raise HookRefused("the timestamp is not a UNIX time in whole seconds")  # "nan", "1e9", "-0" ...
    age = (time.time() if now is None else now) - int(timestamp)
    if abs(age) > int(getattr(settings, "QUORUM_PROLIFIC_HOOK_MAX_AGE_SECONDS", 600)):
        raise HookRefused("the timestamp is too far from now: a replayed delivery")
    event_id = headers.get(EVENT_ID_HEADER, "")
    if not event_id or len(event_id) > 128:
        raise HookRefused(f"{EVENT_ID_HEADER} is missing")
    try:
        event = strict_json.loads(body)
    except ValueError as exc:
        raise HookRefused(f"the body is not an event: {exc}") from None
    if not isinstance(event, dict):
        raise HookRefused("the body is not an event")
    # X-Event-ID is not covered by the signature: a captured delivery resent within the window under a
    # new id would be a new event. The signed content (timestamp and body) is remembered for the
    # window with the id it came with; the same content under another id is refused.
    signed = hashlib.sha256(timestamp.encode() + b"." + body).hexdigest()
    window = 2 * int(getattr(settings, "QUORUM_PROLIFIC_HOOK_MAX_AGE_SECONDS", 600)) + 60
    if not cache.add(f"quorum:prolific-hook:{signed}", event_id, window) and cache.get(f"quorum:prolific-hook:{signed}") != event_id:
        raise HookRefused("this signed delivery was received already under another event id: a replay")
    return {**event, "event_id": event_id}


def _field(event: dict, name: str) -> str:
    """A field of the event as text: at most MAX_FIELD_CHARS, or HookRefused."""
    value = event.get(name)
    if value is None:
        return ""
    if not isinstance(value, str | int) or isinstance(value, bool) or len(str(value)) > MAX_FIELD_CHARS:
        raise HookRefused(f"'{name}' must be an id of at most {MAX_FIELD_CHARS} characters")
    return str(value)


@csrf_exempt  # signed by Prolific, not by a browser session
@require_POST
def receive(request):
    """Prolific's submission status events: verified, kept once, acted on at once (thin: see hits.services.events)."""
    from ...services.events import record_status_event

    try:
        event = verify(request.headers, request.body, secret=hook_secret())
    except HookRefused as exc:
        return JsonResponse({"detail": str(exc)}, status=403)
    if event.get("event_type") != EVENT_TYPE:
        return JsonResponse({"detail": "event type not followed; acknowledged"})
    try:
        submission, status, participant = (_field(event, name) for name in ("resource_id", "status", "participant_id"))
    except HookRefused as exc:
        return JsonResponse({"detail": str(exc)}, status=400)
    if not submission or not status:
        return JsonResponse({"detail": "resource_id and status are required"}, status=400)
    outcome = record_status_event(
        "prolific", event_id=event["event_id"], event_type=EVENT_TYPE, assignment_external_id=submission,
        worker_external_id=participant, status=status, normalized=STATUS.get(status, ""),
    )
    return JsonResponse({"detail": outcome})


def url_patterns() -> list:
    return [path("prolific/hooks/", receive, name="prolific-hooks")]


def subscribe(api, *, workspace_id: str, target_url: str) -> dict:
    """Subscribe `target_url` to submission status events and confirm the subscription; returns
    {"subscription": id, "secret": the workspace's signing secret} (made if the workspace has none)."""
    secrets = api.request("GET", "/api/v1/hooks/secrets/", params={"workspace_id": workspace_id}).get("results") or []
    secret = secrets[0]["value"] if secrets else api.request(
        "POST", "/api/v1/hooks/secrets/", json={"workspace_id": workspace_id}
    )["value"]
    made = api.send(
        "POST", "/api/v1/hooks/subscriptions/",
        json={"workspace_id": workspace_id, "event_type": EVENT_TYPE, "target_url": target_url},
    )
    subscription = made.json()["id"]
    api.request("POST", f"/api/v1/hooks/subscriptions/{subscription}/", json={"secret": made.headers["X-Hook-Secret"]})
    return {"subscription": subscription, "secret": secret}
