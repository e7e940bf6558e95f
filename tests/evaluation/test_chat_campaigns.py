"""An organizer creates a chat (interactive) job by page and by command; a system that keeps failing
is paused (no new chats, the worker in a chat with it ends without penalty) and resumed."""
import json
from collections import Counter
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from annotation.models import Job, Response
from annotation.services.claims import claim_next_slot
from annotation.work_tokens import make_token
from evaluation.interactive.order import interleave
from evaluation.interactive.services.chats import create_chat_job
from evaluation.interactive.services.systems import import_goals, register_system
from evaluation.interactive.systems.pausing import pause_reason
from evaluation.interactive.systems.reference import RESTAURANTS, ReferenceSystem
from evaluation.models import ChatTurn, DialogSystem

from .systems import Broken, running

SECRET = "a-secret-of-twenty-chars"
GOALS = (
    b'{"id": "g1", "goal": {"restaurant": {"info": {"food": "chinese", "area": "centre"}}}}\n'
    b'{"id": "g2", "goal": {"restaurant": {"info": {"food": "italian"}}}}\n'
)


@pytest.fixture
def goal_set(db):
    return import_goals(name="goals", goals_file=GOALS, databases={"restaurant": json.dumps(RESTAURANTS).encode()})


def _system(name, url="http://127.0.0.1:9", passed=True, **fields):
    # Registered without a live server, so the contract check fails; the page offers only systems
    # that passed, so by default the test marks it passed (as a fixed system checked again would be).
    system = register_system(name=name, url=url, secret=SECRET, **fields)
    if passed:
        type(system).objects.filter(pk=system.pk).update(check_passed=True)
        system.refresh_from_db()
    return system


def _organizer_client(organizer):
    client = Client()
    client.force_login(organizer)
    return client


def test_an_organizer_creates_a_chat_job_on_the_systems_page(goal_set, organizer):
    a, b = _system("team-a"), _system("team-b")
    client = _organizer_client(organizer)
    page = client.get(reverse("evaluation:systems")).content.decode()
    assert 'id="chat-job-form"' in page and "no page or command" not in page
    answer = client.post(reverse("evaluation:chat-job-create"), {
        "name": "round 1", "systems": [a.pk, b.pk], "goal_set": goal_set.pk, "dialogs_per_goal": 3,
        "min_user_turns": 2, "reward": "0.40", "instructions": "Be natural.",
    })
    assert answer.status_code == 302
    job = Job.objects.get(name="round 1")
    assert job.state == Job.State.LIVE and job.task_type == "chat" and job.settings["min_user_turns"] == 2
    endpoints = [item.payload["endpoint"] for item in job.items.all()]
    assert len(endpoints) == 12  # 2 goals x 2 systems x 3
    assert endpoints.count(a.public_id) == endpoints.count(b.public_id) == 6
    assert "round 1" in client.get(reverse("evaluation:systems")).content.decode()


def test_a_bad_chat_job_form_is_refused_with_its_reason_and_writes_nothing(goal_set, organizer):
    a = _system("team-a")
    client = _organizer_client(organizer)
    answer = client.post(reverse("evaluation:chat-job-create"), {"name": "r", "systems": [], "goal_set": goal_set.pk, "dialogs_per_goal": 0, "min_user_turns": 1, "reward": "0.4"})
    assert answer.status_code == 400 and not Job.objects.exists()
    assert "This field is required" in answer.content.decode()  # systems
    a.paused_at, a.paused_reason = a.created_at, "5 consecutive failed turns"
    a.save()
    answer = client.post(reverse("evaluation:chat-job-create"), {"name": "r", "systems": [a.pk], "goal_set": goal_set.pk, "dialogs_per_goal": 1, "min_user_turns": 1, "reward": "0.4"})
    assert answer.status_code == 400 and not Job.objects.exists()  # a paused system is not offered


def test_create_chat_job_command(goal_set):
    _system("team-a"), _system("team-b")
    out = StringIO()
    call_command("create_chat_job", "cmd job", "--systems", "team-a,team-b", "--goals", "goals", "--dialogs-per-goal", "2", stdout=out)
    assert "4 goals" not in out.getvalue() and "8 dialogs" in out.getvalue()
    assert Job.objects.get(name="cmd job").items.count() == 8
    with pytest.raises(CommandError, match="no registered system named 'team-z'.*registered: team-a, team-b"):
        call_command("create_chat_job", "x", "--systems", "team-a,team-z", "--goals", "goals")
    with pytest.raises(CommandError, match="--goals: no goal set named 'nope'"):
        call_command("create_chat_job", "x", "--systems", "team-a", "--goals", "nope")
    with pytest.raises(CommandError, match="dialogs per goal must be a whole number from 1 to 100"):
        call_command("create_chat_job", "x", "--systems", "team-a", "--goals", "goals", "--dialogs-per-goal", "0")
    with pytest.raises(CommandError, match="reward"):
        call_command("create_chat_job", "x", "--systems", "team-a", "--goals", "goals", "--reward", "lots")
    assert not Job.objects.filter(name="x").exists()


@pytest.mark.parametrize("recent, expected", [
    ([True] * 5, "5 consecutive failed turns (the limit is 5)"),
    ([True] * 4 + [False] * 16, None),  # 4 in a row, 20% of the window
    ([True, False] * 10, "10 of the last 20 turns failed (the limit is 50%)"),
    ([True, False] * 9, None),  # 50%, but the window is not full yet
    ([False] + [True] * 19, "19 of the last 20 turns failed (the limit is 50%)"),
])
def test_pause_rules(recent, expected):
    assert pause_reason(recent, consecutive=5, window=20, rate=0.5) == expected


def _page_chat(client, token, action, **body):
    return client.post(reverse("work-chat", args=[token]), {"action": action, **body}, content_type="application/json").json()


def test_a_system_that_keeps_failing_is_paused_the_worker_ends_without_penalty_and_an_organizer_resumes_it(
    goal_set, make_annotator, organizer, settings, django_capture_on_commit_callbacks
):
    settings.QUORUM_SYSTEM_PAUSE_CONSECUTIVE_FAILURES = 3
    with running(Broken("error", secret=SECRET)) as broken_url, running(ReferenceSystem(SECRET)) as good_url:
        broken, good = _system("broken", broken_url), _system("good", good_url)
        seed = next(n for n in range(100) if interleave(2, 2, 2, n)[0][1] == 0)  # the broken one first
        job = create_chat_job(name="chat", systems=[broken, good], goal_set=goal_set, dialogs_per_goal=2, seed=seed)
        user, worker = make_annotator("w")
        client = Client()
        client.force_login(user)
        slot = claim_next_slot(job=job, worker=worker)
        assert slot.item.payload["endpoint"] == broken.public_id
        token = make_token(slot)
        _page_chat(client, token, "open")
        for n in range(3):
            state = _page_chat(client, token, "say", text=f"chinese please ({n})")
        assert [t["failed"] for t in state["turns"] if t["role"] == "system"] == [False, True, True, True]
        broken.refresh_from_db()
        assert broken.paused_at and broken.paused_reason == "3 consecutive failed turns (the limit is 3)"

        # The worker in the chat: the next message is not sent to the system; they are told to end.
        calls_before = ChatTurn.objects.filter(session__system=broken).count()
        state = _page_chat(client, token, "say", text="hello?")
        assert state["unavailable"] and "not available" in state["turns"][-1]["text"]
        assert ChatTurn.objects.filter(session__system=broken, error="system paused").count() == 1
        assert ChatTurn.objects.filter(session__system=broken).count() == calls_before + 2
        page = client.get(reverse("work", args=[token])).content.decode()
        assert 'id="chat-unavailable"' in page
        _page_chat(client, token, "end", reason="fail")
        assert client.post(reverse("work", args=[token]), {"outcome": "fail"}).status_code == 302  # no ratings, no reason
        response = Response.objects.get(slot=slot)
        assert response.status != Response.Status.REJECTED
        assert response.answers["outcome"] == "fail" and response.answers["understanding"] is None
        assert response.answers["system_unavailable"] is True

        # No new chats with the paused system: every further claim is a chat with the good one.
        others = []
        for name in ("x", "y", "z"):
            claimed = claim_next_slot(job=job, worker=make_annotator(name)[1])
            others.append(claimed.item.payload["endpoint"])
        assert set(others) == {good.public_id}

        org = _organizer_client(organizer)
        page = org.get(reverse("evaluation:systems")).content.decode()
        assert "paused" in page and "3 consecutive failed turns" in page
        # Resume runs the contract check first: still broken, it stays paused with the check's reason.
        resume = reverse("evaluation:system-resume", args=[broken.pk])
        with django_capture_on_commit_callbacks(execute=True):  # the check, queued at the commit
            answer = org.post(resume, follow=True).content.decode()
        broken.refresh_from_db()
        assert broken.paused_at and broken.paused_reason.startswith("not resumed, its contract check failed (") and broken.checked_at
        assert not broken.resume_when_checked and "“broken” is being checked; it is resumed if its contract check passes" in answer
        assert "not resumed, its contract check failed (" in org.get(reverse("evaluation:systems")).content.decode()
        # Fixed (here: another address), Resume checks it again and gives it chats.
        DialogSystem.objects.filter(pk=broken.pk).update(url=good_url)
        with django_capture_on_commit_callbacks(execute=True):
            answer = org.post(resume, follow=True).content.decode()
        broken.refresh_from_db()
        assert broken.paused_at is None and broken.paused_reason == "" and broken.resumed_at and broken.check_passed
        again = {claim_next_slot(job=job, worker=make_annotator(n)[1]).item.payload["endpoint"] for n in ("v", "u")}
        assert broken.public_id in again  # chats go to it again (3 of the 4 open chats are its)


def test_a_worker_with_a_working_system_still_owes_the_ratings(goal_set, make_annotator):
    with running(ReferenceSystem(SECRET)) as url:
        job = create_chat_job(name="chat", systems=[_system("good", url)], goal_set=goal_set)
        user, worker = make_annotator("w")
        client = Client()
        client.force_login(user)
        token = make_token(claim_next_slot(job=job, worker=worker))
        _page_chat(client, token, "open")
        assert not _page_chat(client, token, "say", text="chinese in the centre")["unavailable"]
        answer = client.post(reverse("work", args=[token]), {"outcome": "fail", "system_unavailable": "True"})
    assert answer.status_code == 400 or not Response.objects.exists()  # a page cannot claim the system failed
    assert not Response.objects.exists()
    assert DialogSystem.objects.get(name="good").paused_at is None


def test_a_system_that_did_not_pass_is_not_offered_for_chats(goal_set, organizer):
    failing = _system("team-failing", passed=False)
    client = _organizer_client(organizer)
    page = client.get(reverse("evaluation:systems")).content.decode()
    assert f'value="{failing.pk}"' not in page.split('name="systems"', 1)[-1].split("</select>", 1)[0]
    answer = client.post(reverse("evaluation:chat-job-create"), {"name": "r", "systems": [failing.pk], "goal_set": goal_set.pk, "dialogs_per_goal": 1, "min_user_turns": 1, "reward": "0.4"})
    assert answer.status_code == 400


def test_a_passed_check_says_how_old_it_is(goal_set, organizer):
    """A system that stopped answering stays "passed" until it is checked again; the page says when
    that check ran, so an organizer reads a check from last week as such."""
    from datetime import timedelta

    from django.utils import timezone

    system = _system("team-old-check")
    type(system).objects.filter(pk=system.pk).update(checked_at=timezone.now() - timedelta(days=3, hours=2))
    page = _organizer_client(organizer).get(reverse("evaluation:systems")).content.decode()
    row = page[page.index(f'id="system-{system.pk}"'):]
    assert "passed" in row[: row.index("check-age")]
    assert "checked 3\xa0days, 2\xa0hours ago" in row[: row.index("</td>", row.index("check-age"))]


def test_failed_calls_count_the_systems_failures_not_quorums_replies_after_the_pause(goal_set, make_annotator, organizer, settings):
    """Organizer walk, defect 8: team-B showed 8 failed turns, 5 failed calls and 3 of Quorum's own
    "not available" replies sent after the pause, when the system was not called."""
    from evaluation.interactive import selectors

    settings.QUORUM_SYSTEM_PAUSE_CONSECUTIVE_FAILURES = 3
    with running(Broken("error", secret=SECRET)) as broken_url:
        broken = _system("broken", broken_url)
        job = create_chat_job(name="chat", systems=[broken], goal_set=goal_set)
        user, worker = make_annotator("w")
        client = Client()
        client.force_login(user)
        token = make_token(claim_next_slot(job=job, worker=worker))
        _page_chat(client, token, "open")
        for n in range(5):  # 3 failed calls pause it; 2 more messages get Quorum's refusal
            _page_chat(client, token, "say", text=f"chinese please ({n})")
        _page_chat(client, token, "end", reason="fail")
        assert client.post(reverse("work", args=[token]), {"outcome": "fail"}).status_code == 302
    assert ChatTurn.objects.filter(session__system=broken, failed=True).count() == 5
    row, = selectors.interactive_ranking(job)[0]["systems"]
    assert row["failed_calls"] == 3
    page = _organizer_client(organizer).get(reverse("evaluation:interactive-results", args=[job.pk])).content.decode()
    assert "Failed calls" in page and "not counted" in page


@pytest.mark.parametrize("goals,systems,dialogs", [(3, 2, 2), (2, 2, 3), (4, 2, 1), (1, 3, 2), (5, 3, 2), (6, 4, 1)])
def test_the_chat_order_interleaves_systems_and_goals_reproducibly(goals, systems, dialogs):
    """Organizer walk, defect 3: chats were handed out goal by goal and system by system (a worker got
    the same goal with the same system twice in a row; mid-run 6 dialogs of team-A against 2 of
    team-B). Now every prefix of the order is balanced across systems, goals do not repeat at the
    next position (from 3 goals on), every pair gets its dialogs, and the seed decides the order."""
    order = interleave(goals, systems, dialogs, seed=11)
    assert Counter(order) == {(g, s): dialogs for g in range(goals) for s in range(systems)}
    for k in range(len(order) + 1):
        counts = Counter(s for _g, s in order[:k])
        assert max(counts.get(s, 0) for s in range(systems)) - min(counts.get(s, 0) for s in range(systems)) <= 1
    if goals >= 3:
        assert all(a[0] != b[0] for a, b in zip(order, order[1:], strict=False))
    assert interleave(goals, systems, dialogs, seed=11) == order
    assert goals * systems == 1 or any(interleave(goals, systems, dialogs, seed=n) != order for n in range(12, 20))


def test_a_chat_job_hands_out_interleaved_chats_and_never_the_same_goal_twice_in_a_row(make_annotator):
    a, b = _system("team-a"), _system("team-b")
    goals = import_goals(name="three", goals_file=GOALS + b'{"id": "g3", "goal": {"restaurant": {"info": {"food": "indian"}}}}\n')
    job = create_chat_job(name="round 1", systems=[a, b], goal_set=goals, dialogs_per_goal=2)
    first_eight = [claim_next_slot(job=job, worker=make_annotator(f"w{n}")[1]).item.payload["endpoint"] for n in range(8)]
    assert Counter(first_eight) == {a.public_id: 4, b.public_id: 4}  # balanced mid-run
    # Three workers taking turns (as in the walk), each submitting before the next claim.
    job = create_chat_job(name="round 2", systems=[a, b], goal_set=goals, dialogs_per_goal=2)
    workers = [make_annotator(f"x{n}")[1] for n in range(3)]
    seen: dict = {w.pk: [] for w in workers}
    for _turn in range(4):
        for worker in workers:
            slot = claim_next_slot(job=job, worker=worker)
            if slot is None:
                continue
            seen[worker.pk].append(slot.item.payload["goal_id"])
            type(slot).objects.filter(pk=slot.pk).update(state="submitted")
    for goals_in_turn in seen.values():
        assert all(x != y for x, y in zip(goals_in_turn, goals_in_turn[1:], strict=False)), seen
    assert sum(len(v) for v in seen.values()) == 12


def test_a_chat_job_name_must_be_new_and_a_duplicate_creates_nothing(goal_set, organizer):
    """Organizer walk, defect 6: the help says the name 'must be new', yet a duplicate was launched."""
    a = _system("team-a")
    client = _organizer_client(organizer)
    fields = {"name": "round 1", "systems": [a.pk], "goal_set": goal_set.pk, "dialogs_per_goal": 1, "min_user_turns": 1, "reward": "0.40"}
    assert client.post(reverse("evaluation:chat-job-create"), fields).status_code == 302
    jobs, items = Job.objects.count(), Job.objects.get().items.count()
    answer = client.post(reverse("evaluation:chat-job-create"), {**fields, "name": " Round 1 "})
    assert answer.status_code == 400
    page = answer.content.decode()
    assert "No job was created: a job named &#x27;Round 1&#x27; exists already; choose a new name" in page
    assert 'value=" Round 1 "' in page or 'value="Round 1"' in page  # the form is kept as typed
    assert Job.objects.count() == jobs and Job.objects.get().items.count() == items
    with pytest.raises(CommandError, match="exists already"):
        call_command("create_chat_job", "round 1", "--systems", "team-a", "--goals", goal_set.name, stdout=StringIO())
    assert Job.objects.count() == jobs


def test_a_long_message_is_refused_whole_with_the_limit_said_never_cut(goal_set, make_annotator):
    """Organizer walk, defect 10: a pasted 1,500-character message was cut to 1,000 by the box's
    maxlength and sent without a word. Now the page states and counts the limit (no maxlength), and
    the server refuses a longer message whole, saying how long it is; nothing is sent or recorded."""
    job = create_chat_job(name="chat", systems=[_system("team-a")], goal_set=goal_set)
    user, worker = make_annotator("w")
    client = Client()
    client.force_login(user)
    token = make_token(claim_next_slot(job=job, worker=worker))
    page = client.get(reverse("work", args=[token])).content.decode()
    box = page.split('id="chat-input"', 1)[1].split(">", 1)[0]
    assert "maxlength" not in box and 'data-max-chars="1000"' in box and 'data-typing-name="chat_messages"' in box
    assert "At most 1000 characters per message." in page
    answer = client.post(reverse("work-chat", args=[token]), {"action": "say", "text": "x" * 1500}, content_type="application/json")
    assert answer.status_code == 400
    assert answer.json()["error"] == "Your message has 1,500 characters; the limit is 1,000. Shorten it and send it again (nothing was sent)."
    assert not ChatTurn.objects.filter(role="user").exists()


def test_the_chat_page_puts_the_cursor_in_the_message_box(goal_set, make_annotator):
    """Organizer walk, nit 6: the cursor landed on "Success" (a premature verdict one key away)."""
    job = create_chat_job(name="chat", systems=[_system("team-a")], goal_set=goal_set)
    user, worker = make_annotator("w")
    client = Client()
    client.force_login(user)
    page = client.get(reverse("work", args=[make_token(claim_next_slot(job=job, worker=worker))])).content.decode()
    box, rest = page.split('id="chat-input"', 1)[1].split(">", 1)
    assert " autofocus" in box and page.index('id="chat-input"') < page.index('name="outcome"')


def test_the_systems_page_says_when_a_live_chat_job_has_every_dialog(goal_set, organizer):
    """Organizer walk, nit 12: at 12/12 the job still read 'Live' with nothing suggesting Finish."""
    job = create_chat_job(name="round 1", systems=[_system("team-a")], goal_set=goal_set)
    client = _organizer_client(organizer)
    before = client.get(reverse("evaluation:systems")).content.decode()
    assert "(live: 0 of 2 dialogs collected)" in before and "press Finish" not in before
    job.items.update(state="complete")
    page = client.get(reverse("evaluation:systems")).content.decode()
    assert f'(live: all 2 dialogs collected; press Finish on <a href="{reverse("organizer:job", args=[job.pk])}">its job page</a> to close it)' in page


def test_a_transcript_in_words_names_offers_ratings_and_grounding():
    """Organizer walk, defect 7: 'Understanding None ()', offers as Python dicts, no word on grounding."""
    from evaluation.interactive.selectors import dialog_in_words

    goal = {"restaurant": {"info": {"food": "chinese", "area": "centre"}}}
    offer = {"domain": "restaurant", **next(r for r in RESTAURANTS if r["food"] == "chinese" and r["area"] == "centre")}
    answers = {
        "outcome": "fail", "outcome_reason": "The system stopped answering.", "understanding": None, "appropriateness": None,
        "system_unavailable": True,
        "transcript": [{"role": "user", "text": "chinese please", "failed": False, "offered": None},
                       {"role": "system", "text": "Try it", "failed": False, "offered": offer}],
    }
    words = dialog_in_words({"answers": answers, "goal": goal, "database": {"restaurant": RESTAURANTS}})
    assert words["understanding"] == words["appropriateness"] == "— (not asked: the system was paused)"
    assert words["turns"][1]["offer"].startswith(f"name {offer['name']}, ") and "{" not in words["turns"][1]["offer"]
    assert words["turns"][0]["speaker"] == "Worker" and words["grounded"] == "yes"
    assert dialog_in_words({"answers": {**answers, "understanding": 4, "understanding_reason": "ok"}, "goal": goal, "database": {}})[
        "understanding"] == "4 of 5 (ok)"
    assert dialog_in_words({"answers": answers, "goal": goal, "database": {}})["grounded"] == "cannot be told: the goal set has no database"


def test_the_exports_failed_calls_are_the_leaderboards_on_a_job_with_a_paused_system(goal_set, make_annotator, settings, tmp_path):
    """The combined-items export counted every failed turn, Quorum's own "not available" replies
    after the pause included (5 where the leaderboard said 3): both now count the system's failed
    calls, under the leaderboard's column name."""
    import csv

    from annotation.services.exports import export_job
    from evaluation.interactive import selectors

    settings.QUORUM_SYSTEM_PAUSE_CONSECUTIVE_FAILURES = 3
    with running(Broken("error", secret=SECRET)) as broken_url, running(ReferenceSystem(SECRET)) as good_url:
        broken, good = _system("broken", broken_url), _system("good", good_url)
        seed = next(n for n in range(100) if interleave(2, 2, 1, n)[0][1] == 0)  # the broken one first
        job = create_chat_job(name="chat", systems=[broken, good], goal_set=goal_set, seed=seed)
        for n, endpoint in enumerate([broken.public_id, good.public_id]):  # once paused, the broken one gets no chat
            user, worker = make_annotator(f"w{n}")
            client = Client()
            client.force_login(user)
            slot = claim_next_slot(job=job, worker=worker)
            assert slot.item.payload["endpoint"] == endpoint
            token = make_token(slot)
            _page_chat(client, token, "open")
            for k in range(5):  # the broken one: 3 failed calls pause it; 2 more messages get Quorum's refusal
                _page_chat(client, token, "say", text=f"chinese please ({k})")
            _page_chat(client, token, "end", reason="fail")
            answers = {"outcome": "fail", "outcome_reason": "no table"} if endpoint == good.public_id else {"outcome": "fail"}
            if endpoint == good.public_id:
                answers.update(understanding=3, understanding_reason="ok", appropriateness=3, appropriateness_reason="ok")
            assert client.post(reverse("work", args=[token]), answers).status_code == 302
    assert ChatTurn.objects.filter(session__system=broken, failed=True).count() == 5
    board = {row["system"]: row["failed_calls"] for row in selectors.interactive_ranking(job)[0]["systems"]}
    assert board == {"broken": 3, "good": 0}

    export_job(job, tmp_path / "out")
    names = {broken.public_id: "broken", good.public_id: "good"}
    endpoints = dict(job.items.values_list("pk", "payload__endpoint"))
    exported: Counter = Counter()
    with open(tmp_path / "out" / "items.csv", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            exported[names[endpoints[int(row["item_id"])]]] += int(row["failed_calls"])
    assert dict(exported) == board
