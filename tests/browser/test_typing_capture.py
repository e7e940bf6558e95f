"""Typing-process capture in a real browser (static/typing.js): every free-text field records its
log, the log goes with the answer (no request of its own), survives a refused submission, and is
stored with the response; the notice says what is recorded. The behaviour profiles and their flags
are measured by `make bench` (perf/bench_typing.py), not here."""
import json

import pytest
from playwright.sync_api import expect

from annotation.models import Response
from annotation.text import typing_log

from .saving import expect_saved
from .test_annotator_flow import HOTEL, claim_by_keyboard, log_in, make_job, wait_until_ready

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_each_text_field_keeps_a_timing_log_sent_with_the_answer(page, dialogs, make_annotator):
    _user, worker = make_annotator("tia")
    make_job("Hotel rewrites", [
        ("user", HOTEL, ["cheap", "centre", "4 people"]),
        ("system", "Which day?", []),
        ("user", "Monday, for 4 people.", ["Monday", "4 people"]),
    ])
    log_in(page, "tia", "tia-pass-1")
    claim_by_keyboard(page, "Hotel rewrites")
    expect(page.locator("#telemetry-notice")).to_contain_text("never which keys")
    requests = []
    page.on("request", lambda r: requests.append((r.method, r.url)))

    typed = "Please find me a cheap hotel in the centre for 4 people."
    expect(page.locator("#id_paraphrase")).to_be_focused()
    page.keyboard.type(typed, delay=20)
    page.keyboard.press("Backspace")
    page.keyboard.type(".")
    page.keyboard.press("Tab")
    page.keyboard.type("I ned a cheap hotel in teh centre for 4 people.")
    page.locator("#id_verbose").evaluate("el => { el.value = 'Hello there, I would really like a cheap hotel in the centre for 4 people.'; }")
    page.locator("#id_simplified").focus()
    page.keyboard.type("cheap")  # refused: the logs must survive it
    page.keyboard.press("Control+Enter")
    expect(page.get_by_role("alert")).to_contain_text("Not saved")
    wait_until_ready(page)
    assert not Response.objects.exists()
    page.locator("#id_simplified").focus()
    page.keyboard.press("End")
    page.keyboard.type(" hotel, centre, 4 people")
    page.keyboard.press("Control+Enter")
    expect(page.locator("#saved-notice")).to_be_visible()

    response = Response.objects.get(worker=worker)
    logs = response.typing
    assert set(logs) == {"paraphrase", "typos", "verbose", "simplified"}
    for record in logs.values():
        typing_log.check_record(record)
        assert typing_log.encoded_size(record) <= 2048
    paraphrase = typing_log.parse_events(logs["paraphrase"]["e"])
    assert sum(e.size for e in paraphrase if e.letter == "k") == len(typed) + 1
    assert [e.letter for e in paraphrase].count("d") == 1
    assert logs["verbose"]["c"].get("s") == 1  # set by script, caught at submit
    assert logs["simplified"]["c"]["k"] == len("cheap") + len(" hotel, centre, 4 people")
    posts = [u for m, u in requests if m == "POST" and "/check/" not in u]
    assert len(posts) == 2  # the refused submit and the saved one: capture sends nothing of its own
    assert "key" not in json.dumps(logs)  # timing and sizes only


def test_messages_typed_to_a_system_are_recorded_with_the_verdict(page, dialogs, make_annotator):
    """The chat box is not an answer field; its record (`chat_messages`) goes with the verdict."""
    import re

    from evaluation.interactive.services.chats import create_chat_job
    from evaluation.interactive.services.systems import import_goals, register_system
    from evaluation.interactive.systems.reference import RESTAURANTS, ReferenceSystem
    from tests.evaluation.systems import running

    secret = "a-secret-of-twenty-chars"
    _user, worker = make_annotator("chi")
    goals = import_goals(
        name="goals", goals_file=b'{"id": "g1", "goal": {"restaurant": {"info": {"food": "chinese", "area": "centre"}}}}\n',
        databases={"restaurant": json.dumps(RESTAURANTS).encode()},
    )
    with running(ReferenceSystem(secret)) as url:
        system = register_system(name="sys", url=url, secret=secret)
        create_chat_job(name="Chat with a system", systems=[system], goal_set=goals)
        log_in(page, "chi", "chi-pass-1")
        claim_by_keyboard(page, "Chat with a system")
        expect(page.locator("#chat-log li.system")).to_have_count(1)
        page.locator("#chat-input").click()
        page.keyboard.type("I want chinese food in the centre", delay=15)
        page.keyboard.press("Enter")
        expect(page.locator("#chat-log li.system").nth(1)).to_contain_text("Golden Wok")
        page.locator("#chat-input").click()
        page.keyboard.type("Book it for 2 people", delay=15)
        page.keyboard.press("Enter")
        expect(page.locator("#chat-log li.system").nth(2)).to_contain_text("reference number")
        page.get_by_role("radio", name=re.compile("^Success")).check()
        page.locator("#id_understanding").get_by_role("radio", name="Understands very well").check()
        page.locator("#id_understanding_reason").fill("It got the food and area.")
        page.locator("#id_appropriateness").get_by_role("radio", name="Very appropriate").check()
        page.locator("#id_appropriateness_reason").fill("Short and to the point.")
        page.locator("#submit-button").click()
        expect_saved(page)

    logs = Response.objects.get(worker=worker).typing
    record = typing_log.check_record(logs["chat_messages"])
    keyed = sum(e.size for e in typing_log.parse_events(record["e"]) if e.letter == "k")
    assert keyed >= len("I want chinese food in the centre") + len("Book it for 2 people")
    assert "understanding_reason" in logs  # the reasons, typed by fill(): inserted without keys
