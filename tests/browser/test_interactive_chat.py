"""A whole interactive dialog in a real browser against Quorum's reference system on a local port:
the worker reads the goal, chats (the server relays; no system name on the page), ends with
Success and rates the system; the stored response holds the transcript with the offered entity."""
import json
import re

import pytest
from playwright.sync_api import expect

from annotation.models import Response
from evaluation.interactive.services.chats import create_chat_job
from evaluation.interactive.services.systems import import_goals, register_system
from evaluation.interactive.systems.reference import RESTAURANTS, ReferenceSystem
from tests.browser.saving import expect_saved
from tests.evaluation.systems import running

from .test_annotator_flow import claim_by_keyboard, log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SECRET = "a-secret-of-twenty-chars"


def test_a_whole_chat_ends_in_success_and_ratings(page, dialogs, make_annotator):
    _user, worker = make_annotator("cho")
    goals = import_goals(
        name="goals", goals_file=b'{"id": "g1", "goal": {"restaurant": {"info": {"food": "chinese", "area": "centre"}}}}\n',
        databases={"restaurant": json.dumps(RESTAURANTS).encode()},
    )
    with running(ReferenceSystem(SECRET)) as url:
        system = register_system(name="team-secret-sys", url=url, secret=SECRET)
        create_chat_job(name="Chat with a system", systems=[system], goal_set=goals)
        log_in(page, "cho", "cho-pass-1")
        claim_by_keyboard(page, "Chat with a system")

        expect(page.locator("#goal")).to_contain_text("restaurant")
        expect(page.locator("#chat-log li.system")).to_have_count(1)  # the opening
        page.locator("#chat-input").fill("I want chinese food in the centre")
        page.keyboard.press("Enter")
        expect(page.locator("#chat-log li.system").nth(1)).to_contain_text("Golden Wok")
        page.locator("#chat-input").fill("Please book it for 2 people")
        page.locator("#chat-send").click()
        expect(page.locator("#chat-log li.system").nth(2)).to_contain_text("reference number")
        assert "team-secret" not in page.content()

        page.get_by_role("radio", name=re.compile("^Success")).check()
        expect(page.locator("#chat-input")).to_be_enabled()  # a verdict ends nothing until it is submitted
        page.locator("#id_understanding").get_by_role("radio", name="Understands very well").check()
        page.locator("#id_understanding_reason").fill("It got the food and area.")
        page.locator("#id_appropriateness").get_by_role("radio", name="Very appropriate").check()
        page.locator("#id_appropriateness_reason").fill("Short and to the point.")
        page.locator("#submit-button").click()
        expect_saved(page)

    response = Response.objects.get(worker=worker)
    assert response.answers["outcome"] == "success" and response.answers["understanding"] == 5 and response.answers["appropriateness"] == 4
    roles = [t["role"] for t in response.answers["transcript"]]
    assert roles == ["system", "user", "system", "user", "system"]
    assert response.answers["transcript"][2]["offered"]["name"] == "Golden Wok"
    assert dialogs == []


def test_a_system_that_stops_answering_is_paused_and_the_worker_ends_without_ratings(page, make_annotator, settings):
    from evaluation.models import DialogSystem
    from tests.evaluation.systems import Broken

    settings.QUORUM_SYSTEM_PAUSE_CONSECUTIVE_FAILURES = 2
    _user, worker = make_annotator("cho")
    goals = import_goals(name="goals", goals_file=b'{"id": "g1", "goal": {"restaurant": {"info": {"food": "chinese"}}}}\n')
    with running(Broken("error", secret=SECRET)) as url:
        system = register_system(name="team-broken", url=url, secret=SECRET)
        create_chat_job(name="Chat with a system", systems=[system], goal_set=goals, dialogs_per_goal=2)
        log_in(page, "cho", "cho-pass-1")
        claim_by_keyboard(page, "Chat with a system")
        expect(page.locator("#chat-unavailable")).to_be_hidden()
        for n, text in enumerate(("chinese food please", "hello?"), start=1):
            page.locator("#chat-input").fill(text)
            page.locator("#chat-send").click()
            expect(page.locator("#chat-log li.system.failed")).to_have_count(n)
        expect(page.locator("#chat-log li.system.failed").last).to_contain_text("did not answer")
        expect(page.locator("#chat-unavailable")).to_be_visible()  # the worker is told they may end now
        assert DialogSystem.objects.get(pk=system.pk).paused_at is not None
        page.get_by_role("radio", name=re.compile("^Fail")).check()
        page.locator("#submit-button").click()  # no ratings, no reason: the system stopped answering
        expect_saved(page)

    response = Response.objects.get(worker=worker)
    assert response.answers["outcome"] == "fail" and response.answers["system_unavailable"] is True
    assert response.status != Response.Status.REJECTED


def test_a_chat_judged_early_is_not_a_trap(page, dialogs, make_annotator):
    """Success chosen before any message: the conversation stays open, the page says how many
    messages remain, a submit is refused with what to do, and the worker chats and finishes."""
    _user, worker = make_annotator("cho")
    goals = import_goals(
        name="goals", goals_file=b'{"id": "g1", "goal": {"restaurant": {"info": {"food": "chinese", "area": "centre"}}}}\n',
        databases={"restaurant": json.dumps(RESTAURANTS).encode()},
    )
    with running(ReferenceSystem(SECRET)) as url:
        system = register_system(name="team-early", url=url, secret=SECRET)
        create_chat_job(name="Chat with a system", systems=[system], goal_set=goals)
        log_in(page, "cho", "cho-pass-1")
        claim_by_keyboard(page, "Chat with a system")
        expect(page.locator("#chat-log li.system")).to_have_count(1)
        expect(page.locator("#chat-progress")).to_contain_text("Send 1 more message before you judge")

        page.get_by_role("radio", name=re.compile("^Success")).check()  # the stray early click
        expect(page.locator("#chat-input")).to_be_enabled()
        page.locator("#id_understanding").get_by_role("radio", name="Understands very well").check()
        page.locator("#id_understanding_reason").fill("Fine.")
        page.locator("#id_appropriateness").get_by_role("radio", name="Very appropriate").check()
        page.locator("#id_appropriateness_reason").fill("Fine.")
        page.locator("#submit-button").click()
        expect(page.locator("body")).to_contain_text("send at least 1 message (0 sent so far)")
        expect(page.locator("#skip-button")).to_be_visible()
        expect(page.locator("#work-form[data-ready=true]")).to_be_visible()

        expect(page.locator("#chat-input")).to_be_enabled()  # still open after the refusal
        expect(page.locator("#chat-log li.system")).to_have_count(1)  # the conversation is back
        expect(page.locator("#chat-send")).to_be_enabled()
        page.locator("#chat-input").fill("I want chinese food in the centre")
        page.keyboard.press("Enter")
        expect(page.locator("#chat-log li.system").nth(1)).to_contain_text("Golden Wok")
        expect(page.locator("#chat-progress")).to_contain_text("You can judge the system now")
        page.get_by_role("radio", name=re.compile("^Success")).check()
        page.locator("#id_understanding").get_by_role("radio", name="Understands very well").check()
        page.locator("#id_appropriateness").get_by_role("radio", name="Very appropriate").check()
        if not page.locator("#id_understanding_reason").input_value().strip():
            page.locator("#id_understanding_reason").fill("Fine.")
        if not page.locator("#id_appropriateness_reason").input_value().strip():
            page.locator("#id_appropriateness_reason").fill("Fine.")
        page.locator("#submit-button").click()
        expect_saved(page)

    response = Response.objects.get(worker=worker)
    assert response.answers["outcome"] == "success"
    assert [t["role"] for t in response.answers["transcript"]] == ["system", "user", "system"]
    assert dialogs == []
