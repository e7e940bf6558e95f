"""A submitted dialog system is untrusted (issue 25): whatever it sends, a call ends by its deadline,
holds no more than the size cap, and becomes a failed turn with a reason that counts toward pausing
the system; the worker's page never gets a 500. Hostile systems on loopback ports (tests/evaluation/hostile.py)."""
import json
import time
import tracemalloc

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Response
from annotation.services.claims import claim_next_slot
from annotation.work_tokens import make_token
from evaluation.interactive.services import chats
from evaluation.interactive.services.chats import create_chat_job
from evaluation.interactive.services.systems import import_goals, register_system
from evaluation.interactive.systems.check import run_check
from evaluation.interactive.systems.client import ReplyError, SystemClient, SystemFailure, parse_json
from evaluation.interactive.systems.reference import RESTAURANTS
from evaluation.models import ChatTurn, DialogSystem

from .hostile import CASES, hostile, ok_reply, response

SECRET = "a-secret-of-twenty-chars"
GOALS = b'{"id": "g1", "goal": {"restaurant": {"info": {"food": "chinese", "area": "centre"}}}}\n'


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_hostile_reply_is_a_failure_with_a_reason_within_the_deadline_and_the_size_cap(case):
    with hostile(CASES[case]) as (url, _server):
        client = SystemClient(url, SECRET, timeout=2)
        tracemalloc.start()
        started = time.monotonic()
        with pytest.raises(SystemFailure) as failure:
            client.turn("s", 0, "hi", [], None)
        elapsed = time.monotonic() - started
        _now, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert failure.value.reason and elapsed < 2.5
    assert peak < 2_000_000, f"{case}: {peak} bytes held"  # the gzip bomb expands to 60 MB if let


@pytest.mark.parametrize("drip", [(0.2, 1), (0.5, 10), (30, 1)], ids=["byte-every-0.2s", "10-bytes-every-0.5s", "one-byte-then-silence"])
def test_a_dripping_system_is_cut_off_at_the_call_deadline_not_kept_alive_by_each_byte(drip):
    with hostile(ok_reply(text="x" * 200), drip=drip) as (url, _server):
        started = time.monotonic()
        with pytest.raises(SystemFailure, match="no reply within 1 s"):
            SystemClient(url, SECRET, timeout=1).turn("s", 0, "hi", [], None)
        assert time.monotonic() - started < 1.6


def test_a_redirect_is_not_followed():
    with hostile(CASES["redirect_to_metadata"]) as (url, server):
        with pytest.raises(SystemFailure, match="HTTP 302"):
            SystemClient(url, SECRET, timeout=2).turn("s", 0, "hi", [], None)
    assert len(server.requests) == 1


def test_a_gzip_reply_within_the_cap_is_read():
    import gzip
    body = gzip.compress(json.dumps({"text": "hello", "state": {"n": 1}, "end": False}).encode())
    with hostile(response(body, headers={"Content-Encoding": "gzip"})) as (url, _server):
        assert SystemClient(url, SECRET, timeout=2).turn("s", 0, "hi", [], None).state == {"n": 1}


@pytest.mark.parametrize("text, reason", [
    ('{"a": NaN}', "NaN is not JSON"), ('{"a": 1e400}', "out of range"), ('"\\u0000"', "NUL"),
    ('"\\udc00"', "lone surrogate"), ("[" * 33 + "]" * 33, "deeper than 32"), ('{"a": "[[[[["}', None),
])
def test_strict_json(text, reason):
    if reason is None:
        assert parse_json(text.encode()) == {"a": "[[[[["}  # brackets inside strings are not nesting
    else:
        with pytest.raises(ReplyError, match=reason):
            parse_json(text.encode())


def test_the_contract_check_of_a_hostile_system_fails_each_rule_with_a_reason():
    with hostile(CASES["nan"]) as (url, _server):
        results = run_check(url, SECRET, timeout=1)
    assert [r.rule for r in results if not r.passed] == ["opening", "turns", "retried turn", "latency", "end"]
    assert all(r.reason for r in results)


@pytest.fixture
def goal_set(db):
    return import_goals(name="goals", goals_file=GOALS, databases={"restaurant": json.dumps(RESTAURANTS).encode()})


def _chat_page(make_annotator, job, name="w"):
    user, worker = make_annotator(name)
    client = Client()
    client.force_login(user)
    slot = claim_next_slot(job=job, worker=worker)
    return client, make_token(slot), slot


def _post(client, token, **body):
    answer = client.post(reverse("work-chat", args=[token]), body, content_type="application/json")
    assert answer.status_code == 200, answer.content[:300]
    return answer.json()


def test_every_hostile_reply_through_the_relay_is_a_recorded_failed_turn_and_pauses_the_system(goal_set, make_annotator, settings):
    settings.QUORUM_SYSTEM_TURN_TIMEOUT_SECONDS = 1
    settings.QUORUM_SYSTEM_PAUSE_CONSECUTIVE_FAILURES = 0
    settings.QUORUM_SYSTEM_PAUSE_WINDOW_TURNS = 0
    with hostile(ok_reply()) as (url, server):
        system = register_system(name="hostile", url=url, secret=SECRET)
        job = create_chat_job(name="chat", systems=[system], goal_set=goal_set)
        client, token, _slot = _chat_page(make_annotator, job)
        assert not _post(client, token, action="open")["unavailable"]
        for case in sorted(CASES):
            server.reply = CASES[case]
            state = _post(client, token, action="say", text=f"case {case}")
            # Pausing is off here: each failure is a retry, never "the system stopped, end now".
            assert state["turns"][-1]["failed"] and not state["unavailable"], case
        failed = ChatTurn.objects.filter(session__system=system, role="system", failed=True)
        assert failed.count() == len(CASES) and all(t.error for t in failed)
        settings.QUORUM_SYSTEM_PAUSE_CONSECUTIVE_FAILURES = 5
        server.reply = CASES["nan"]
        _post(client, token, action="say", text="once more")
    system.refresh_from_db()
    assert system.paused_at and "consecutive failed turns" in system.paused_reason


def test_a_system_that_ends_at_its_opening_does_not_trap_the_worker(goal_set, make_annotator):
    with hostile(ok_reply(), opening=ok_reply(text="bye", end=True)) as (url, _server):
        system = register_system(name="quitter", url=url, secret=SECRET)
        job = create_chat_job(name="chat", systems=[system], goal_set=goal_set)
        client, token, slot = _chat_page(make_annotator, job)
        state = _post(client, token, action="open")
        assert not state["ended"] and not state["unavailable"] and state["turns"][-1]["failed"]
        assert "may not end the conversation" in ChatTurn.objects.get(session__system=system).error
        state = _post(client, token, action="say", text="chinese please")  # the worker goes on
        assert not state["ended"] and not state["turns"][-1]["failed"]
        assert client.post(reverse("work", args=[token]), {
            "outcome": "fail", "outcome_reason": "It quit.", "understanding": "2", "understanding_reason": "r",
            "appropriateness": "2", "appropriateness_reason": "r",
        }).status_code == 302
    assert "system_unavailable" not in Response.objects.get(slot=slot).answers


def test_one_failed_turn_is_a_retry_not_the_end_of_the_dialog(goal_set, make_annotator):
    """Organizer walk, defect 2: one timeout told the worker 'pick Fail, ratings optional' while the
    system ran on. Now the fallback says to send the message again, the ratings are still owed, and
    the dialog goes on."""
    with hostile(ok_reply()) as (url, server):
        system = register_system(name="flaky", url=url, secret=SECRET)
        job = create_chat_job(name="chat", systems=[system], goal_set=goal_set)
        client, token, slot = _chat_page(make_annotator, job)
        _post(client, token, action="open")
        server.reply = CASES["status_500"]
        state = _post(client, token, action="say", text="chinese please")
        assert state["turns"][-1]["failed"] and not state["unavailable"]
        assert state["turns"][-1]["text"] == "Sorry, the system did not answer. Please send your message again."
        answer = client.post(reverse("work", args=[token]), {"outcome": "fail"})  # no reason, no ratings
        assert answer.status_code != 302 and not Response.objects.exists()
        server.reply = ok_reply()
        state = _post(client, token, action="say", text="chinese please")
        assert not state["turns"][-1]["failed"] and not state["unavailable"]
    assert DialogSystem.objects.get(pk=system.pk).paused_at is None


def test_calls_past_the_concurrency_limit_are_not_sent_and_do_not_pause_the_system(goal_set, make_annotator, settings):
    settings.QUORUM_SYSTEM_MAX_CONCURRENT_CALLS = 1
    settings.QUORUM_SYSTEM_PAUSE_CONSECUTIVE_FAILURES = 1
    with hostile(ok_reply()) as (url, server):
        system = register_system(name="popular", url=url, secret=SECRET)
        job = create_chat_job(name="chat", systems=[system], goal_set=goal_set)
        client, token, _slot = _chat_page(make_annotator, job)
        _post(client, token, action="open")
        held = chats._take_slot(f"quorum:system-call:{system.pk}", 1)  # another request's call under way
        try:
            sent = len(server.requests)
            state = _post(client, token, action="say", text="hello")
            assert state["turns"][-1]["failed"] and "busy" in state["turns"][-1]["text"] and len(server.requests) == sent
            assert not state["unavailable"]  # busy is not "stopped answering": the worker is not told to end
        finally:
            chats.cache.delete(held)
        assert not DialogSystem.objects.get(pk=system.pk).paused_at
        assert not _post(client, token, action="say", text="hello again")["turns"][-1]["failed"]
