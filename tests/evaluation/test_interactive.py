"""Interactive evaluation end to end on a local port: a chat job over the reference system and its
weaker variant, conversations through the real work pages (the server relays; the page never names
the system), a failing system's fallback, and the results (success, grounded success, ratings)."""
import json
import re
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from annotation.models import Response
from annotation.services.claims import claim_next_slot
from annotation.work_tokens import make_token
from evaluation.interactive import selectors
from evaluation.interactive.services.chats import create_chat_job
from evaluation.interactive.services.systems import import_goals, register_system
from evaluation.interactive.systems.reference import RESTAURANTS, ReferenceSystem
from evaluation.stats.interactive import system_results

from .systems import Broken, running

SECRET = "a-secret-of-twenty-chars"
GOALS = b'{"id": "g1", "goal": {"restaurant": {"info": {"food": "chinese", "area": "centre"}}}}\n'


@pytest.fixture
def goal_set(db):
    return import_goals(name="goals", goals_file=GOALS, databases={"restaurant": json.dumps(RESTAURANTS).encode()})


def _chat(client, token, *messages):
    url = reverse("work-chat", args=[token])
    state = client.post(url, {"action": "open"}, content_type="application/json").json()
    for text in messages:
        state = client.post(url, {"action": "say", "text": text}, content_type="application/json").json()
    return state


def _dialog(job, annotator, messages, outcome="success"):
    user, worker = annotator
    client = Client()
    client.force_login(user)
    slot = claim_next_slot(job=job, worker=worker)
    token = make_token(slot)
    page = client.get(reverse("work", args=[token])).content.decode()
    state = _chat(client, token, *messages)
    client.post(reverse("work-chat", args=[token]), {"action": "end", "reason": outcome}, content_type="application/json")
    answers = {"outcome": outcome, "outcome_reason": "" if outcome == "success" else "wrong place", "understanding": "4",
               "understanding_reason": "ok", "appropriateness": "5", "appropriateness_reason": "polite"}
    assert client.post(reverse("work", args=[token]), answers).status_code == 302
    return page, state, Response.objects.get(slot=slot)


def test_a_chat_job_relays_turns_records_transcripts_and_ranks_by_grounded_success(goal_set, make_annotator):
    with running(ReferenceSystem(SECRET)) as good_url, running(ReferenceSystem(SECRET, weaker=True)) as weak_url:
        good = register_system(name="strong-team", url=good_url, secret=SECRET)
        weak = register_system(name="weak-team", url=weak_url, secret=SECRET)
        job = create_chat_job(name="chat", systems=[good, weak], goal_set=goal_set)
        assert job.items.count() == 2  # one dialog per (goal, system)
        results, annotator = [], make_annotator("w")
        for _n in range(2):  # the same worker: saving one dialog claims the next for them
            page, state, response = _dialog(job, annotator, ["I want chinese food in the centre", "book it for 2 people"])
            assert "strong-team" not in page and "weak-team" not in page  # the system is never named
            assert [t["role"] for t in state["turns"]] == ["system", "user", "system", "user", "system"]
            results.append(response)
    transcript = results[0].answers["transcript"]
    assert transcript[2]["offered"]["name"] == "Golden Wok" and not any(t["failed"] for t in transcript)
    rows = {r["system"]: r for r in system_results(selectors.interactive_dialogs(job))["systems"]}
    assert rows["strong-team"]["success"] == rows["strong-team"]["grounded_success"] == rows["strong-team"]["final"] == 1.0
    assert rows["strong-team"]["understanding"] == 4 and rows["weak-team"]["appropriateness"] == 5


def test_a_failing_system_shows_the_fallback_and_the_turn_is_recorded_as_failed(goal_set, make_annotator, settings):
    settings.QUORUM_SYSTEM_TURN_TIMEOUT_SECONDS = 0.5
    with running(Broken("slow", secret=SECRET, delay=1.5)) as url:
        system = register_system(name="slow", url=url, secret=SECRET)
        job = create_chat_job(name="chat", systems=[system], goal_set=goal_set)
        _page, state, response = _dialog(job, make_annotator("w"), ["chinese in the centre"], outcome="fail")
    assert state["turns"][-1]["failed"] and "did not answer" in state["turns"][-1]["text"]
    assert response.answers["transcript"][-1]["failed"]
    row, = system_results(selectors.interactive_dialogs(job))["systems"]
    assert row["success"] == 0 and row["failed_calls"] == 1


def test_a_chat_is_refused_until_the_worker_has_chatted_and_bad_requests_are_4xx(goal_set, make_annotator):
    with running(ReferenceSystem(SECRET)) as url:
        system = register_system(name="ref", url=url, secret=SECRET)
        job = create_chat_job(name="chat", systems=[system], goal_set=goal_set)
        user, worker = make_annotator("w")
        client = Client()
        client.force_login(user)
        token = make_token(claim_next_slot(job=job, worker=worker))
        answers = {"outcome": "success", "understanding": "4", "understanding_reason": "x", "appropriateness": "4", "appropriateness_reason": "y"}
        refused = client.post(reverse("work", args=[token]), answers)
        assert refused.status_code == 400 and "Chat with the system first" in refused.content.decode()
        url = reverse("work-chat", args=[token])
        assert client.post(url, {"action": "dance"}, content_type="application/json").status_code == 400
        assert client.post(url, {"action": "say", "text": ""}, content_type="application/json").status_code == 400
        assert client.post(url, {"action": "say", "text": "x" * 1001}, content_type="application/json").status_code == 400
        assert client.post(url, {"action": "end", "reason": "fail"}, content_type="application/json").status_code == 409  # not started
        client.post(url, {"action": "open"}, content_type="application/json")
        client.post(url, {"action": "end", "reason": "fail"}, content_type="application/json")
        assert client.post(url, {"action": "say", "text": "hello?"}, content_type="application/json").status_code == 409
        assert Client().post(url, {"action": "open"}, content_type="application/json").status_code == 401
    assert not Response.objects.exists()


def test_the_results_page_shows_the_ranking_and_transcripts(goal_set, make_annotator, organizer):
    with running(ReferenceSystem(SECRET)) as url:
        system = register_system(name="ref", url=url, secret=SECRET)
        job = create_chat_job(name="chat", systems=[system], goal_set=goal_set)
        _dialog(job, make_annotator("w"), ["chinese in the centre please"])
    client = Client()
    client.force_login(organizer)
    page = client.get(reverse("evaluation:interactive-results", args=[job.pk])).content.decode()
    assert "Success with grounding" in page and "Golden Wok" in page and "ref" in page
    # The transcript reads in words: who spoke, what was offered, whether it was grounded.
    assert '<span class="speaker">Worker</span> chinese in the centre please' in page
    assert "offered: area centre, food chinese, name Golden Wok" in page and "{&#x27;" not in page
    assert "Understanding 4 of 5 (ok); appropriateness 5 of 5 (polite). Grounded success: yes." in page
    assert client.get(reverse("evaluation:systems")).content.decode().count(f"/evaluation/interactive/{job.pk}/") == 1
    assert "bootstrap over user goals" in page and 'id="results-csv"' in page
    csv_answer = client.get(reverse("evaluation:interactive-results-file", args=[job.pk, "csv"]))
    assert csv_answer.status_code == 200 and csv_answer["Content-Type"].startswith("text/csv")
    lines = csv_answer.content.decode().splitlines()
    assert lines[0].startswith("rank,rank_low,rank_high,system,") and lines[1].startswith("1,1,1,ref,1,1,")
    assert client.get(reverse("evaluation:interactive-results-file", args=[job.pk, "pdf"])).status_code == 404
    out = StringIO()
    call_command("rank_interactive", str(job.pk), stdout=out)
    assert "| 1 | 1-1 | ref | 1 |" in out.getvalue()
    # The ratings read as in the Markdown: three decimals, interval included (the page's template
    # rounds a half up, Python's format to the nearer binary value: they may differ in the last place).
    import re

    markdown = client.get(reverse("evaluation:interactive-results-file", args=[job.pk, "md"])).content.decode()
    cell = r"(\d\.\d{3}) \[(\d\.\d{3}), (\d\.\d{3})\]"
    written = [tuple(map(float, c)) for c in re.findall(cell, markdown) if float(c[0]) > 1]  # the 1-5 ratings
    shown = [tuple(map(float, c)) for c in re.findall(cell.replace(r" \[", r' <span class="muted">\['), page) if float(c[0]) > 1]
    assert written and len(shown) == len(written)
    assert all(abs(a - b) <= 0.0011 for w, p in zip(written, shown, strict=True) for a, b in zip(w, p, strict=True))
    with pytest.raises(CommandError, match="No chat job with id 999999"):
        call_command("rank_interactive", "999999")


def test_the_results_page_of_a_job_without_dialogs_says_so(goal_set, organizer):
    system = register_system(name="ref", url="http://127.0.0.1:9", secret=SECRET)
    job = create_chat_job(name="chat", systems=[system], goal_set=goal_set)
    client = Client()
    client.force_login(organizer)
    page = client.get(reverse("evaluation:interactive-results", args=[job.pk]))
    said = "No dialogs count yet, so nothing is ranked (ref: no dialog collected yet)."
    assert page.status_code == 200 and said in page.content.decode()
    csv_file = client.get(reverse("evaluation:interactive-results-file", args=[job.pk, "csv"]))  # the state, not a 404
    assert csv_file.status_code == 200 and said in csv_file.content.decode()
    assert client.get(reverse("evaluation:interactive-results-file", args=[job.pk, "xlsx"])).status_code == 404  # no such format


def _varied_dialogs(job):
    """Six goals per system with mixed outcomes and ratings, so the intervals depend on the seed."""
    database = {"restaurant": RESTAURANTS}
    goal = {"restaurant": {"info": {"food": "chinese", "area": "centre"}}}
    offered = {"name": "Golden Wok"}
    dialogs = []
    for system, fits in (("strong-team", [1, 1, 1, 0, 1, 1]), ("weak-team", [1, 0, 1, 0, 0, 1])):
        for goal_id, fit in enumerate(fits):
            transcript = [{"role": "user", "text": "chinese in the centre", "failed": False, "offered": None},
                          {"role": "system", "text": "Golden Wok", "failed": False, "offered": offered if fit else None}]
            answers = {"outcome": "success" if fit else "fail", "transcript": transcript,
                       "understanding": 5 - goal_id % 3, "appropriateness": 3 + goal_id % 2}
            dialogs.append({"system": system, "goal_id": str(goal_id), "goal": goal, "goal_text": [], "database": database,
                            "worker": goal_id % 3, "response_id": len(dialogs) + 1, "answers": answers})
    return dialogs


def test_the_demo_prints_the_leaderboard_the_results_page_and_the_api_show(goal_set, organizer, monkeypatch):
    """An organizer reads the same intervals in `make demo`'s console as on the job's results page."""
    from rest_framework.test import APIClient

    from evaluation.interactive.demo import report_leaderboard

    systems = [register_system(name=name, url="http://127.0.0.1:9", secret=SECRET) for name in ("strong-team", "weak-team")]
    job = create_chat_job(name="chat", systems=systems, goal_set=goal_set)
    monkeypatch.setattr(selectors, "interactive_dialogs", _varied_dialogs)
    printed = []
    summary = report_leaderboard(job, printed.append)
    client = Client()
    client.force_login(organizer)
    page = client.get(reverse("evaluation:interactive-results", args=[job.pk])).content.decode()
    api = APIClient()
    api.force_authenticate(organizer)
    shown = api.get(f"/api/evaluation/interactive/{job.pk}/").json()["systems"]
    assert [{k: row[k] for k in summary[0]} for row in shown] == summary
    for row in shown:
        line, = (line for line in printed if f"| {row['system']} | {row['dialogs']} |" in line)
        final = f"{row['final']:.3f} [{row['final_ci_low']:.3f}, {row['final_ci_high']:.3f}]"
        success = f"{row['success']:.3f} [{row['success_ci_low']:.3f}, {row['success_ci_high']:.3f}]"
        assert final in line and success in line, (line, row)
        assert f"<strong>{row['final']:.3f}</strong> <span class=\"muted\">[{row['final_ci_low']:.3f}, {row['final_ci_high']:.3f}]</span>" in page
    page_seed = re.search(r"resamples, seed (\d+)\)", page).group(1)
    assert any(f"seed {page_seed})" in line for line in printed), printed


def _three_goal_dialogs(job):
    """Organizer walk, job 2: two systems on 3 goals each, too few to compare them."""
    return [d for d in _varied_dialogs(job) if int(d["goal_id"]) < 3]


def test_two_systems_on_three_goals_are_too_few_to_compare_on_the_page_and_in_the_api(goal_set, organizer, monkeypatch):
    from rest_framework.test import APIClient

    systems = [register_system(name=name, url="http://127.0.0.1:9", secret=SECRET) for name in ("strong-team", "weak-team")]
    job = create_chat_job(name="chat", systems=systems, goal_set=goal_set)
    monkeypatch.setattr(selectors, "interactive_dialogs", _three_goal_dialogs)
    client = Client()
    client.force_login(organizer)
    page = client.get(reverse("evaluation:interactive-results", args=[job.pk])).content.decode()
    assert "[-1.000, 1.000] too few to compare" in page
    api = APIClient()
    api.force_authenticate(organizer)
    pair, = api.get(f"/api/evaluation/interactive/{job.pk}/").json()["pairwise"]
    assert pair["too_few"] and pair["p"] is None and (pair["ci_low"], pair["ci_high"]) == (-1.0, 1.0)


def test_a_chat_jobs_page_links_to_its_leaderboard_and_other_jobs_do_not(goal_set, organizer):
    from tests.factories import make_live_job

    system = register_system(name="ref", url="http://127.0.0.1:9", secret=SECRET)
    job = create_chat_job(name="chat", systems=[system], goal_set=goal_set)
    client = Client()
    client.force_login(organizer)
    page = client.get(reverse("organizer:job", args=[job.pk])).content.decode()
    results = reverse("evaluation:interactive-results", args=[job.pk])
    assert f'<a href="{results}" class="job-link">Results: the systems&#x27; leaderboard from these chats</a>' in page
    rewrite = make_live_job(name="rewrites")
    assert 'class="job-link"' not in client.get(reverse("organizer:job", args=[rewrite.pk])).content.decode()
