"""A worker who met a failing system and walked away without pressing Skip lets the claim expire: the
beat frees the slot, and nothing in the job names them any more (no holder, no response, no skip).
Their conversation's failed calls were missing from the run's "failed calls in dialogs that do not
count", so a system that drove workers away read as failing less than it did. They are now counted,
on the page, the downloads, the API and `rank_interactive` alike, and the words say what is counted.
The leaderboard column is `failed_calls` in every format (it was `failed_turns` in the CSV, the JSON
and the API, which keeps that key as an alias)."""
import csv
import io
import json
from datetime import timedelta

from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation.models import Slot
from annotation.services.claims import claim_next_slot, release_expired_claims
from annotation.work_tokens import make_token
from evaluation.interactive import selectors
from evaluation.interactive.services.chats import create_chat_job
from evaluation.interactive.services.systems import import_goals, register_system
from evaluation.stats import interactive

from .systems import Broken, running
from .test_failed_calls_outside_counted_dialogs import GOALS, SECRET, _say


def test_calls_failed_in_a_dialog_whose_claim_expired_are_counted_everywhere(db, make_annotator, organizer, settings):
    settings.QUORUM_SYSTEM_PAUSE_CONSECUTIVE_FAILURES = 10  # the failures do not pause it
    goals = import_goals(name="goals", goals_file=GOALS)
    system = Broken("error", secret=SECRET)
    with running(system) as url:
        system.fault = None  # it passes the check at registration, then starts failing
        registered = register_system(name="flaky-team", url=url, secret=SECRET)
        job = create_chat_job(name="chat", systems=[registered], goal_set=goals, dialogs_per_goal=2)
        other = create_chat_job(name="chat 2", systems=[registered], goal_set=goals)  # same system and goal: not its conversation
        system.fault = "error"
        user, worker = make_annotator("w")
        client = Client()
        client.force_login(user)
        slot = claim_next_slot(job=job, worker=worker)
        _say(client, make_token(slot), "chinese food please", "hello?", "anyone?")
    # The worker closes the tab; the claim runs out and the beat frees it.
    Slot.objects.filter(pk=slot.pk).update(expires_at=timezone.now() - timedelta(minutes=1))
    assert release_expired_claims() == 1

    board, _dialogs = selectors.interactive_board(job)
    row, = board["status"]["systems"]
    assert (row["failed_calls_not_counted"], row["dialogs_not_counted"]) == (3, 1)
    elsewhere, = selectors.interactive_board(other)[0]["status"]["systems"]
    assert elsewhere["failed_calls_not_counted"] == 0
    said = "flaky-team: 3 failed calls in 1 dialog that does not count"
    organizer_client = Client()
    organizer_client.force_login(organizer)
    page = organizer_client.get(reverse("evaluation:interactive-results", args=[job.pk])).content.decode()
    markdown = organizer_client.get(reverse("evaluation:interactive-results-file", args=[job.pk, "md"])).content.decode()
    csv_text = organizer_client.get(reverse("evaluation:interactive-results-file", args=[job.pk, "csv"])).content.decode()
    api = organizer_client.get(f"/api/evaluation/interactive/{job.pk}/").json()
    command = io.StringIO()
    call_command("rank_interactive", job.pk, stdout=command)
    for text in (page, markdown, csv_text, json.dumps(api["status_lines"]), command.getvalue()):
        assert said in text
    for text in (page, markdown, command.getvalue()):  # what the column counts, and what it leaves to the run's state
        assert "by letting the claim expire" in text


def test_the_failed_calls_column_has_one_name_in_every_format():
    transcript = [{"role": "user", "text": "hi", "failed": False, "offered": None}, {"role": "system", "text": "sorry", "failed": True, "offered": None}]
    dialogs = [{"system": "a", "goal_id": str(g), "answers": {"outcome": "fail", "transcript": transcript}, "goal": {}, "database": {},
                "failed_calls": 1} for g in range(3)]
    board = interactive.system_results(dialogs, bootstrap=50)
    row, = board["systems"]
    assert row["failed_calls"] == 3 and "failed_turns" not in row
    written, = csv.DictReader(io.StringIO(interactive.to_csv(board)))
    assert written["failed_calls"] == "3" and "failed_turns" not in written
    header = next(line for line in interactive.to_markdown(board).splitlines() if line.startswith("| Tie-group rank |"))
    assert header.endswith("| Failed calls |")
    shown = interactive.to_json_dict(board)["systems"][0]
    assert shown["failed_calls"] == shown["failed_turns"] == 3  # the API's old key, kept for its clients


def test_without_its_recorded_conversation_a_dialog_counts_its_failed_calls_not_quorums_replies(db, make_annotator, settings):
    """A counted dialog whose conversation rows are gone is read from its transcript, where Quorum's
    own replies after the pause are failed turns too: they were counted as failed calls (5, not 3)."""
    from evaluation.models import ChatSession

    from .test_chat_campaigns import _page_chat, _system

    settings.QUORUM_SYSTEM_PAUSE_CONSECUTIVE_FAILURES = 3
    with running(Broken("error", secret=SECRET)) as broken_url:
        broken = _system("broken", broken_url)
        job = create_chat_job(name="chat", systems=[broken], goal_set=import_goals(name="goals", goals_file=GOALS))
        user, worker = make_annotator("w")
        client = Client()
        client.force_login(user)
        token = make_token(claim_next_slot(job=job, worker=worker))
        _page_chat(client, token, "open")
        for n in range(5):  # 3 failed calls pause it; 2 more messages get Quorum's refusal
            _page_chat(client, token, "say", text=f"chinese please ({n})")
        _page_chat(client, token, "end", reason="fail")
        assert client.post(reverse("work", args=[token]), {"outcome": "fail"}).status_code == 302
    recorded, = selectors.interactive_ranking(job)[0]["systems"]
    ChatSession.objects.filter(system=broken).delete()  # the conversation's rows are gone; the response keeps its transcript
    read_back, = selectors.interactive_ranking(job)[0]["systems"]
    assert recorded["failed_calls"] == read_back["failed_calls"] == 3
