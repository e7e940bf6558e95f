"""A worker of a pairwise job that requires a reason picks a response by key and submits with
Ctrl+Enter, forgetting the reason: the page refused it and left the keyboard on the page's body, so
the next key typed went nowhere (or picked a response again). The keyboard now lands in the reason
box, where the problem is; what they type there is saved with their choice."""
import re

import pytest
from playwright.sync_api import expect

from annotation.models import Response
from annotation.services.jobs import launch_job
from annotation.services.payload_jobs import create_payload_job
from tests.browser.saving import expect_saved

from .test_annotator_flow import claim_by_keyboard, log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PAIR = {"context": [{"speaker": "user", "text": "Any parking?"}], "a": {"system": "s1", "text": "Yes, free parking."}, "b": {"system": "s2", "text": "No idea."}}


def test_a_refused_missing_reason_puts_the_keyboard_in_the_reason_box(page, make_annotator):
    make_annotator("rhea")
    launch_job(create_payload_job(name="Reasoned pairs", task_type="pairwise", payloads=[PAIR], settings={"reason_required": True}))
    log_in(page, "rhea", "rhea-pass-1")
    claim_by_keyboard(page, "Reasoned pairs")
    page.keyboard.press("2")
    page.keyboard.press("Control+Enter")
    expect(page.locator("#problems_reason")).to_contain_text("Reason: say in a few words")
    expect(page.locator("#id_reason")).to_be_focused()
    page.keyboard.type("more specific")
    page.keyboard.press("Control+Enter")
    expect_saved(page)
    answers = Response.objects.get().answers
    assert answers["reason"] == "more specific" and re.fullmatch("[ab]", answers["winner"])
