"""What a worker has written survives a reload and a trip away from the item (static/drafts.js),
with the page's own records of how it was written; and a page that opens on a choice takes its
keys there, not in the first text box below it (static/annotate.js)."""
import pytest
from playwright.sync_api import expect

from annotation.models import Response
from annotation.services.claims import claim_next_slot, submit
from annotation.services.voting import enable_voting
from annotation.text import typing_log
from tests.browser.saving import expect_saved
from tests.factories import good_answers, make_corpus, make_live_job

from .test_annotator_flow import HOTEL, claim_by_keyboard, log_in, make_job, wait_until_ready

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PARAPHRASE = "Please find me a cheap hotel in the centre for 4 people."


def test_text_written_comes_back_after_a_reload_and_after_leaving_the_item(page, dialogs, make_annotator):
    _user, worker = make_annotator("dora")
    make_job("Hotel rewrites", [("user", HOTEL, ["cheap", "centre", "4 people"])])
    log_in(page, "dora", "dora-pass-1")
    claim_by_keyboard(page, "Hotel rewrites")
    expect(page.locator("#id_paraphrase")).to_be_focused()
    page.keyboard.type(PARAPHRASE, delay=15)
    page.keyboard.press("Tab")
    page.keyboard.type("I ned a cheap hotel in teh centre for 4 people.", delay=15)

    page.reload()
    wait_until_ready(page)
    expect(page.locator("#draft-notice")).to_contain_text("not submitted yet")
    expect(page.locator("#id_paraphrase")).to_have_value(PARAPHRASE)

    # Away to the home page, and back with "Continue your item": still there.
    page.goto("/")
    page.get_by_role("button", name="Continue your item: Hotel rewrites").click()
    wait_until_ready(page)
    expect(page.locator("#id_typos")).to_have_value("I ned a cheap hotel in teh centre for 4 people.")
    page.locator("#id_verbose").fill("Hello there, I would really like to find a cheap hotel in the centre for 4 people, please.")
    page.locator("#id_simplified").fill("Cheap hotel, centre, 4 people.")
    page.keyboard.press("Control+Enter")
    expect_saved(page)

    response = Response.objects.get(worker=worker)
    assert response.answers["paraphrase"] == PARAPHRASE
    # The keys typed before the reload are counted and logged as typed, not as text from nowhere.
    assert response.telemetry["paraphrase"]["typed_chars"] == len(PARAPHRASE)
    events = typing_log.parse_events(response.typing["paraphrase"]["e"])
    assert sum(e.size for e in events if e.letter == "k") == len(PARAPHRASE)
    assert not [e for e in events if e.letter in "sx"]  # no change the page could not account for
    # The next item's page starts empty: the draft went with the submission.
    page.reload()
    expect(page.locator("#draft-notice")).to_have_count(0)


def test_a_vote_page_takes_its_keys_on_the_choice_it_opens_on(page, dialogs, make_annotator):
    _user, writer = make_annotator("wil")
    make_annotator("vera")
    job = make_live_job(make_corpus(dialogs=1, user_turns=1), name="Hotel rewrites")
    enable_voting(job, votes_per_response=1, against_threshold=1)
    slot = claim_next_slot(job=job, worker=writer)
    submit(slot_id=slot.pk, worker=writer, answers=good_answers(slot.item))

    log_in(page, "vera", "vera-pass-1")
    claim_by_keyboard(page, "Hotel rewrites · votes")
    wait_until_ready(page)
    # Straight after the page opens, with no click: y answers the first part, and nothing is typed
    # into the reason box (the first text box used to take the focus and the key).
    page.keyboard.press("y")
    first_part = page.locator("fieldset.field").first
    expect(first_part.get_by_role("radio", name="Yes")).to_be_checked()
    expect(page.get_by_label("Reason (optional)")).to_have_value("")


def test_a_chat_message_not_sent_yet_comes_back_after_a_reload_and_a_sent_one_does_not(page, dialogs, make_annotator):
    from evaluation.interactive.services.chats import create_chat_job
    from evaluation.interactive.services.systems import import_goals, register_system
    from evaluation.interactive.systems.reference import ReferenceSystem
    from tests.evaluation.systems import running

    secret = "a-secret-of-twenty-chars"
    make_annotator("chen")
    goals = import_goals(name="goals", goals_file=b'{"id": "g1", "goal": {"restaurant": {"info": {"food": "chinese"}}}}\n')
    with running(ReferenceSystem(secret)) as url:
        create_chat_job(name="Chat with a system", systems=[register_system(name="sys", url=url, secret=secret)], goal_set=goals)
        log_in(page, "chen", "chen-pass-1")
        claim_by_keyboard(page, "Chat with a system")
        expect(page.locator("#chat-log li.system")).to_have_count(1)
        page.locator("#chat-input").fill("I want chinese food")
        page.reload()
        wait_until_ready(page)
        expect(page.locator("#chat-input")).to_have_value("I want chinese food")
        expect(page.locator("#draft-notice")).to_be_visible()
        page.locator("#chat-send").click()
        expect(page.locator("#chat-log li.user")).to_have_count(1)
        page.reload()
        wait_until_ready(page)
        expect(page.locator("#chat-log li.user")).to_have_count(1)  # the conversation is the server's
        expect(page.locator("#chat-input")).to_have_value("")  # and what was sent is not offered again
    assert dialogs == []
