"""A chat message on its way when the page is reloaded (static/chat.js): the next page's
conversation, the server's, decides. One the server got is not offered again in the box (sent twice,
it would put a repeated turn in the dialog being judged); one that never reached it comes back in
the box with a sentence saying so, instead of being lost."""
import json
import time

import pytest
from playwright.sync_api import expect

from evaluation.models import ChatTurn

from .test_annotator_flow import claim_by_keyboard, log_in, wait_until_ready

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

MESSAGE = "I want chinese food"


def _chat(page, make_annotator):
    from evaluation.interactive.services.chats import create_chat_job
    from evaluation.interactive.services.systems import import_goals, register_system
    from evaluation.interactive.systems.reference import ReferenceSystem
    from tests.evaluation.systems import running

    secret = "a-secret-of-twenty-chars"
    make_annotator("chen")
    goals = import_goals(name="goals", goals_file=b'{"id": "g1", "goal": {"restaurant": {"info": {"food": "chinese"}}}}\n')
    system = running(ReferenceSystem(secret))
    url = system.__enter__()
    create_chat_job(name="Chat with a system", systems=[register_system(name="sys", url=url, secret=secret)], goal_set=goals)
    log_in(page, "chen", "chen-pass-1")
    claim_by_keyboard(page, "Chat with a system")
    expect(page.locator("#chat-log li.system")).to_have_count(1)
    return system


def _send_and_reload_before_the_answer(page, *, reaches_the_server: bool):
    """Send MESSAGE, hold the server's answer back from the page (or the request itself from the
    server), and reload while it is on its way."""
    held = []

    def hold(route):
        body = route.request.post_data or ""
        if route.request.method == "POST" and json.loads(body or "{}").get("action") == "say":
            if reaches_the_server:
                route.fetch()  # the server takes the turn and answers; the page never sees it
            held.append(route)
        else:
            route.continue_()

    page.route("**/chat/", hold)
    page.locator("#chat-input").fill(MESSAGE)
    page.locator("#chat-send").click()
    deadline = time.monotonic() + 10
    while not held and time.monotonic() < deadline:
        page.wait_for_timeout(50)
    assert held, "the message was not sent"
    expect(page.locator("#chat-input")).to_have_value("")  # it left the box for the conversation
    page.reload()  # the held call is cut off with the page (the route stays: the next page's calls pass)
    wait_until_ready(page)


def test_a_message_the_server_got_is_not_offered_again_after_a_reload(page, dialogs, make_annotator):
    system = _chat(page, make_annotator)
    try:
        _send_and_reload_before_the_answer(page, reaches_the_server=True)
        expect(page.locator("#chat-log li.user")).to_have_count(1)  # the server's conversation has it
        expect(page.locator("#chat-log li.user")).to_contain_text(MESSAGE)
        page.wait_for_timeout(300)  # the conversation is drawn; nothing more comes back
        expect(page.locator("#chat-input")).to_have_value("")
        expect(page.locator("#chat-error")).to_have_text("")
    finally:
        system.__exit__(None, None, None)
    assert ChatTurn.objects.filter(role="user").count() == 1 and dialogs == []


def test_a_message_that_never_reached_the_server_comes_back_in_the_box(page, dialogs, make_annotator):
    system = _chat(page, make_annotator)
    try:
        _send_and_reload_before_the_answer(page, reaches_the_server=False)
        expect(page.locator("#chat-input")).to_have_value(MESSAGE)
        expect(page.locator("#chat-error")).to_contain_text("did not reach the system")
        expect(page.locator("#chat-log li.user")).to_have_count(0)
    finally:
        system.__exit__(None, None, None)
    assert not ChatTurn.objects.filter(role="user").exists() and dialogs == []
