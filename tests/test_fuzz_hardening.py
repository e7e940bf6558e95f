"""Property-based fuzzing of the surfaces issue 25 hardened (item 6), each through the way the
outside reaches it, with the same cases on every run (tests/fuzz_json.FUZZ; QUORUM_FUZZ_SCALE=10
and QUORUM_FUZZ_SEED=random for a deeper run by hand):

- **the chat relay**: a hostile system on a loopback port answers each worker message with a reply
  built by Hypothesis (a valid reply's JSON spoilt by tests/fuzz_json, its bytes spoilt, a status
  code, a Content-Encoding that is right, wrong or a bomb, a Content-Length that lies); the work
  page's chat endpoint must answer below 500 and record every failed turn with a reason;
- **Prolific's hooks**: correctly signed deliveries whose body is a spoilt event: below 500, and a
  refused one stores no event;
- **the recording check**: WAV headers with drawn sample rates, channels, sample widths, sizes
  that lie and cut data: a RecordingError or a checked recording, never another exception, within
  a bounded peak of memory;
- **the goals upload** (the organizer page): a spoilt goals JSONL and database: below 500, a
  refused upload stores nothing.

Each fuzzer counts the cases tried, the 5xx answers (or unexpected exceptions) and what the cases
cost (the peak of Python memory one case held, CPU seconds in all), prints them, and holds the 5xx
at zero and the memory under a bound; docs/measurements.md keeps the figures of a run.
"""
import gzip
import hashlib
import io
import json
import struct
import time
import tracemalloc
import zlib
from collections import Counter

import pytest
from django.test import Client
from django.urls import reverse
from hypothesis import given, settings
from hypothesis import strategies as st

from annotation.speech.audio import RecordingError, check_recording
from evaluation.interactive.services.chats import create_chat_job
from evaluation.interactive.services.systems import import_goals, register_system
from evaluation.interactive.systems.reference import RESTAURANTS
from evaluation.models import ChatTurn, GoalSet
from hits.models import ProviderEvent
from hits.providers.prolific import hooks
from tests.fuzz_json import FUZZ, dumps, examples, mutated, spoilt_bytes

from .evaluation.hostile import hostile, response

pytestmark = [pytest.mark.django_db, pytest.mark.fuzz]

SECRET = "a-secret-of-twenty-chars"
HOOK_SECRET = "a-prolific-hook-secret"
GOALS = b'{"id": "g1", "goal": {"restaurant": {"info": {"food": "chinese", "area": "centre"}}}}\n'
MEMORY_BOUND = 8_000_000  # bytes one case may hold at its peak; the replies are capped at 64 KiB


class Tally:
    """Cases tried, 5xx (or unexpected exceptions), the largest peak of Python memory one case held
    (tracemalloc; the first case, which loads modules, left out) and CPU seconds in all."""

    def __init__(self, name: str):
        self.name, self.cases, self.server_errors, self.peak, self.cpu = name, 0, [], 0, 0.0
        self.outcomes: Counter = Counter()

    def run(self, case, label=None):
        tracemalloc.start()
        started = time.process_time()
        try:
            return case()
        finally:
            self.cpu += time.process_time() - started
            if self.cases:  # the first case also pays for loading modules and warming caches
                self.peak = max(self.peak, tracemalloc.get_traced_memory()[1])
            tracemalloc.stop()
            self.cases += 1

    def report(self, capsys):
        with capsys.disabled():
            print(f"\n{self.name}: {self.cases} cases, {len(self.server_errors)} 5xx, peak {self.peak / 1e6:.1f} MB per case, "
                  f"{self.cpu:.2f} CPU-s; outcomes {dict(self.outcomes.most_common(8))}")
        assert not self.server_errors, self.server_errors[:5]
        assert self.peak < MEMORY_BOUND


# --- the chat relay -----------------------------------------------------------------------------

VALID_REPLY = {"text": "Lotus Corner is a cheap Thai place.", "state": {"belief": {"area": "centre"}, "turn": 1}, "end": False,
               "offered": {"restaurant": "Lotus Corner"}}


@st.composite
def hostile_replies(draw) -> bytes:
    document = draw(mutated(VALID_REPLY))
    if isinstance(document, dict) and document.get("end") is True:
        document = {**document, "end": False}  # a system that ends keeps the chat from the next cases
    body = draw(spoilt_bytes(dumps(document)))
    encoding = draw(st.sampled_from(["none", "none", "gzip", "deflate", "bomb", "garbage-gzip", "br"]))
    headers = {}
    if encoding == "gzip":
        body, headers["Content-Encoding"] = gzip.compress(body), "gzip"
    elif encoding == "deflate":
        body, headers["Content-Encoding"] = zlib.compress(body), "deflate"
    elif encoding == "bomb":
        body, headers["Content-Encoding"] = gzip.compress(body + b" " * draw(st.sampled_from([70_000, 5_000_000]))), "gzip"
    elif encoding == "garbage-gzip":
        headers["Content-Encoding"] = "gzip"
    elif encoding == "br":
        headers["Content-Encoding"] = "br"
    length = draw(st.sampled_from(["right", "right", "short", "long", "huge", "absent"]))
    headers["Content-Length"] = {"right": str(len(body)), "short": str(max(len(body) - 3, 0)), "long": str(len(body) + 50),
                                 "huge": str(10**12), "absent": None}[length]
    status = draw(st.sampled_from(["200 OK", "200 OK", "200 OK", "201 Created", "204 No Content", "302 Found", "404 Not Found", "500 Oops"]))
    return response(body, status, headers)


def test_fuzz_the_chat_relay_with_hostile_system_replies(make_annotator, settings_fast_calls, capsys):
    from annotation.services.claims import claim_next_slot
    from annotation.work_tokens import make_token

    tally = Tally("chat relay")
    goal_set = import_goals(name="goals", goals_file=GOALS, databases={"restaurant": json.dumps(RESTAURANTS).encode()})
    with hostile() as (url, server):
        system = register_system(name="fuzzed", url=url, secret=SECRET)
        job = create_chat_job(name="chat", systems=[system], goal_set=goal_set)
        user, worker = make_annotator("chatter")
        client = Client()
        client.force_login(user)
        chat = reverse("work-chat", args=[make_token(claim_next_slot(job=job, worker=worker))])
        assert client.post(chat, {"action": "open"}, content_type="application/json").status_code == 200

        @settings(FUZZ, max_examples=examples(150))
        @given(reply=hostile_replies())
        def fuzz(reply):
            server.reply = reply
            answer = tally.run(lambda: client.post(chat, {"action": "say", "text": "a cheap place?"}, content_type="application/json"))
            tally.outcomes[answer.status_code] += 1
            if answer.status_code >= 500:
                tally.server_errors.append((reply[:200], answer.content[:200]))
            elif answer.status_code == 200:
                last = answer.json()["turns"][-1]
                tally.outcomes["failed turn" if last.get("failed") else "answered"] += 1

        fuzz()
    failed = ChatTurn.objects.filter(session__system=system, role="system", failed=True)
    assert failed.exists() and not failed.filter(error="").exists()  # every failure recorded with its reason
    tally.report(capsys)


@pytest.fixture
def settings_fast_calls(settings):
    settings.QUORUM_SYSTEM_TURN_TIMEOUT_SECONDS = 1
    settings.QUORUM_SYSTEM_PAUSE_CONSECUTIVE_FAILURES = 0  # keep calling it: the fuzz is about the replies
    settings.QUORUM_SYSTEM_PAUSE_WINDOW_TURNS = 0
    settings.QUORUM_LIMIT_CHAT_MESSAGES_PER_MINUTE = 0
    return settings


# --- Prolific's hooks -----------------------------------------------------------------------------

EVENT = {"event_type": hooks.EVENT_TYPE, "resource_id": "sub-1", "status": "RETURNED", "participant_id": "p-1"}


def test_fuzz_signed_prolific_hooks_with_hostile_fields(client, monkeypatch, capsys):
    monkeypatch.setenv("PROLIFIC_HOOK_SECRET", HOOK_SECRET)
    tally = Tally("Prolific hooks")

    @settings(FUZZ, max_examples=examples(300))
    @given(body=mutated(EVENT).flatmap(lambda event: spoilt_bytes(dumps(event))))
    def fuzz(body):
        timestamp = str(int(time.time()))
        # One id per signed content, as Prolific's redeliveries keep theirs: a body drawn twice is a
        # redelivery ("duplicate"), not a replay under a new id.
        event_id = hashlib.sha256(body).hexdigest()[:32]
        headers = {hooks.SIGNATURE_HEADER: hooks.signature(HOOK_SECRET, timestamp, body), hooks.TIMESTAMP_HEADER: timestamp,
                   hooks.EVENT_ID_HEADER: event_id}
        before = ProviderEvent.objects.count()
        answer = tally.run(lambda: client.post("/crowd/prolific/hooks/", data=body, content_type="application/json", headers=headers))
        tally.outcomes[answer.status_code] += 1
        if answer.status_code >= 500:
            tally.server_errors.append((body[:200], answer.content[:200]))
        elif answer.status_code >= 400:
            assert answer.json()["detail"] and ProviderEvent.objects.count() == before  # refused: nothing kept

    fuzz()
    tally.report(capsys)


# --- the recording check ----------------------------------------------------------------------------


def _wav(rate: int, channels: int, bits: int, frames: int, *, riff_size=None, data_size=None, fmt_size=16, audio_format=1, cut=None) -> bytes:
    width = max(bits // 8, 1)
    samples = b"\x10\x00" * (min(frames * channels * width, 400_000) // 2)  # the header may say more: a lie to check
    data_size = len(samples) if data_size is None else data_size
    fmt = struct.pack("<HHIIHH", audio_format, channels, rate, rate * channels * width % 2**32, channels * width % 2**16, bits)
    fmt += b"\x00" * max(fmt_size - 16, 0)
    body = b"WAVE" + b"fmt " + struct.pack("<I", fmt_size) + fmt[:fmt_size] + b"data" + struct.pack("<I", data_size % 2**32) + samples
    data = b"RIFF" + struct.pack("<I", (len(body) if riff_size is None else riff_size) % 2**32) + body
    return data if cut is None else data[:cut]


HOSTILE_FIELDS = {
    "rate": st.one_of(st.sampled_from([0, 1, 8000, 48001, 192000, 384001, 7_999_993, 2**31 - 1, 2**32 - 1]), st.integers(0, 2**32 - 1)),
    "channels": st.sampled_from([0, 2, 3, 8, 255, 65535]),
    "bits": st.sampled_from([0, 8, 24, 32, 64, 65535]),
    "frames": st.sampled_from([0, 1, 100, 40000]),
    "riff_size": st.integers(0, 2**32 - 1),
    "data_size": st.sampled_from([0, 1, 2**31, 2**32 - 1]),
    "fmt_size": st.sampled_from([14, 18, 40, 65535]),
    "audio_format": st.sampled_from([3, 0xFFFE, 0, 85]),
    "cut": st.integers(0, 60),
}


@st.composite
def hostile_wavs(draw) -> bytes:
    """A good 1.5 s recording's header with one to three fields made hostile."""
    fields = {"rate": 16000, "channels": 1, "bits": 16, "frames": 24000}
    for name in draw(st.lists(st.sampled_from(sorted(HOSTILE_FIELDS)), min_size=0, max_size=3, unique=True)):
        fields[name] = draw(HOSTILE_FIELDS[name])
    return _wav(**fields)


def test_fuzz_the_recording_check_with_hostile_wav_headers(capsys):
    tally = Tally("recording check")

    @settings(FUZZ, max_examples=examples(400))
    @given(data=hostile_wavs())
    def fuzz(data):
        def check():
            try:
                check_recording(data, min_seconds=0.001, silence_dbfs=-200)
                return "accepted"
            except RecordingError as exc:
                assert str(exc)
                return "refused"
            except Exception as exc:  # noqa: BLE001 - anything else is what the fuzzer looks for
                tally.server_errors.append((data[:44], repr(exc)))
                return "crashed"

        tally.outcomes[tally.run(check)] += 1

    fuzz()
    tally.report(capsys)


# --- the goals upload -----------------------------------------------------------------------------

GOAL = {"id": "g1", "goal": {"restaurant": {"info": {"food": "chinese", "area": "centre"}, "reqt": ["phone"]}}}
DATABASE = RESTAURANTS[:3]


def test_fuzz_the_goals_upload_page(organizer, capsys):
    tally = Tally("goals upload")
    page = Client()
    page.force_login(organizer)
    names = Counter()

    @settings(FUZZ, max_examples=examples(150))
    @given(goals=mutated(GOAL).flatmap(lambda goal: spoilt_bytes(dumps(goal))), database=st.one_of(
        st.none(), mutated(DATABASE).flatmap(lambda db: spoilt_bytes(dumps(db)))))
    def fuzz(goals, database):
        names["n"] += 1
        before = GoalSet.objects.count()
        form = {"name": f"fuzzed {names['n']}", "goals": io.BytesIO(goals)}
        form["goals"].name = "goals.jsonl"
        if database is not None:
            form["database_domain"], form["database"] = "restaurant", io.BytesIO(database)
            form["database"].name = "restaurant_db.json"
        answer = tally.run(lambda: page.post(reverse("evaluation:goals-upload"), form))
        tally.outcomes[answer.status_code] += 1
        if answer.status_code >= 500:
            tally.server_errors.append((goals[:200], database and database[:100]))
        elif answer.status_code >= 400:
            assert GoalSet.objects.count() == before  # refused whole

    fuzz()
    tally.report(capsys)
