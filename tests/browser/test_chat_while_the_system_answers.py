"""While the system is still answering (a slow system may take up to the turn deadline), the worker
sees that their message went out and that a reply is coming, and the next message they type
meanwhile is kept: the reply used to arrive and wipe the box, and until then the page showed nothing
(the message still in the box, Enter doing nothing)."""
import json
import threading

import pytest
from playwright.sync_api import expect

from evaluation.interactive.services.chats import create_chat_job
from evaluation.interactive.services.systems import import_goals, register_system
from evaluation.interactive.systems.reference import RESTAURANTS, ReferenceSystem
from tests.evaluation.systems import running

from .test_annotator_flow import claim_by_keyboard, log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SECRET = "a-secret-of-twenty-chars"


class Gated(ReferenceSystem):
    """The reference system whose turns wait until the test opens the gate (no sleeps, no timing)."""

    def __init__(self, secret):
        super().__init__(secret)
        self.gate = threading.Event()
        self.gate.set()  # open while the contract check runs at registration

    def handle(self, environ):
        if "/turns" in environ.get("PATH_INFO", ""):
            self.gate.wait(60)
        return super().handle(environ)


def test_the_worker_sees_the_reply_coming_and_keeps_what_they_type_meanwhile(page, make_annotator, settings):
    settings.QUORUM_SYSTEM_TURN_TIMEOUT_SECONDS = 60  # the gate, not the deadline, says when the reply comes
    make_annotator("cho")
    goals = import_goals(
        name="goals", goals_file=b'{"id": "g1", "goal": {"restaurant": {"info": {"food": "chinese", "area": "centre"}}}}\n',
        databases={"restaurant": json.dumps(RESTAURANTS).encode()},
    )
    system = Gated(SECRET)
    with running(system) as url:
        registered = register_system(name="team-gated", url=url, secret=SECRET)
        create_chat_job(name="Chat with a system", systems=[registered], goal_set=goals)
        log_in(page, "cho", "cho-pass-1")
        claim_by_keyboard(page, "Chat with a system")
        expect(page.locator("#chat-log li.system")).to_have_count(1)  # the opening
        expect(page.locator("#chat-waiting")).to_be_hidden()

        system.gate.clear()
        try:
            page.locator("#chat-input").fill("I want chinese food in the centre")
            page.keyboard.press("Enter")
            # The message is in the conversation at once, marked as on its way, and the box is free.
            expect(page.locator("#chat-log li.user")).to_have_text("You I want chinese food in the centre")
            expect(page.locator("#chat-waiting")).to_be_visible()
            expect(page.locator("#chat-waiting")).to_contain_text("waiting for the system's reply")
            expect(page.locator("#chat-input")).to_have_value("")
            page.locator("#chat-input").type("Please book it for 2")
        finally:
            system.gate.set()

        expect(page.locator("#chat-log li.system")).to_have_count(2)
        expect(page.locator("#chat-log li.system").nth(1)).to_contain_text("Golden Wok")
        expect(page.locator("#chat-waiting")).to_be_hidden()
        expect(page.locator("#chat-input")).to_have_value("Please book it for 2")  # not wiped by the reply
        page.keyboard.press("Enter")
        expect(page.locator("#chat-log li.system")).to_have_count(3)
        expect(page.locator("#chat-log li.system").nth(2)).to_contain_text("reference number")
        expect(page.locator("#chat-log li.user")).to_have_count(2)


def test_a_message_the_server_refuses_comes_back_to_the_box(page, make_annotator):
    """A refused send (here: the conversation's page is gone from the server's point of view, 409)
    takes the pending message out of the conversation and puts its text back, with the reason."""
    make_annotator("cho")
    goals = import_goals(name="goals", goals_file=b'{"id": "g1", "goal": {"restaurant": {"info": {"food": "chinese"}}}}\n')
    with running(ReferenceSystem(SECRET)) as url:
        registered = register_system(name="team-refuses", url=url, secret=SECRET)
        create_chat_job(name="Chat with a system", systems=[registered], goal_set=goals)
        log_in(page, "cho", "cho-pass-1")
        claim_by_keyboard(page, "Chat with a system")
        expect(page.locator("#chat-log li.system")).to_have_count(1)
        page.route("**/chat/", lambda route: route.fulfill(
            status=409, content_type="application/json", body=json.dumps({"error": "The system has not answered your last message yet."}))
            if route.request.post_data and '"say"' in route.request.post_data else route.continue_())
        page.locator("#chat-input").fill("chinese food please")
        page.keyboard.press("Enter")
        expect(page.locator("#chat-error")).to_contain_text("has not answered your last message yet")
        expect(page.locator("#chat-log li.user")).to_have_count(0)
        expect(page.locator("#chat-input")).to_have_value("chinese food please")
        expect(page.locator("#chat-waiting")).to_be_hidden()
