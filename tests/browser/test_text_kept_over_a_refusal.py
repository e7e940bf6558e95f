"""What a worker wrote survives a refused submission, also where it is not one of the answers: a chat
message typed but not sent yet is not posted with the form, so the refused page, rebuilt from what
was posted, came back with an empty message box (static/drafts.js now keeps it for that page).
And a refused judgement of a chat no longer ends its conversation: only a saved one does."""
import re
import time

import pytest
from playwright.sync_api import expect

from annotation.models import Response

from .test_annotator_flow import claim_by_keyboard, log_in, wait_until_ready

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SECRET = "a-secret-of-twenty-chars"
UNSENT = "And could you book it for two people tonight?"


@pytest.fixture
def chat_item(page, make_annotator):
    """Chen's work page on a chat with Quorum's reference system, the system's opening shown."""
    from evaluation.interactive.services.chats import create_chat_job
    from evaluation.interactive.services.systems import import_goals, register_system
    from evaluation.interactive.systems.reference import ReferenceSystem
    from tests.evaluation.systems import running

    make_annotator("chen")
    with running(ReferenceSystem(SECRET)) as url:
        goals = import_goals(name="goals", goals_file=b'{"id": "g1", "goal": {"restaurant": {"info": {"food": "chinese"}}}}\n')
        create_chat_job(name="Chat", systems=[register_system(name="sys", url=url, secret=SECRET)], goal_set=goals)
        log_in(page, "chen", "chen-pass-1")
        claim_by_keyboard(page, "Chat")
        expect(page.locator("#chat-log li.system")).to_have_count(1)
        yield page


def test_a_chat_message_not_sent_yet_is_still_there_after_a_refused_judgement(chat_item, dialogs):
    page = chat_item
    page.locator("#chat-input").fill("I want chinese food")
    page.keyboard.press("Enter")
    expect(page.locator("#chat-log li.user")).to_have_count(1)
    expect(page.locator("#chat-input")).to_have_value("")
    page.locator("#chat-input").fill(UNSENT)

    page.keyboard.press("Control+Enter")  # no verdict yet: refused, with what to fix
    expect(page.locator("#problem-summary")).to_contain_text("Success or Fail")
    wait_until_ready(page)
    expect(page.locator("#chat-input")).to_have_value(UNSENT)
    expect(page.locator("#chat-log li.user")).to_have_count(1)  # the conversation is the server's, as before

    page.reload()  # and it stays with the refused page's answers
    wait_until_ready(page)
    expect(page.locator("#chat-input")).to_have_value(UNSENT)
    assert not Response.objects.exists()
    assert dialogs == []


def _ended_reason(timeout_s=10.0):
    """The chat's recorded end, waited for: the page sends it without waiting for an answer."""
    from evaluation.models import ChatSession

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        reason = ChatSession.objects.values_list("ended_reason", flat=True).get()
        if reason:
            return reason
        time.sleep(0.05)  # polling the database for a state, not waiting for time to pass
    return ""


def test_a_refused_judgement_leaves_the_conversation_open_and_a_saved_one_ends_it(chat_item, dialogs):
    page = chat_item
    page.locator("#chat-input").fill("I want chinese food")
    page.keyboard.press("Enter")
    expect(page.locator("#chat-log li.user")).to_have_count(1)
    page.get_by_role("radio", name=re.compile("^Success")).check()
    page.locator("#submit-button").click()  # no ratings yet: refused
    expect(page.locator("#problem-summary")).to_contain_text("Language understanding")
    wait_until_ready(page)
    expect(page.locator("#chat-log li.user")).to_have_count(1)
    expect(page.locator("#chat-input")).to_be_enabled()  # "or keep chatting", as the page says
    expect(page.locator("#chat-progress")).to_contain_text("keep chatting")
    assert _ended_reason(timeout_s=0.5) == ""

    page.locator("#chat-input").fill("In the centre, please")
    page.keyboard.press("Enter")
    expect(page.locator("#chat-log li.user")).to_have_count(2)
    page.get_by_role("radio", name=re.compile("^Fail")).check()
    for question in ("understanding", "appropriateness"):
        page.locator(f"#id_{question}").get_by_role("radio").first.check()
        page.locator(f"#id_{question}_reason").fill("It asked again.")
    page.locator("#id_outcome_reason").fill("Nothing was booked.")
    page.locator("#submit-button").click()
    expect(page.get_by_role("heading", name=re.compile("Nothing left for you"))).to_be_visible()
    assert Response.objects.get().answers["outcome"] == "fail"
    assert _ended_reason() == "fail"  # the saved verdict, not the refused one
    assert dialogs == []
