"""The annotator web UI through Django's test client: who may open what, claim and submit, refusals,
live checks, escaping, work tokens."""
import json
import re
import time
from datetime import timedelta
from unittest import mock

import pytest
from django.contrib.auth.models import User
from django.core import signing
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape

from annotation.models import Corpus, Dialog, Item, Job, Response, Slot, Turn, Worker
from annotation.services.claims import check_answers, claim_next_slot, release_expired_claims
from annotation.services.jobs import create_job, launch_job
from annotation.text.highlight import slot_segments
from annotation.work_tokens import make_token, read_token
from quorum.roles import make_annotator as make_worker_for
from tests.factories import good_answers, make_corpus, make_live_job

pytestmark = pytest.mark.django_db

LOGIN = "login"  # expected outcome: a redirect to the login page


# --- helpers -----------------------------------------------------------------------------------


def token_in(location: str) -> str:
    match = re.fullmatch(r"/work/([^/]+)/(?:\?saved=1)?", location)
    assert match, f"not a work page URL: {location}"
    return match.group(1)


def claim_by_client(client, job) -> str:
    """POST 'next item' as the logged-in client; the token of the claimed slot."""
    response = client.post(reverse("job-next", args=[job.pk]))
    assert response.status_code == 302, response.content[:500]
    return token_in(response["Location"])


def work_token_of(url: str) -> str:
    """The token of a work page's address (/work/<token>/...)."""
    return url.split("/work/", 1)[1].split("/", 1)[0]


def slot_of(token) -> Slot:
    return Slot.objects.select_related("item").get(pk=read_token(token)[0])


def one_turn_corpus(name, utterance, slot_values, before=()):
    """A corpus of one dialog: `before` as (speaker, text) turns, then the user turn to rewrite."""
    corpus = Corpus.objects.create(name=name, source_format="jsonl")
    dialog = Dialog.objects.create(corpus=corpus, external_id="d0", position=0)
    for index, (speaker, text) in enumerate(before):
        Turn.objects.create(dialog=dialog, index=index, speaker=speaker, text=text)
    Turn.objects.create(
        dialog=dialog,
        index=len(before),
        speaker="user",
        text=utterance,
        slot_values=[{"slot": f"s{i}", "value": v} for i, v in enumerate(slot_values)],
    )
    return corpus


@pytest.fixture
def people(make_annotator, organizer):
    """Logged-in clients for annotators A and B and an organizer who is not an annotator."""
    user_a, worker_a = make_annotator("anna")
    user_b, worker_b = make_annotator("bert")
    clients = {"anonymous": Client(), "A": Client(), "B": Client(), "organizer": Client()}
    clients["A"].force_login(user_a)
    clients["B"].force_login(user_b)
    clients["organizer"].force_login(organizer)
    return {"clients": clients, "A": worker_a, "B": worker_b}


# --- the permission matrix ---------------------------------------------------------------------

# route -> (method, path builder, body). Token routes use a slot that annotator A has claimed.
ROUTES = {
    "home": ("get", lambda job, token: reverse("home"), None),
    "next": ("post", lambda job, token: reverse("job-next", args=[job.pk]), None),
    "work": ("get", lambda job, token: reverse("work", args=[token]), None),
    "submit": ("post", lambda job, token: reverse("work", args=[token]), {"paraphrase": ""}),
    "check": ("json", lambda job, token: reverse("work-check", args=[token]), {"answers": {"paraphrase": "x"}}),
    "skip": ("post", lambda job, token: reverse("work-skip", args=[token]), None),
    "done": ("get", lambda job, token: reverse("work-done", args=[token]), None),
}
# Expected status per route and requester. 302 from "next" goes to a work page; from "skip" home.
# A's refused submission (empty answers) is a 400 that shows the form again.
MATRIX = {
    #          anonymous  A     B    organizer-only
    "home": (LOGIN, 200, 200, 302),  # an organizer with no work of their own is sent to the dashboard
    "next": (LOGIN, 302, 302, 403),
    "work": (LOGIN, 200, 403, 403),
    "submit": (LOGIN, 400, 403, 403),
    "check": (401, 200, 403, 403),
    "skip": (LOGIN, 302, 403, 403),
    "done": (LOGIN, 200, 403, 403),
}
WHO = ("anonymous", "A", "B", "organizer")


@pytest.mark.parametrize(
    "route,who,expected",
    [(route, who, outcome) for route, row in MATRIX.items() for who, outcome in zip(WHO, row, strict=False)],
)
def test_permission_matrix(people, route, who, expected):
    job = make_live_job(make_corpus(dialogs=2, user_turns=2), redundancy=2)
    slot_a = claim_next_slot(job=job, worker=people["A"])
    token = make_token(slot_a)
    method, path_for, body = ROUTES[route]
    path = path_for(job, token)
    client = people["clients"][who]
    if method == "json":
        response = client.post(path, data=json.dumps(body), content_type="application/json")
    else:
        response = getattr(client, method)(path, data=body or {})

    if expected == LOGIN:
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login") + "?next=")
        return
    assert response.status_code == expected, response.content[:400]
    if expected == 403 and method != "json":
        # A refusal says why, and never shows the item to someone it was not given to.
        assert b"annotator" in response.content or b"not open to you" in response.content
        assert slot_a.item.payload["utterance"].encode() not in response.content
    if route == "next" and expected == 302:
        assert response["Location"].startswith("/work/")
    if route == "skip" and expected == 302:  # the next item, or home when none is left
        assert response["Location"] == reverse("home") or response["Location"].startswith("/work/")
    # Nobody but A changed A's claim.
    slot_a.refresh_from_db()
    if route != "skip" or who != "A":
        assert slot_a.worker_id == people["A"].pk


def test_home_lists_only_jobs_open_to_the_annotator(people):
    corpus = make_corpus()
    everyone = make_live_job(corpus, name="Open to all")
    only_a = make_live_job(corpus, name="Only for Anna")
    only_a.annotators.add(people["A"])
    create_job(corpus=corpus, name="Still a draft")

    page_a = people["clients"]["A"].get(reverse("home")).content.decode()
    page_b = people["clients"]["B"].get(reverse("home")).content.decode()
    assert "Open to all" in page_a and "Only for Anna" in page_a
    assert "Open to all" in page_b and "Only for Anna" not in page_b
    assert "Still a draft" not in page_a and "Still a draft" not in page_b
    assert "/organize/" not in page_a

    refused = people["clients"]["B"].post(reverse("job-next", args=[only_a.pk]))
    assert refused.status_code == 403
    assert b"This job is not open to you." in refused.content
    assert people["clients"]["B"].post(reverse("job-next", args=[everyone.pk])).status_code == 302


def test_an_organizer_lands_on_the_dashboard_and_an_organizer_annotator_sees_jobs_and_the_link(people, organizer):
    make_live_job(name="Rewrite batch 1")
    landing = people["clients"]["organizer"].get(reverse("home"))  # after signing in, too
    assert landing.status_code == 302 and landing["Location"] == reverse("organizer:dashboard")
    make_worker_for(organizer)
    page = people["clients"]["organizer"].get(reverse("home")).content.decode()
    assert 'href="/organize/"' in page and "Rewrite batch 1" in page


def test_home_counts_only_the_annotators_own_responses(people):
    job = make_live_job(make_corpus(dialogs=2, user_turns=2), redundancy=2, name="Counted job")
    a, b = people["clients"]["A"], people["clients"]["B"]
    for client in (a, a, b):
        token = claim_by_client(client, job)
        client.post(reverse("work", args=[token]), good_answers(slot_of(token).item))
    row_a = people["clients"]["A"].get(reverse("home")).content.decode()
    # Each save claimed the next item. Items for you: 4 minus 2 done minus 1 held; answers still needed:
    # 8 minus 3 submitted (the 2 held, one by A and one by B, are not answered yet); A's responses: 2.
    figures = re.search(r"Counted job</th>\s*<td[^>]*>(\d+)( <span[^<]*</span>)?</td>\s*<td[^>]*>(\d+)</td>\s*<td[^>]*>(\d+)</td>", row_a)
    assert figures and figures.group(1, 3, 4) == ("1", "5", "2"), row_a
    assert "and the one you hold" in figures.group(2)
    assert "Continue your item" in row_a
    assert "You have saved 2 responses" in row_a


def test_home_leads_with_the_jobs_that_have_work_for_the_annotator(people):
    corpus = make_corpus(dialogs=1, user_turns=1)
    # Launched in this order, the newest first would show them the other way round.
    held = make_live_job(corpus, name="Item in hand")
    waiting = make_live_job(corpus, name="Work waiting")
    done = make_live_job(corpus, name="Done already")
    client = people["clients"]["A"]
    token = claim_by_client(client, done)
    client.post(reverse("work", args=[token]), good_answers(slot_of(token).item))
    claim_by_client(client, held)
    page = client.get(reverse("home")).content.decode()
    order = [page.index(name) for name in ("Item in hand", "Work waiting", "Done already")]
    assert order == sorted(order), page
    assert waiting.state == Job.State.LIVE


def test_the_home_buttons_accessible_name_begins_with_its_visible_text(people):
    """WCAG 2.5.3 Label in Name: a voice-control user says what they see ("Next item"); the name
    assistive technology reads must begin with it, and adds the job it is for."""
    corpus = make_corpus(dialogs=1, user_turns=2)
    make_live_job(corpus, name="Work waiting")
    held = make_live_job(corpus, name="Item in hand")
    client = people["clients"]["A"]
    claim_by_client(client, held)
    page = client.get(reverse("home")).content.decode()
    buttons = dict(re.findall(r'<button type="submit" aria-label="([^"]*)">([^<]*)</button>', page))
    assert {name: text for name, text in buttons.items() if "Work waiting" in name or "Item in hand" in name} == {
        "Next item: Work waiting": "Next item", "Continue your item: Item in hand": "Continue your item"}


# --- claim and submit ----------------------------------------------------------------------------


def test_claim_show_submit_and_get_the_next_item(people):
    corpus = one_turn_corpus(
        "hotels",
        "I need a cheap hotel in the centre for 4 people.",
        ["cheap", "centre", "4 people"],
        before=[("system", "Welcome to the booking line."), ("user", "Hello there."), ("system", "Hi! How can I help?")],
    )
    job = launch_job(create_job(corpus=corpus, name="Hotels", instructions="Keep the values."))
    client = people["clients"]["A"]

    # Item 1: the greeting, which has no slot values.
    token = claim_by_client(client, job)
    page = client.get(reverse("work", args=[token]))
    html = page.content.decode()
    assert page.status_code == 200
    assert slot_of(token).item.position == 0
    assert '<span class="speaker">System</span> <span class="text" lang="en">Welcome to the booking line.</span>' in html
    assert '<span class="text utterance" lang="en">Hello there.</span>' in html
    assert "This turn has no slot values to keep." in html
    # Four labelled fields with their help; the first one takes the focus.
    for name, label in [("paraphrase", "Paraphrase"), ("typos", "Typos"), ("verbose", "Verbose"), ("simplified", "Simplified")]:
        assert f'<label for="id_{name}">{label}</label>' in html
        assert f'<p class="help" id="help_{name}">' in html
        assert f'aria-describedby="help_{name} problems_{name}"' in html
    assert re.search(r'<textarea id="id_paraphrase"[^>]*autofocus', html)
    assert len(re.findall(r"autofocus", html)) == 1
    assert "Item 1 of 2 · you have saved 0 responses in this job" in html
    assert "<p>Keep the values.</p>" in html
    assert "Skip this item" in html

    greeting = {"paraphrase": "Hi there.", "typos": "Helo there.", "verbose": "Hello there, how are you doing today?", "simplified": "Hi."}
    saved = client.post(reverse("work", args=[token]), greeting)
    assert saved.status_code == 302 and saved["Location"].endswith("?saved=1")
    assert Slot.objects.get(pk=slot_of(token).pk).state == Slot.State.SUBMITTED

    # Item 2, claimed automatically: the history so far, and the turn with its values marked.
    next_token = token_in(saved["Location"])
    assert next_token != token
    html = client.get(saved["Location"]).content.decode()
    assert "Saved. Here is your next item." in html
    assert '<span class="speaker">User</span> <span class="text" lang="en">Hello there.</span>' in html
    assert '<span class="speaker">System</span> <span class="text" lang="en">Hi! How can I help?</span>' in html
    assert (
        'I need a <mark class="slot">cheap</mark> hotel in the <mark class="slot">centre</mark> '
        'for <mark class="slot">4 people</mark>.'
    ) in html
    assert re.search(
        r'<ul class="keep"[^>]*><li class="chip">(<span class="chip-slot">[^<]*</span> )?<mark class="slot" lang="en">cheap</mark></li>'
        r'<li class="chip">(<span class="chip-slot">[^<]*</span> )?<mark class="slot" lang="en">centre</mark>',
        html,
    )
    assert "Item 2 of 2 · you have saved 1 response in this job" in html

    answers = {
        "paraphrase": "Please find me a cheap hotel in the centre for 4 people.",
        "typos": "I ned a cheap hotel in teh centre for 4 people.",
        "verbose": "Hello, I would really like to find a cheap hotel somewhere in the centre of town for 4 people, please.",
        "simplified": "cheap hotel, centre, 4 people",
    }
    saved = client.post(reverse("work", args=[next_token]), {**answers, "active_seconds": "42.5"})
    stored = Response.objects.get(worker=people["A"], item=slot_of(next_token).item)
    assert stored.answers == answers and stored.active_seconds == 42.5
    assert Response.objects.filter(worker=people["A"]).count() == 2
    # Nothing is left for A in this job.
    assert saved.status_code == 302 and "/done/" in saved["Location"]
    done = client.get(saved["Location"]).content.decode()
    assert "Saved. Thank you!" in done and "Nothing left for you in “Hotels”" in done


def test_refused_submission_keeps_the_text_and_says_what_to_fix(people):
    job = make_live_job(make_corpus(dialogs=1, user_turns=1))
    client = people["clients"]["A"]
    token = claim_by_client(client, job)
    item = slot_of(token).item
    utterance = item.payload["utterance"]  # "I need a cheap table for 2 people in the centre please."
    typed = {
        "paraphrase": utterance,  # unchanged
        "typos": "I ned a tabel for 2 peeple in the center plz <b>now</b>",  # lost "cheap", "centre"
        "verbose": "cheap centre",  # shorter, not longer
        "simplified": "",  # missing
    }
    refused = client.post(reverse("work", args=[token]), {**typed, "active_seconds": "9.0"})
    html = refused.content.decode()
    assert refused.status_code == 400
    assert not Response.objects.exists()

    _cleaned, problems = check_answers(slot=slot_of(token), answers=typed)
    assert {p.field for p in problems} == {"paraphrase", "typos", "verbose", "simplified"}
    for problem in problems:
        assert escape(problem.message) in html
    assert 'role="alert"' in html and f"fix {len(problems)} problems" in html
    for name, text in typed.items():
        assert f'name="{name}"' in html
        assert f">\n{escape(text)}</textarea>" in html  # what was typed, kept and escaped
    assert "<b>now</b>" not in html
    assert 'value="9.0"' in html  # active time carries over
    # Focus goes to the first field with a problem, which is marked invalid.
    assert re.search(r'<textarea id="id_paraphrase"[^>]*aria-invalid="true" autofocus', html)

    # Fixing the text and submitting again saves it.
    fixed = client.post(reverse("work", args=[token]), good_answers(item))
    assert fixed.status_code == 302 and Response.objects.filter(worker=people["A"]).count() == 1


def test_a_script_submission_is_answered_in_json_and_a_form_post_is_not(people):
    """A page script (Accept: application/json) gets the refusal by field, or where to go next, and
    nothing is saved until it is accepted; the same post from a form still gets the page."""
    job = make_live_job(make_corpus(dialogs=1, user_turns=2))
    client = people["clients"]["A"]
    token = claim_by_client(client, job)
    item = slot_of(token).item
    answers = {**good_answers(item), "simplified": ""}
    url = reverse("work", args=[token])

    refused = client.post(url, answers, headers={"Accept": "application/json"})
    assert refused.status_code == 400 and refused["Content-Type"] == "application/json"
    _cleaned, problems = check_answers(slot=slot_of(token), answers=answers)
    assert refused.json() == {"errors": {"simplified": [p.message for p in problems]}, "non_field": []}
    assert not Response.objects.exists()

    page = client.post(url, answers)  # a form post: the page again, as before
    assert page.status_code == 400 and page["Content-Type"].startswith("text/html")
    assert escape(problems[0].message) in page.content.decode() and not Response.objects.exists()

    saved = client.post(url, good_answers(item), headers={"Accept": "application/json"})
    assert saved.status_code == 200
    next_token = token_in(saved.json()["redirect"])  # the next item's page, as a form post's redirect
    assert slot_of(next_token).item != item and Response.objects.get(worker=people["A"]).slot.item == item
    form_saved = client.post(reverse("work", args=[next_token]), good_answers(slot_of(next_token).item))
    assert form_saved.status_code == 302 and "/done/" in form_saved["Location"]


def test_a_script_submission_without_its_session_is_told_in_json(people):
    """A script that posts after the session ended learns why, so its page can keep what it holds."""
    job = make_live_job(make_corpus(dialogs=1, user_turns=1))
    token = claim_by_client(people["clients"]["A"], job)
    url = reverse("work", args=[token])
    ended = people["clients"]["anonymous"].post(url, {"paraphrase": "x"}, headers={"Accept": "application/json"})
    assert ended.status_code == 401 and "log in again" in ended.json()["error"]
    other = people["clients"]["B"].post(url, {"paraphrase": "x"}, headers={"Accept": "application/json"})
    assert other.status_code == 403 and "another annotator" in other.json()["error"]
    assert not Response.objects.exists()


def test_check_endpoint_returns_the_server_checks_as_json(people):
    job = make_live_job(make_corpus(dialogs=1, user_turns=1))
    client = people["clients"]["A"]
    token = claim_by_client(client, job)
    slot = slot_of(token)
    url = reverse("work-check", args=[token])
    typed = {"paraphrase": slot.item.payload["utterance"], "verbose": "cheap centre"}

    result = client.post(url, data=json.dumps({"answers": typed}), content_type="application/json")
    assert result.status_code == 200
    _cleaned, expected = check_answers(slot=slot, answers=typed)
    assert result.json() == {"ok": False, "problems": [p.as_dict() for p in expected]}
    codes = {(p["field"], p["code"]) for p in result.json()["problems"]}
    assert ("paraphrase", "unchanged") in codes and ("verbose", "not_longer") in codes and ("typos", "required") in codes

    good = client.post(url, data=json.dumps({"answers": good_answers(slot.item)}), content_type="application/json")
    assert good.json() == {"ok": True, "problems": []}
    assert not Response.objects.exists()  # checking saves nothing

    bad = client.post(url, data="not json", content_type="application/json")
    assert bad.status_code == 400 and "answers" in bad.json()["error"]
    assert client.get(url).status_code == 405


def test_checks_work_for_unspaced_scripts(people):
    corpus = one_turn_corpus("cgodial", "我想订一家便宜的酒店，在市中心。", ["便宜", "市中心"])
    job = launch_job(create_job(corpus=corpus, name="中文改写"))
    client = people["clients"]["A"]
    token = claim_by_client(client, job)
    html = client.get(reverse("work", args=[token])).content.decode()
    assert '我想订一家<mark class="slot">便宜</mark>的酒店，在<mark class="slot">市中心</mark>。' in html
    typed = {"paraphrase": "请帮我找便宜的酒店，位置在市中心。", "typos": "我想订一家便宜的酒店，在市中新。",
             "verbose": "你好，我想麻烦你帮我预订一家价格便宜的酒店，最好是在市中心附近。", "simplified": "便宜酒店，市中心。"}
    result = client.post(reverse("work-check", args=[token]), data=json.dumps({"answers": typed}), content_type="application/json")
    problems = result.json()["problems"]
    # The typo version lost a slot value ("市中心" became "市中新"); the rest pass.
    assert [(p["field"], p["code"]) for p in problems] == [("typos", "slot_value_missing")]


def test_an_annotator_never_gets_the_same_item_twice(people):
    job = make_live_job(make_corpus(dialogs=2, user_turns=2), redundancy=3)
    client = people["clients"]["A"]
    seen = []
    response = client.post(reverse("job-next", args=[job.pk]))
    while response.status_code == 302:
        token = token_in(response["Location"])
        item = slot_of(token).item
        seen.append(item.pk)
        response = client.post(reverse("work", args=[token]), good_answers(item))
        if "/done/" in response["Location"]:
            break
    assert sorted(seen) == sorted(job.items.values_list("pk", flat=True))
    assert len(set(seen)) == len(seen)
    done_page = client.get(response["Location"]).content.decode()
    assert "Nothing left for you in" in done_page and "Saved. Thank you!" in done_page
    again = client.post(reverse("job-next", args=[job.pk]))
    assert again.status_code == 200 and b"Nothing left for you in" in again.content


def test_a_full_item_is_not_offered(people):
    job = make_live_job(make_corpus(dialogs=1, user_turns=2), redundancy=1)
    first, second = job.items.order_by("position")
    a, b = people["clients"]["A"], people["clients"]["B"]
    token_a = claim_by_client(a, job)
    assert slot_of(token_a).item == first
    token_b = claim_by_client(b, job)
    assert slot_of(token_b).item == second  # the first item's only slot is held by A
    a.post(reverse("work", args=[token_a]), good_answers(first))
    b.post(reverse("work", args=[token_b]), good_answers(second))
    assert Item.objects.filter(job=job, state=Item.State.COMPLETE).count() == 2
    # B did the second item; the first is full with A's response.
    nothing = b.post(reverse("job-next", args=[job.pk]))
    assert nothing.status_code == 200 and b"Nothing left for you in" in nothing.content
    assert "Nothing left for you" in b.get(reverse("home")).content.decode()


def test_double_submit_is_idempotent(people):
    job = make_live_job(make_corpus(dialogs=1, user_turns=3))
    client = people["clients"]["A"]
    token = claim_by_client(client, job)
    answers = good_answers(slot_of(token).item)
    first = client.post(reverse("work", args=[token]), answers)
    changed = {**answers, "paraphrase": "A second thought that must not replace the first."}
    second = client.post(reverse("work", args=[token]), changed)
    assert first.status_code == 302 and "saved=1" in first["Location"]
    # The repeat is not told "Saved": it is shown what was kept, and what it sent that was not.
    page = second.content.decode()
    assert second.status_code == 200 and "Already saved" in page and "your first text was kept" in page
    saved_part, unsaved_part = page.split("Your text (not saved)")
    assert escape(answers["paraphrase"]) in saved_part and escape(changed["paraphrase"]) in unsaved_part
    # "Continue" leads to the same next item, not another claim. (Compared by the slot its token names:
    # a token carries its signing time, so one made a second later is another string.)
    continue_url = re.search(r'class="button" href="(/work/[^"]+)"', page).group(1)
    assert slot_of(work_token_of(continue_url)).pk == slot_of(work_token_of(first["Location"])).pk
    assert Response.objects.get(worker=people["A"]).answers["paraphrase"] == answers["paraphrase"]
    assert Slot.objects.filter(job=job, worker=people["A"]).count() == 2  # the answered one and the next
    already = client.get(reverse("work", args=[token]))
    assert already.status_code == 200 and b"already answered this item" in already.content


def test_an_expired_claim_offered_again_says_so_and_shows_the_text_back(people):
    job = make_live_job(make_corpus(dialogs=1, user_turns=1), redundancy=2)
    client = people["clients"]["A"]
    old_token = claim_by_client(client, job)
    release_expired_claims(now=timezone.now() + timedelta(hours=1))
    Slot.objects.filter(pk=slot_of(old_token).pk).update(state=Slot.State.CLAIMED, worker=people["B"], expires_at=timezone.now() + timedelta(hours=1))
    # Offered again: the worker now holds the item's other slot under a new link.
    new_token = claim_by_client(client, job)
    held = slot_of(new_token)
    assert held.item_id == slot_of(old_token).item_id and new_token != old_token
    answers = good_answers(held.item)
    page = client.post(reverse("work", args=[old_token]), answers)
    text = page.content.decode()
    assert page.status_code == 409 and "claim on this item expired" in text and "already answered" not in text
    assert escape(answers["paraphrase"]) in text.split("Your text (not saved)")[1]
    assert not Response.objects.filter(worker=people["A"]).exists()
    # The new link saves it.
    assert client.post(reverse("work", args=[new_token]), answers).status_code == 302


def test_an_expired_claim_taken_by_another_says_so_and_shows_the_text_back(people):
    job = make_live_job(make_corpus(dialogs=1, user_turns=1))
    old_token = claim_by_client(people["clients"]["A"], job)
    release_expired_claims(now=timezone.now() + timedelta(hours=1))
    claim_by_client(people["clients"]["B"], job)  # B holds it now, unanswered
    answers = good_answers(slot_of(old_token).item)
    page = people["clients"]["A"].post(reverse("work", args=[old_token]), answers)
    text = page.content.decode()
    assert page.status_code == 409 and "claim on this item expired" in text and "completed" not in text
    assert escape(answers["verbose"]) in text.split("Your text (not saved)")[1]
    assert not Response.objects.exists()


def test_skip_gives_the_item_back(people):
    job = make_live_job(make_corpus(dialogs=1, user_turns=1), name="Skippable")
    client = people["clients"]["A"]
    token = claim_by_client(client, job)
    slot = slot_of(token)
    response = client.post(reverse("work-skip", args=[token]), follow=True)
    slot.refresh_from_db()
    assert slot.state == Slot.State.OPEN and slot.worker is None
    assert "Item skipped" in response.content.decode()
    # With nothing else left, "next item" does not offer the skipped item again.
    again = client.post(reverse("job-next", args=[job.pk]))
    assert not again.get("Location", "").startswith("/work/")


def test_an_item_given_back_says_so_at_once_and_keeps_the_text(client):
    """A Prolific participant who returned the study (the reconciler gives the slot back as a skip
    does) reopened the link and met a live form; only Submit said no, and for the wrong reason."""
    from annotation.services.claims import release_slot

    job = make_live_job(make_corpus(dialogs=1, user_turns=2))
    crowd = Worker.objects.create(provider="prolific", external_id="PIDRETURNED")
    slot = claim_next_slot(job=job, worker=crowd)
    token = make_token(slot)
    release_slot(slot_id=slot.pk, worker=crowd)  # what hits does when Prolific reports the return
    page = client.get(reverse("work", args=[token]))
    assert page.status_code == 409 and b"You gave this item back" in page.content and b'name="paraphrase"' not in page.content
    answers = good_answers(slot.item)
    posted = client.post(reverse("work", args=[token]), answers)
    assert posted.status_code == 409 and b"You gave this item back" in posted.content
    assert escape(answers["paraphrase"]).encode() in posted.content
    assert not Response.objects.exists()


def test_a_crowd_worker_who_skips_is_told_to_return_the_task(client):
    job = make_live_job(make_corpus(dialogs=1, user_turns=2))
    crowd = Worker.objects.create(provider="prolific", external_id="PIDSKIP")
    token = make_token(claim_next_slot(job=job, worker=crowd))
    page = client.post(reverse("work-skip", args=[token]))
    assert page.status_code == 200 and b"return the task there so that your place goes to someone else" in page.content


# --- escaping ------------------------------------------------------------------------------------


def test_script_in_utterance_instructions_and_history_is_escaped(people):
    corpus = one_turn_corpus(
        "evil",
        "Book <script>alert(1)</script> a cheap room",
        ["cheap", "<i>room</i>"],
        before=[("system", "<img src=x onerror=alert(2)>")],
    )
    job = launch_job(
        create_job(corpus=corpus, name="<script>alert(3)</script>", instructions="Line one\n<script>alert(4)</script>")
    )
    client = people["clients"]["A"]
    assert b"<script>alert(3)" not in client.get(reverse("home")).content
    token = claim_by_client(client, job)
    html = client.get(reverse("work", args=[token])).content.decode()
    for raw in ("<script>alert(1)", "<img src=x", "<script>alert(3)", "<script>alert(4)", "<i>room</i>"):
        assert raw not in html
    assert "Book &lt;script&gt;alert(1)&lt;/script&gt; a <mark class=\"slot\">cheap</mark> room" in html
    assert "&lt;img src=x onerror=alert(2)&gt;" in html
    assert "<p>Line one<br>&lt;script&gt;alert(4)&lt;/script&gt;</p>" in html
    assert '<mark class="slot" lang="en">&lt;i&gt;room&lt;/i&gt;</mark>' in html
    # The only scripts on the page are Quorum's own files: no inline script, nothing from elsewhere.
    scripts = re.findall(r"<script[^>]*>", html)
    assert all(re.fullmatch(r'<script src="/static/[a-z_]+\.js" defer>', tag) for tag in scripts), scripts
    assert {'<script src="/static/typing.js" defer>', '<script src="/static/annotate.js" defer>'} <= set(scripts)


# --- tokens --------------------------------------------------------------------------------------


def test_tampered_and_expired_tokens_are_refused(people):
    job = make_live_job(make_corpus(dialogs=1, user_turns=2))
    client = people["clients"]["A"]
    token = claim_by_client(client, job)
    other = Slot.objects.filter(job=job, state=Slot.State.OPEN).first()

    payload, timestamp, signature = token.split(":")
    forged_payload = signing.b64_encode(json.dumps([other.pk, people["A"].pk]).encode()).decode()
    wrong_salt = signing.dumps([other.pk, people["A"].pk], salt="another.purpose")
    for bad in (f"{forged_payload}:{timestamp}:{signature}", token[:-2], wrong_salt, "nonsense"):
        response = client.get(reverse("work", args=[bad]))
        assert response.status_code == 403
        assert b"This work link is not valid" in response.content
    other.refresh_from_db()
    assert other.worker is None

    with mock.patch("time.time", return_value=time.time() - 3 * 24 * 3600):
        stale = make_token(slot_of(token))
    response = client.get(reverse("work", args=[stale]))
    assert response.status_code == 403 and b"This work link has expired" in response.content


def test_a_crowd_worker_needs_only_the_token(client):
    """Crowd workers have no account; inside a provider's iframe the token is their identity."""
    job = make_live_job(make_corpus(dialogs=1, user_turns=2))
    crowd = Worker.objects.create(provider="prolific", external_id="PID123")
    slot = claim_next_slot(job=job, worker=crowd)
    token = make_token(slot)
    assert client.get(reverse("work", args=[token])).status_code == 200
    saved = client.post(reverse("work", args=[token]), good_answers(slot.item))
    assert saved.status_code == 302 and Response.objects.filter(worker=crowd).count() == 1
    assert client.get(saved["Location"]).status_code == 200  # the next item, again by token alone


def test_an_in_house_token_is_useless_without_its_owners_session(people):
    """A copied in-house link does not let anyone else in, logged in or not."""
    job = make_live_job(make_corpus(dialogs=1, user_turns=1))
    token = claim_by_client(people["clients"]["A"], job)
    user = User.objects.create_user("carl", password="carl-pass-1")  # logged in, but no annotator
    other = Client()
    other.force_login(user)
    assert other.post(reverse("work", args=[token]), good_answers(slot_of(token).item)).status_code == 403
    assert people["clients"]["anonymous"].post(reverse("work", args=[token]), good_answers(slot_of(token).item)).status_code == 302
    assert not Response.objects.exists()


def test_a_claim_held_when_the_job_is_finished_is_honoured_until_it_expires(people):
    """A worker half way through an item when the builder pressed Finish got "Job closed" on Submit
    and lost the text: the claim is now theirs until it expires, and the page says so."""
    from annotation.services.jobs import finish_job

    job = make_live_job(make_corpus(dialogs=1, user_turns=2))
    client = people["clients"]["A"]
    token = claim_by_client(client, job)
    finish_job(job)
    page = client.get(reverse("work", args=[token])).content.decode()
    assert 'id="closing-notice"' in page and "it is still yours until" in page
    saved = client.post(reverse("work", args=[token]), good_answers(slot_of(token).item))
    assert saved.status_code == 302 and Response.objects.filter(item__job=job).count() == 1
    done = client.get(saved["Location"])
    assert done.status_code == 200 and b"closing-notice" not in done.content  # no next item from a finished job
    assert Slot.objects.filter(job=job, state=Slot.State.CLAIMED).count() == 0


def test_a_finished_job_no_longer_accepts_work_once_the_claim_expired_and_shows_the_text_back(people):
    job = make_live_job(make_corpus(dialogs=1, user_turns=1))
    client = people["clients"]["A"]
    token = claim_by_client(client, job)
    Job.objects.filter(pk=job.pk).update(state=Job.State.FINISHED)
    Slot.objects.filter(job=job).update(expires_at=timezone.now() - timedelta(seconds=1))
    answers = good_answers(slot_of(token).item)
    assert client.get(reverse("work", args=[token])).status_code == 403
    response = client.post(reverse("work", args=[token]), answers)
    assert response.status_code == 403 and b"no longer collecting responses" in response.content
    assert escape(answers["paraphrase"]).encode() in response.content  # the text typed is not lost
    assert not Response.objects.exists()


# --- highlighting (pure) ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,values,expected",
    [
        ("Table for 3 people at 13:00", ["3 people"], [("Table for ", False), ("3 people", True), (" at 13:00", False)]),
        ("13 people", ["3"], [("13 people", False)]),
        ("A CHEAP place in the Centre", ["cheap", "centre"], [("A ", False), ("CHEAP", True), (" place in the ", False), ("Centre", True)]),
        ("for 4 people, 4 nights", ["4", "4 people"], [("for ", False), ("4 people", True), (", ", False), ("4", True), (" nights", False)]),
        ("我想去市中心", ["市中心"], [("我想去", False), ("市中心", True)]),
        ("no values", [], [("no values", False)]),
    ],
)
def test_slot_segments(text, values, expected):
    assert slot_segments(text, values) == expected
    assert "".join(t for t, _ in slot_segments(text, values)) == text


def test_a_crowd_worker_is_not_told_item_1_of_n(client):
    """A Prolific participant read "Item 1 of 4" and expected four items; their place is one."""
    job = make_live_job(make_corpus(dialogs=1, user_turns=4))
    crowd = Worker.objects.create(provider="prolific", external_id="PIDCOUNT")
    page = client.get(reverse("work", args=[make_token(claim_next_slot(job=job, worker=crowd))])).content.decode()
    assert "Item 1 of" not in page and "One item of the 4 this job shares among its workers" in page


def test_the_home_page_numbers_a_saved_response_as_the_work_page_did(people):
    """An annotator answered "Item 1 of 3" and their home page listed it as item 2: it printed the
    item's place in the job, which another worker had reached first."""
    job = make_live_job(corpus=make_corpus(dialogs=3, user_turns=1))
    first = claim_next_slot(job=job, worker=people["B"])  # B holds the job's item 1
    assert first.item.position == 0
    client = people["clients"]["A"]
    token = claim_by_client(client, job)
    assert slot_of(token).item.position == 1
    assert "Item 1 of 3 ·" in client.get(reverse("work", args=[token])).content.decode()
    saved = client.post(reverse("work", args=[token]), good_answers(slot_of(token).item))
    assert saved.status_code == 302
    second = token_in(saved["Location"])
    assert "Item 2 of 3 ·" in client.get(saved["Location"]).content.decode()
    assert client.post(reverse("work", args=[second]), good_answers(slot_of(second).item)).status_code == 302

    home = client.get(reverse("home")).content.decode()
    rows = re.findall(r"<tr><td>rewrite job</td><td>(\d+)</td>", home)
    assert rows == ["2", "1"]  # newest first, numbered as the work page showed them
    assert '<th scope="col">Your item</th>' in home
