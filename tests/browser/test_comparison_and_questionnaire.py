"""The new kinds of work in a real browser: a pairwise comparison and a FED questionnaire, answered
by keyboard; what is stored is what was chosen, in the order the worker saw, and no system name is
ever on the page."""
import re

import pytest
from playwright.sync_api import expect

from annotation.models import Response
from annotation.services.jobs import launch_job
from annotation.services.payload_jobs import create_payload_job
from tests.browser.saving import expect_saved

from .test_annotator_flow import claim_by_keyboard, log_in, tab_to

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CONTEXT = [{"speaker": "user", "text": "Can I bring my dog to the Alpha Hotel?"}]


def test_a_pairwise_choice_is_saved_with_the_order_the_worker_saw(page, dialogs, make_annotator):
    _user, worker = make_annotator("pia")
    pair = {"context": CONTEXT, "instance": "c1", "a": {"system": "team-secret-a", "text": "Yes, pets stay free."}, "b": {"system": "team-secret-b", "text": "Please ask at the desk."}}
    launch_job(create_payload_job(name="Compare replies", task_type="pairwise", payloads=[pair], settings={"reason_required": True}))
    log_in(page, "pia", "pia-pass-1")
    claim_by_keyboard(page, "Compare replies")

    html = page.content()
    assert "team-secret" not in html
    first_text = page.locator("#candidate-1 .text").inner_text()
    # Choose "Response 1" by keyboard and submit without a reason: refused, and the choice is kept.
    radio = page.get_by_role("radio", name=re.compile("Response 1 is better"))
    tab_to(page, radio)
    page.keyboard.press("Space")
    page.keyboard.press("Control+Enter")
    expect(page.get_by_role("alert")).to_contain_text("Reason")
    expect(page.get_by_role("radio", name=re.compile("Response 1 is better"))).to_be_checked()
    page.locator("#id_reason").fill("It answers the question.")
    page.keyboard.press("Control+Enter")
    expect_saved(page)

    response = Response.objects.get(worker=worker)
    chosen = response.item.payload[response.answers["winner"]]
    assert chosen["text"] == first_text  # the worker's "Response 1" is the output stored as the winner
    assert response.item.payload[response.answers["left"]]["text"] == first_text
    assert response.answers["reason"] == "It answers the question."
    assert dialogs == []


def test_fed_questions_are_answered_on_their_own_scales(page, dialogs, make_annotator):
    _user, worker = make_annotator("fay")
    payload = {"context": CONTEXT, "response": "Yes, dogs are welcome <b>for free</b>."}
    job = launch_job(create_payload_job(name="FED turns", task_type="fed_turn", payloads=[payload]))
    log_in(page, "fay", "fay-pass-1")
    claim_by_keyboard(page, "FED turns")

    expect(page.locator("#rated-response")).to_contain_text("<b>for free</b>")  # shown as text
    assert page.locator("#rated-response b").count() == 0
    expect(page.locator("#id_understandable input[type=radio]")).to_have_count(2)  # No / Yes
    expect(page.locator("#id_interesting input[type=radio]")).to_have_count(3)  # No / Somewhat / Yes
    expect(page.locator("#id_overall input[type=radio]")).to_have_count(5)
    for fieldset in page.locator("fieldset.scale").all():
        fieldset.locator("input[type=radio]").last.check()
    page.keyboard.press("Control+Enter")
    expect_saved(page)
    answers = Response.objects.get(worker=worker, item__job=job).answers
    assert answers["understandable"] == 2 and answers["interesting"] == 3 and answers["overall"] == 5
    assert dialogs == []


def test_a_rating_is_given_by_number_keys(page, dialogs, make_annotator):
    """Likert scales by number keys: a digit picks that point on the current scale and moves to the
    next; the keys are listed on the page."""
    _user, worker = make_annotator("rae")
    payload = {"context": CONTEXT, "response": "Yes, dogs are welcome.", "knowledge": [{"entity": "Alpha Hotel", "body": "Pets stay free."}]}
    job = launch_job(create_payload_job(name="Rate replies", task_type="likert", payloads=[payload]))
    log_in(page, "rae", "rae-pass-1")
    claim_by_keyboard(page, "Rate replies")
    expect(page.locator("#key-hint")).to_contain_text("chooses it on the current scale")
    expect(page.locator("#progress")).to_contain_text("Item 1 of 1")
    scales = page.locator("fieldset.scale")
    expect(scales).to_have_count(2)
    page.keyboard.press("4")
    page.keyboard.press("2")
    expect(scales.nth(0).locator('input[value="4"]')).to_be_checked()
    expect(scales.nth(1).locator('input[value="2"]')).to_be_checked()
    page.keyboard.press("Control+Enter")
    expect_saved(page)
    answers = Response.objects.get(worker=worker, item__job=job).answers
    assert sorted(answers.values()) == [2, 4]
    assert dialogs == []
