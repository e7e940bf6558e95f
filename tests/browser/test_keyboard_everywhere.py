"""The keyboard works the same on every task page: digits pick a choice by its position (pairwise)
or its value (a scale), `a` answers N/A and moves to its reason without shifting later digits,
Ctrl+Enter submits with the focus anywhere on the page, and free-text fields built from the shared
fields (out-of-scope turns) are checked live while typing, so a refused answer's message does not
stay stale."""
import re

import pytest
from playwright.sync_api import expect

from annotation.models import Corpus, Dialog, Response, Turn
from annotation.services.jobs import create_job, launch_job
from annotation.services.payload_jobs import create_payload_job
from tests.browser.saving import expect_saved

from .test_annotator_flow import claim_by_keyboard, log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CONTEXT = [{"speaker": "user", "text": "Can I bring my dog to the Alpha Hotel?"}]


def test_digits_pick_a_pairwise_choice_and_ctrl_enter_submits_from_outside_the_form(page, dialogs, make_annotator):
    _user, worker = make_annotator("pia")
    pair = {"context": CONTEXT, "a": {"system": "A", "text": "Yes, pets stay free."}, "b": {"system": "B", "text": "Please ask."}}
    launch_job(create_payload_job(name="Compare", task_type="pairwise", payloads=[pair]))
    log_in(page, "pia", "pia-pass-1")
    claim_by_keyboard(page, "Compare")
    expect(page.locator("#key-hint")).to_contain_text("Response 1")
    page.locator("h1, h2").first.click()  # the focus leaves the fields
    page.keyboard.press("3")
    expect(page.get_by_role("radio", name=re.compile("about as good"))).to_be_checked()
    page.keyboard.press("2")  # the group holds the focus now: the choice changes
    expect(page.get_by_role("radio", name=re.compile("Response 2 is better"))).to_be_checked()
    page.locator("h1, h2").first.click()
    page.keyboard.press("Control+Enter")
    expect_saved(page)
    response = Response.objects.get(worker=worker)
    shown_second = "b" if response.answers["left"] == "a" else "a"
    assert response.answers["winner"] == shown_second
    assert dialogs == []


def test_a_key_answers_na_and_later_digits_land_on_their_own_questions(page, dialogs, make_annotator):
    _user, worker = make_annotator("fay")
    dialog = {"dialog": [{"speaker": "user", "text": "Hi"}, {"speaker": "system", "text": "Hello! How can I help?"}]}
    job = launch_job(create_payload_job(name="FED dialogs", task_type="fed_dialog", payloads=[dialog]))
    log_in(page, "fay", "fay-pass-1")
    claim_by_keyboard(page, "FED dialogs")
    expect(page.locator("#key-hint")).to_contain_text("N/A")
    scales = page.locator("fieldset.scale")
    page.keyboard.press("2")  # coherent
    page.keyboard.press("a")  # error recovery: N/A, and the focus goes to its reason
    expect(page.locator("#id_error_recovery_na_reason")).to_be_focused()
    page.keyboard.type("It made no errors")
    page.keyboard.press("Tab")  # out of the reason
    count = scales.count()
    for _ in range(2, count):
        page.keyboard.press("1")
    expect(scales.nth(0).locator('input[value="2"]')).to_be_checked()
    expect(scales.nth(1).locator('input[value="na"]')).to_be_checked()
    for n in range(2, count):
        expect(scales.nth(n).locator("input[type=radio]:checked")).to_have_count(1)
    page.keyboard.press("Control+Enter")
    expect_saved(page)
    answers = Response.objects.get(worker=worker, item__job=job).answers
    assert answers["coherent"] == 2 and answers["error_recovery"] is None
    assert dialogs == []


def test_an_out_of_scope_turn_is_checked_live_while_typing(page, dialogs, make_annotator):
    make_annotator("oona")
    corpus = Corpus.objects.create(name="hotels", source_format="jsonl")
    dialog = Dialog.objects.create(corpus=corpus, external_id="d0", position=0)
    Turn.objects.create(dialog=dialog, index=0, speaker="user", text="I need a cheap hotel.")
    Turn.objects.create(dialog=dialog, index=1, speaker="system", text="Alpha Hotel is cheap.")
    Turn.objects.create(dialog=dialog, index=2, speaker="user", text="Does it have free parking?")
    qa = [{"question": "Does the Alpha Hotel have a gym?", "answer": "Yes, open all day."}]
    settings = {"insert_probability": 1.0, "max_per_dialog": 1, "seed": 0, "qa_pairs": qa}
    launch_job(create_job(corpus=corpus, name="Out of scope", task_type="oos_insert", settings=settings))
    log_in(page, "oona", "oona-pass-1")
    claim_by_keyboard(page, "Out of scope")
    page.locator("#id_utterance").fill("does the alpha hotel have a gym")
    page.keyboard.press("Control+Enter")
    expect(page.locator("#problems_utterance")).to_contain_text("the knowledge answers this")
    page.locator("#id_utterance").fill("")
    page.locator("#id_utterance").press_sequentially("What is the tallest mountain in Peru?")
    expect(page.locator("#problems_utterance")).to_contain_text("Looks good")  # no stale refusal
    assert dialogs == []
