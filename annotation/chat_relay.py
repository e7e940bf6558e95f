"""How a chat item's page reaches the dialog system it names, without annotation knowing systems.

A chat item's payload names an opaque `endpoint` (no system name in it). The work page posts the
worker's turns to `/work/<token>/chat/` (annotation.web.views.work_chat), which hands them to the relay
registered in `extensions.chat_relays` under the payload's `relay` key. The evaluation app fills it
in its `AppConfig.ready()` (as hits fills `extensions.submit_redirects`): it knows the systems, signs
the requests, records every turn and turns a failure into a polite fallback. So annotation never
imports evaluation, and a test can register a relay of its own.

A relay keeps the transcript; when the worker submits, the chat task type reads it back
(`RelaysChat.server_answers`), so the stored response holds what was really said, not what a page
posted.
"""
from collections.abc import Mapping
from typing import Any

from django.utils.crypto import salted_hmac

from .extensions import chat_relays

DEFAULT_RELAY = "systems"
#: The longest message a worker may send (the page shows it and counts; the server refuses a longer one).
MAX_MESSAGE_CHARS = 1000
FALLBACK = "Sorry, the system did not answer. Please send your message again."
#: A failed opening: the worker has sent nothing yet, so "send your message again" would puzzle them.
OPENING_FALLBACK = "Sorry, the system did not answer. Write your first message: it may answer that."
BUSY = "Sorry, the system is busy with other conversations. Please try again in a moment."
UNAVAILABLE = (
    "Sorry, this system is not available right now. Please end the conversation (pick Fail) and submit: "
    "you will not be penalised, and no ratings are needed."
)


class RelayUnavailable(Exception):
    """No relay is registered for a chat item (the app that provides it is not installed)."""


class ChatClosed(Exception):
    """The conversation has ended: no more turns (str() says so to the worker)."""


class ChatBusy(ChatClosed):
    """The system has not answered the worker's last message yet (a double send): try again."""


class ChatRelay:
    """What a relay does. Every method returns the transcript so far: [{"role": "user"|"system",
    "text", "failed": bool, "offered": object|None}], whether the conversation has ended, and
    whether the system has stopped answering ("unavailable": it was paused, and the worker may end
    without ratings; one failed turn is not that, the worker sends the message again)."""

    def open(self, endpoint: str, session_key: str, goal: Mapping | None) -> dict:
        """Open the conversation if it is not open yet: {"turns": [...], "ended": bool}."""
        raise NotImplementedError

    def say(self, endpoint: str, session_key: str, text: str) -> dict:
        """Relay one user turn (or retry the last failed one) and return the transcript."""
        raise NotImplementedError

    def end(self, endpoint: str, session_key: str, reason: str) -> dict:
        """Tell the system the conversation is over (success | fail | abandoned | timeout)."""
        raise NotImplementedError

    def transcript(self, endpoint: str, session_key: str) -> dict:
        """The transcript as recorded, without calling the system."""
        raise NotImplementedError

    def paused_endpoints(self) -> set[str]:
        """Endpoints that get no new conversations for now (a system that kept failing)."""
        return set()

    def paused_endpoints_query(self) -> Any:
        """The same as a query of one column, each endpoint as the JSON value an item's
        `payload__endpoint` compares to, or None when the relay cannot say it in SQL. The claim reads
        it inside its own statement: no read of its own, and a pause counts from the next claim on."""
        return None


def relay_for(payload: Mapping) -> ChatRelay:
    key = payload.get("relay") or DEFAULT_RELAY
    try:
        return chat_relays[key]
    except LookupError as exc:
        raise RelayUnavailable(str(exc)) from None


def paused_endpoints() -> Any:
    """What every relay holds back, for `payload__endpoint__in`: the query of the one relay that has
    one (`ChatRelay.paused_endpoints_query`) when no other pauses anything, else the set of all
    paused endpoints, read now."""
    queries, endpoints = [], set()
    for relay in chat_relays.values():
        query = relay.paused_endpoints_query()
        if query is None:
            endpoints |= relay.paused_endpoints()
        else:
            queries.append((relay, query))
    if len(queries) == 1 and not endpoints:
        return queries[0][1]
    return endpoints.union(*(relay.paused_endpoints() for relay, _query in queries))


def session_key(slot) -> str:
    """The conversation of one worker on one slot: the same after a reload or a re-claim by the same
    worker, another for another worker. Keyed by the server's secret so that a system, which sees
    the key, learns nothing about slot or worker ids."""
    return session_key_of(slot.pk, slot.worker_id)


def session_key_of(slot_id: int, worker_id: int | None) -> str:
    """`session_key` from the ids: the conversation a worker had on a slot they no longer hold."""
    return "q" + salted_hmac("quorum.chat-session", f"{slot_id}:{worker_id}").hexdigest()[:24]
