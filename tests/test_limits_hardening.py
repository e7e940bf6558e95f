"""Per-person limits on expensive requests (issue 25, item 3; quorum/limits.py): a worker's
submissions with recordings and chat messages, an organizer's contract checks. Past a limit the
request is a 429 that says the limit and when to try again, and nothing is stored, checked or sent;
someone else is not held back. Speech-error exports (one at a time per job, a repeat answered with
the run under way) are held in tests/annotation/test_export_speech_errors.py."""
import json

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Response
from evaluation.interactive.services.chats import create_chat_job
from evaluation.interactive.services.systems import import_goals, register_system
from evaluation.interactive.systems.reference import RESTAURANTS
from evaluation.models import ChatSession, DialogSystem
from quorum import limits

from .evaluation.hostile import hostile
from .evaluation.test_hostile_systems import GOALS, SECRET, _chat_page

pytestmark = pytest.mark.django_db


def test_a_limit_counts_per_person_and_minute_and_zero_means_none(settings):
    settings.QUORUM_LIMIT_CHAT_MESSAGES_PER_MINUTE = 2
    minute = 60 * 16_667 + 20.0  # 20 s into a minute
    assert limits.spend("chat", "a", now=minute) is None and limits.spend("chat", "a", now=minute + 1) is None
    refused = limits.spend("chat", "a", now=minute + 10)
    assert refused is not None and refused.retry_after == 30
    assert "at most 2 a minute per worker" in refused.message and "try again in 30 seconds" in refused.message
    assert limits.spend("chat", "b", now=minute + 10) is None  # someone else
    assert limits.spend("chat", "a", now=minute + 40) is None  # the next minute
    settings.QUORUM_LIMIT_CHAT_MESSAGES_PER_MINUTE = 0
    assert all(limits.spend("chat", "a", now=minute + 41) is None for _ in range(5))


def test_a_cache_that_cannot_be_reached_lets_the_request_through(settings, monkeypatch, caplog):
    settings.QUORUM_LIMIT_CHAT_MESSAGES_PER_MINUTE = 1

    def down(*args, **kwargs):
        raise ConnectionError("Error 111 connecting to 127.0.0.1:6379")

    monkeypatch.setattr(limits.cache, "add", down)
    assert limits.spend("chat", "c") is None and limits.spend("chat", "c") is None
    assert "cannot be reached" in caplog.text


def test_recordings_past_the_workers_limit_are_a_429_and_nothing_is_checked_or_stored(make_annotator, settings, monkeypatch):
    from annotation.services.claims import claim_next_slot
    from annotation.work_tokens import make_token
    from tests.annotation.spoken_audio import tone, upload
    from tests.factories import make_corpus, make_live_job

    settings.QUORUM_LIMIT_RECORDINGS_PER_MINUTE = 1
    corpus = make_corpus(name="spoken", dialogs=2, user_turns=1)
    job = make_live_job(corpus, task_type="spoken_reading", name="spoken job", settings={"readings": 1})
    checked = []
    from annotation.task_types import spoken_reading

    real = spoken_reading.check_recording
    monkeypatch.setattr(spoken_reading, "check_recording", lambda *a, **k: checked.append(1) or real(*a, **k))

    def post(name, as_json=False):
        user, worker = make_annotator(name) if name not in accounts else accounts[name]
        accounts[name] = (user, worker)
        client = Client()
        client.force_login(user)
        slot = claims.get(name) or claim_next_slot(job=job, worker=worker)
        claims[name] = slot
        headers = {"HTTP_ACCEPT": "application/json"} if as_json else {}
        return client.post(reverse("work", args=[make_token(slot)]), {"reading_1": upload("r", tone(0.2))}, **headers)

    accounts, claims = {}, {}
    first = post("reader")  # a recording too short: refused by its check, and counted
    assert first.status_code == 400
    tried = len(checked)
    page = post("reader")
    assert page.status_code == 429 and page["Retry-After"].isdigit()
    assert "Too many submissions with recordings: at most 1 a minute per worker" in page.content.decode()
    script = post("reader", as_json=True)
    assert script.status_code == 429 and "try again in" in script.json()["error"]
    assert len(checked) == tried and not Response.objects.exists()  # not even looked at
    assert post("other").status_code == 400  # another worker is not held back


def test_chat_messages_past_the_workers_limit_are_a_429_and_the_system_is_not_called(make_annotator, settings):
    settings.QUORUM_LIMIT_CHAT_MESSAGES_PER_MINUTE = 2
    goal_set = import_goals(name="goals", goals_file=GOALS, databases={"restaurant": json.dumps(RESTAURANTS).encode()})
    with hostile() as (url, server):
        system = register_system(name="limited", url=url, secret=SECRET)
        job = create_chat_job(name="chat", systems=[system], goal_set=goal_set)
        client, token, _slot = _chat_page(make_annotator, job)
        chat = reverse("work-chat", args=[token])
        assert client.post(chat, {"action": "open"}, content_type="application/json").status_code == 200
        assert client.post(chat, {"action": "say", "text": "hi"}, content_type="application/json").status_code == 200
        sent, turns = len(server.requests), ChatSession.objects.get().turns.count()
        refused = client.post(chat, {"action": "say", "text": "hi again"}, content_type="application/json")
        assert refused.status_code == 429 and "at most 2 a minute per worker" in refused.json()["error"]
        assert len(server.requests) == sent and ChatSession.objects.get().turns.count() == turns


def test_contract_checks_past_the_organizers_limit_are_a_429_on_the_page_and_the_api(organizer, organizer_api, settings):
    settings.QUORUM_LIMIT_SYSTEM_CHECKS_PER_MINUTE = 1
    page = Client()
    page.force_login(organizer)
    with hostile() as (url, server):
        registered = page.post(reverse("evaluation:system-register"), {"name": "one", "url": url, "secret": SECRET})
        assert registered.status_code == 302
        system = DialogSystem.objects.get()
        calls = len(server.requests)
        again = page.post(reverse("evaluation:system-check", args=[system.pk]))
        assert again.status_code == 429 and "Too many contract checks of dialog systems" in again.content.decode()
        second = page.post(reverse("evaluation:system-register"), {"name": "two", "url": url, "secret": SECRET})
        assert second.status_code == 429 and DialogSystem.objects.count() == 1
        assert len(server.requests) == calls  # nothing was checked
        # The API counts for the same organizer: refused with DRF's 429, the reason in `detail`.
        api = organizer_api.post("/api/evaluation/systems/", {"name": "three", "url": url, "secret": SECRET}, format="json")
        assert api.status_code == 429 and "try again in" in api.json()["detail"] and api["Retry-After"].isdigit()
    assert DialogSystem.objects.count() == 1


def test_speech_error_exports_through_the_api_are_one_at_a_time_per_job_and_deduplicated(organizer_api):
    """Issue 25 (a), verified where an organizer asks: the same speech-error export asked twice is
    the one run (queued once); a different one while it is under way is refused naming that run."""
    from annotation.models import Corpus, ExportRun
    from tests.annotation.test_export_speech_errors import DIALOG_SHAPES, SYSTEM_REPLY
    from tests.annotation.test_exports import make_dialog, make_job

    corpus = Corpus.objects.create(name="speech", source_format="jsonl")
    for position, (name, texts) in enumerate(DIALOG_SHAPES):
        make_dialog(corpus, name, position, [row for text in texts for row in (("user", text, {}), ("system", SYSTEM_REPLY, {}))])
    job = make_job(corpus)
    url = f"/api/jobs/{job.pk}/exports/"
    first = organizer_api.post(url, {"speech_errors_wer": 0.2, "speech_errors_seed": 3}, format="json")
    again = organizer_api.post(url, {"speech_errors_wer": 0.2, "speech_errors_seed": 3}, format="json")
    assert first.status_code == again.status_code == 202 and first.json()["id"] == again.json()["id"]
    other = organizer_api.post(url, {"speech_errors_wer": 0.3}, format="json")
    assert other.status_code == 409, other.content  # a conflict with the run under way, not a request to correct
    body = other.json()
    assert f"under way (run {first.json()['id']}" in body["detail"] and body["run"] == first.json()["id"]
    assert organizer_api.get(body["url"]).json()["id"] == first.json()["id"]  # where to follow it
    assert ExportRun.objects.filter(job=job).count() == 1
