"""The offensive-word filter on completed chats before the interactive leaderboard: a flagged chat
waits in a keep/drop queue, does not count until kept, and a dropped one never counts (page,
downloads, the test set's leaderboard, FED sets from the chats)."""
import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from annotation.models import Response
from annotation.services.claims import claim_next_slot
from annotation.work_tokens import make_token
from evaluation.fed.services import create_fed_set_from_chats
from evaluation.interactive import selectors
from evaluation.interactive.services.chats import create_chat_job
from evaluation.interactive.services.screening import review_chat, screen_chat_job
from evaluation.interactive.services.systems import import_goals, register_system
from evaluation.interactive.systems.reference import RESTAURANTS, ReferenceSystem
from evaluation.models import ChatScreening

from .systems import running

SECRET = "a-secret-of-twenty-chars"


def _chat(job, annotator, text, outcome):
    """One whole chat through the worker's pages: open, one message, the verdict and ratings."""
    user, worker = annotator
    client = Client()
    client.force_login(user)
    token = make_token(claim_next_slot(job=job, worker=worker))
    chat_url = reverse("work-chat", args=[token])
    client.post(chat_url, {"action": "open"}, content_type="application/json")
    client.post(chat_url, {"action": "say", "text": text}, content_type="application/json")
    answer = client.post(reverse("work", args=[token]), {
        "outcome": outcome, "outcome_reason": "" if outcome == "success" else "it did not help", "understanding": "4",
        "understanding_reason": "ok", "appropriateness": "4", "appropriateness_reason": "ok",
    })
    assert answer.status_code == 302, answer.content.decode()[:500]


@pytest.fixture
def chats(db, make_annotator):
    """One system, two dialogs on one goal: a clean success, and a failure where the worker swore."""
    goals = import_goals(name="g", goals_file=b'{"id": "g1", "goal": {"restaurant": {"info": {"food": "chinese"}}}}\n',
                         databases={"restaurant": json.dumps(RESTAURANTS).encode()})
    with running(ReferenceSystem(SECRET)) as url:
        system = register_system(name="ref", url=url, secret=SECRET)
        job = create_chat_job(name="chat", systems=[system], goal_set=goals, dialogs_per_goal=2)
        worker = make_annotator("w")  # submitting claims the worker's next dialog, so one worker does both
        _chat(job, worker, "chinese food please", "success")
        _chat(job, worker, "you idiots, chinese food", "fail")
    return job


def _success(job):
    row, = selectors.interactive_ranking(job)[0]["systems"]
    return row["dialogs"], row["success"]


def _page(organizer, job):
    client = Client()
    client.force_login(organizer)
    return client, client.get(reverse("evaluation:interactive-results", args=[job.pk])).content.decode()


def test_a_chat_with_a_listed_word_is_flagged_and_waits_uncounted(chats, organizer):
    screening = ChatScreening.objects.get()
    assert screening.flagged_words == ["idiot"] and screening.review == "pending"
    assert "idiots" in screening.response.answers["transcript"][1]["text"]
    assert _success(chats) == (1, 1.0)  # only the clean chat counts while the flagged one waits
    _client, page = _page(organizer, chats)
    assert "1 flagged dialog waits for" in page and f'id="screening-{screening.pk}"' in page and "<mark>idiot</mark>" in page


def test_dropping_it_leaves_it_out_of_the_leaderboard_and_downloads_keeping_it_counts(chats, organizer):
    screening = ChatScreening.objects.get()
    client, _page_text = _page(organizer, chats)
    client.post(reverse("evaluation:chat-review", args=[chats.pk, screening.pk]), {"decision": "drop"})
    assert ChatScreening.objects.get().review == "dropped" and _success(chats) == (1, 1.0)
    _client, page = _page(organizer, chats)
    assert "1 dropped dialog is left out of this leaderboard and its downloads" in page
    csv_text = client.get(reverse("evaluation:interactive-results-file", args=[chats.pk, "csv"])).content.decode()
    assert csv_text.splitlines()[1].split(",")[csv_text.splitlines()[0].split(",").index("dialogs")] == "1"
    assert create_fed_set_from_chats(name="fed", chat_job=chats).candidates.count() == 1  # nor rated with FED
    client.post(reverse("evaluation:chat-review", args=[chats.pk, screening.pk]), {"decision": "keep"})
    assert ChatScreening.objects.get().review == "kept" and _success(chats) == (2, 0.5)
    _client, page = _page(organizer, chats)
    assert 'id="screening-note"' not in page and "1 kept, 0 dropped, 0 waiting" in page


def test_a_chat_kept_in_the_chat_queue_is_not_asked_about_again_in_a_fed_set(chats, organizer, settings, tmp_path):
    screening = ChatScreening.objects.get()
    pending = create_fed_set_from_chats(name="before", chat_job=chats)
    assert sorted(pending.candidates.values_list("review", flat=True)) == ["clean", "pending"]  # not reviewed yet: asked
    review_chat(screening, keep=True)
    for level in ("dialog", "turn"):
        fed = create_fed_set_from_chats(name=f"after {level}", chat_job=chats, level=level)
        flagged = fed.candidates.exclude(review="clean")
        assert flagged.exists() and set(flagged.values_list("review", flat=True)) == {"kept"}
        assert all(c.reviewed_at is not None for c in flagged)
    # A word the organizer did not see when keeping the chat is asked about.
    words = tmp_path / "words.txt"
    words.write_text("idiot\nchinese\n")
    settings.QUORUM_OFFENSIVE_WORDS = str(words)
    fed = create_fed_set_from_chats(name="new list", chat_job=chats)
    assert sorted(fed.candidates.values_list("review", flat=True)) == ["pending", "pending"]


def test_bad_review_posts_change_nothing(chats, organizer, make_annotator):
    screening = ChatScreening.objects.get()
    client, _page_text = _page(organizer, chats)
    answer = client.post(reverse("evaluation:chat-review", args=[chats.pk, screening.pk]), {"decision": "maybe"}, follow=True)
    assert "Choose keep or drop." in answer.content.decode() and ChatScreening.objects.get().review == "pending"
    assert client.post(reverse("evaluation:chat-review", args=[chats.pk + 1000, screening.pk]), {"decision": "drop"}).status_code == 404
    worker = Client()
    worker.force_login(make_annotator("w9")[0])
    assert worker.post(reverse("evaluation:chat-review", args=[chats.pk, screening.pk]), {"decision": "drop"}).status_code == 403
    assert ChatScreening.objects.get().review == "pending"


def test_a_broken_word_list_does_not_fail_the_worker_and_screening_again_catches_up(db, make_annotator, organizer, settings, tmp_path):
    settings.QUORUM_OFFENSIVE_WORDS = str(tmp_path / "missing.txt")
    goals = import_goals(name="g", goals_file=b'{"id": "g1", "goal": {"restaurant": {"info": {"food": "chinese"}}}}\n')
    with running(ReferenceSystem(SECRET)) as url:
        job = create_chat_job(name="chat", systems=[register_system(name="ref", url=url, secret=SECRET)], goal_set=goals)
        _chat(job, make_annotator("w"), "shut up and find chinese food", "success")  # submitted, though not screened
    assert not ChatScreening.objects.exists() and Response.objects.count() == 1
    client, _page_text = _page(organizer, job)
    answer = client.post(reverse("evaluation:chat-screen", args=[job.pk]), follow=True).content.decode()
    assert "Not screened: the offensive-word file &#x27;missing.txt&#x27; cannot be read" in answer and str(tmp_path) not in answer
    (tmp_path / "missing.txt").write_text("# ours\nshut up\n", encoding="utf-8")
    client.post(reverse("evaluation:chat-screen", args=[job.pk]))
    assert ChatScreening.objects.get().flagged_words == ["shut up"]
    assert screen_chat_job(job) == 0  # screened once: the decision is not asked again
    review_chat(ChatScreening.objects.get(), keep=True)
    assert _success(job) == (1, 1.0)



def test_the_api_shows_the_interactive_results_without_dropped_chats_and_systems_paused_state(chats, organizer, make_annotator):
    from django.utils import timezone
    from rest_framework.test import APIClient

    from evaluation.models import DialogSystem

    api = APIClient()
    api.force_authenticate(organizer)
    body = api.get(f"/api/evaluation/interactive/{chats.pk}/").json()
    assert body["screening"] == {"pending": 1, "kept": 0, "dropped": 0}
    assert [(r["system"], r["dialogs"], r["success"]) for r in body["systems"]] == [("ref", 1, 1.0)]
    review_chat(ChatScreening.objects.get(), keep=True)
    body = api.get(f"/api/evaluation/interactive/{chats.pk}/").json()
    assert body["screening"]["kept"] == 1 and body["systems"][0]["dialogs"] == 2 and body["systems"][0]["success"] == 0.5
    assert api.get(f"/api/evaluation/interactive/{chats.pk + 1000}/").status_code == 404

    system = DialogSystem.objects.get()
    system.paused_at, system.paused_reason = timezone.now(), "3 consecutive failed turns (the limit is 3)"
    system.save()
    listed, = api.get("/api/evaluation/systems/").json()["results"]
    assert listed["paused_reason"] == "3 consecutive failed turns (the limit is 3)" and listed["paused_at"] and "secret" not in listed
    worker_api = APIClient()
    worker_api.force_authenticate(make_annotator("w9")[0])
    assert worker_api.get(f"/api/evaluation/interactive/{chats.pk}/").status_code == 403


def test_the_test_sets_leaderboard_counts_the_same_dialogs_and_says_what_is_left_out(chats, organizer, test_set):
    from evaluation.models import DialogSystem, Entry, EntryInteractiveRun, Team

    entry = Entry.objects.create(team=Team.objects.create(challenge=test_set.challenge, team_id="t"), test_set=test_set, entry_id="e",
                                 objective_scores={"bleu": 1}, dialog_system=DialogSystem.objects.get())
    EntryInteractiveRun.objects.create(entry=entry, job=chats)
    row, = selectors.interactive_leaderboard(test_set)["rows"]
    assert row["human"]["dialogs"] == 1 and row["human"]["success"] == 1.0
    client, _page_text = _page(organizer, chats)
    page = client.get(reverse("evaluation:scheduled-leaderboard", args=[test_set.pk])).content.decode()
    assert "0 dropped dialogs and 1 waiting for review is left out" in page
    review_chat(ChatScreening.objects.get(), keep=True)
    row, = selectors.interactive_leaderboard(test_set)["rows"]
    assert row["human"]["dialogs"] == 2 and row["human"]["success"] == 0.5
    assert 'id="screening-note"' not in client.get(reverse("evaluation:scheduled-leaderboard", args=[test_set.pk])).content.decode()


def test_when_every_dialog_is_dropped_the_downloads_say_the_runs_state_and_why_nothing_is_ranked(db, make_annotator, organizer):
    """Each download answered 404 while the page showed the run's state: now every one answers with
    the page's sentences."""
    goals = import_goals(name="g", goals_file=b'{"id": "g1", "goal": {"restaurant": {"info": {"food": "chinese"}}}}\n',
                         databases={"restaurant": json.dumps(RESTAURANTS).encode()})
    with running(ReferenceSystem(SECRET)) as url:
        system = register_system(name="ref", url=url, secret=SECRET)
        job = create_chat_job(name="chat", systems=[system], goal_set=goals, dialogs_per_goal=1)
        _chat(job, make_annotator("w"), "you idiots, chinese food", "fail")
    review_chat(ChatScreening.objects.get(), keep=False)
    client, page = _page(organizer, job)
    why = "No dialogs count yet, so nothing is ranked (ref: 1 dropped)."
    state = "1 of 1 dialogs collected; the job is live: these numbers are provisional."
    screening = "Offensive-word filter: 1 dropped dialog is left out of this leaderboard and its downloads."
    assert why in page and state in page and screening in page
    for fmt in ("csv", "md", "json", "pairwise.csv"):
        answer = client.get(reverse("evaluation:interactive-results-file", args=[job.pk, fmt]))
        assert answer.status_code == 200, fmt
        if fmt != "pairwise.csv":  # the pairs: a header and no row
            assert all(words in answer.content.decode() for words in (why, state, screening)), fmt
    body = json.loads(client.get(reverse("evaluation:interactive-results-file", args=[job.pk, "json"])).content)
    assert body["systems"] == [] and body["nothing_to_rank"] == why
    assert body["unscored"] == [{"system": "ref", "dropped": 1, "pending": 0, "reason": "no dialogs count: 1 dropped"}]
    # The command says the same and ends normally (it stopped with "no dialogs that count yet").
    for fmt in ("md", "csv"):
        out = StringIO()
        call_command("rank_interactive", str(job.pk), "--format", fmt, stdout=out)
        assert all(words in out.getvalue() for words in (why, state, screening)), fmt
