"""A system that fails in a dialog the worker then leaves (Skip) used to show "Failed calls 0" on the
leaderboard: only the dialogs that count were read. The run's state now says, per system, the calls
that failed in this job's dialogs that do not count, on the page and in every download alike, and
the method says what "Dialogs" counts."""
import json

import pytest
from django.test import Client
from django.urls import reverse

from annotation.services.claims import claim_next_slot, release_slot
from annotation.work_tokens import make_token
from evaluation.interactive import selectors
from evaluation.interactive.services.chats import create_chat_job
from evaluation.interactive.services.systems import import_goals, register_system
from evaluation.stats import interactive

from .systems import Broken, running

SECRET = "a-secret-of-twenty-chars"
GOALS = b'{"id": "g1", "goal": {"restaurant": {"info": {"food": "chinese"}}}}\n'


@pytest.fixture
def organizer_client(organizer):
    client = Client()
    client.force_login(organizer)
    return client


def _say(client, token, *messages):
    url = reverse("work-chat", args=[token])
    client.post(url, {"action": "open"}, content_type="application/json")
    for text in messages:
        client.post(url, {"action": "say", "text": text}, content_type="application/json")


def test_calls_failed_in_a_dialog_the_worker_left_are_said_everywhere(db, make_annotator, organizer_client, settings):
    settings.QUORUM_SYSTEM_PAUSE_CONSECUTIVE_FAILURES = 10  # two failures do not pause it
    goals = import_goals(name="goals", goals_file=GOALS)
    system = Broken("error", secret=SECRET)
    with running(system) as url:
        system.fault = None  # it passes the check at registration, then starts failing
        registered = register_system(name="flaky-team", url=url, secret=SECRET)
        job = create_chat_job(name="chat", systems=[registered], goal_set=goals, dialogs_per_goal=2)
        system.fault = "error"
        user, worker = make_annotator("w")
        client = Client()
        client.force_login(user)
        slot = claim_next_slot(job=job, worker=worker)
        _say(client, make_token(slot), "chinese food please", "hello?")
        release_slot(slot_id=slot.pk, worker=worker)  # the worker gives up on it: Skip

    board, _dialogs = selectors.interactive_board(job)
    row, = board["status"]["systems"]
    assert row["failed_calls_not_counted"] == 2 and row["dialogs_not_counted"] == 1
    said = "flaky-team: 2 failed calls in 1 dialog that does not count (left by its worker, unfinished, or not kept at review)"
    assert any(said in line for line in interactive.status_lines(board))

    page = organizer_client.get(reverse("evaluation:interactive-results", args=[job.pk])).content.decode()
    markdown = organizer_client.get(reverse("evaluation:interactive-results-file", args=[job.pk, "md"])).content.decode()
    csv_text = organizer_client.get(reverse("evaluation:interactive-results-file", args=[job.pk, "csv"])).content.decode()
    api = organizer_client.get(f"/api/evaluation/interactive/{job.pk}/").json()
    for text in (page, markdown, csv_text, json.dumps(api["status_lines"])):
        assert said in text
    assert api["status"]["systems"][0]["failed_calls_not_counted"] == 2
    for text in (page, markdown):
        assert "Dialogs: the submitted dialogs that count" in text
