"""Typing telemetry in a real browser: what the worker types and pastes is counted per field, posted
with the answers, kept over a refused submission, and stored with the response."""
import pytest
from playwright.sync_api import expect

from annotation.models import Response

from .test_annotator_flow import HOTEL, claim_by_keyboard, log_in, make_job, wait_until_ready

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASTED = "Hello, I would really like to book a cheap hotel somewhere in the centre of town for 4 people."


def paste(page, selector, text):
    """What a paste does: the paste event (which annotate.js counts), then the text in the field."""
    page.locator(selector).evaluate(
        """(el, text) => {
            const data = new DataTransfer();
            data.setData("text/plain", text);
            el.dispatchEvent(new ClipboardEvent("paste", {clipboardData: data, bubbles: true, cancelable: true}));
            el.value = text;
            el.dispatchEvent(new InputEvent("input", {inputType: "insertFromPaste", data: text, bubbles: true}));
        }""",
        text,
    )


def test_typed_and_pasted_characters_are_counted_per_field(page, dialogs, make_annotator):
    _user, worker = make_annotator("tess")
    make_job("Hotel rewrites", [
        ("user", HOTEL, ["cheap", "centre", "4 people"]),
        ("system", "Which day?", []),
        ("user", "Monday, for 4 people.", ["Monday", "4 people"]),
    ])
    log_in(page, "tess", "tess-pass-1")
    claim_by_keyboard(page, "Hotel rewrites")
    expect(page.locator("#telemetry-notice")).to_contain_text("For quality control")

    typed = "Please find me a cheap hotel in the centre for 4 people."
    expect(page.locator("#id_paraphrase")).to_be_focused()
    page.keyboard.type(typed)
    page.keyboard.press("Tab")
    page.keyboard.type("I ned a cheap hotel in teh centre for 4 people.")
    paste(page, "#id_verbose", PASTED)
    page.locator("#id_simplified").focus()
    page.keyboard.type("cheap")  # drops "centre" and "4 people": refused
    page.keyboard.press("Control+Enter")
    expect(page.get_by_role("alert")).to_contain_text("Not saved")
    wait_until_ready(page)
    assert not Response.objects.exists()

    # The counts survived the refusal; finish the last field and save.
    page.locator("#id_simplified").focus()
    page.keyboard.press("End")
    page.keyboard.type(" hotel, centre, 4 people")
    page.keyboard.press("Control+Enter")
    expect(page.locator("#saved-notice")).to_be_visible()
    expect(page.locator("#telemetry")).to_have_value("")  # the next item starts from zero

    response = Response.objects.get(worker=worker)
    t = response.telemetry
    assert t["paraphrase"]["typed_chars"] == len(typed) and t["paraphrase"]["pasted_chars"] == 0
    assert t["paraphrase"]["keystrokes"] >= len(typed)
    assert t["verbose"]["pasted_chars"] == len(PASTED) and t["verbose"]["paste_events"] == 1
    assert t["verbose"]["typed_chars"] == 0
    assert t["simplified"]["typed_chars"] == len("cheap") + len(" hotel, centre, 4 people")
    assert dialogs == []
