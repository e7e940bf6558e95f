"""A rater who answers N/A without saying why is refused, and the keyboard lands in the box where the
reason goes, not on the scale they already answered (where a digit key would undo their N/A)."""

import pytest
from playwright.sync_api import expect

from annotation.services.jobs import launch_job
from annotation.services.payload_jobs import create_payload_job

from .test_annotator_flow import wait_until_ready

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DIALOG = {"dialog": [{"speaker": "user", "text": "Hi! Any plans for the weekend?"}, {"speaker": "system", "text": "Hiking, you?"}]}


def test_na_without_a_reason_is_refused_with_the_focus_in_the_reason_box(page, make_annotator):
    job = launch_job(create_payload_job(name="FED dialogs", task_type="fed_dialog", payloads=[DIALOG], redundancy=1, reward="0.20"))
    make_annotator("ria")
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto("/accounts/login/?next=/")
    page.locator("#id_username").fill("ria")
    page.locator("#id_password").fill("ria-pass-1")
    page.locator("#id_password").press("Enter")
    page.get_by_role("button", name=f"Next item: {job.name}", exact=True).click()
    expect(page.locator("#answers-title")).to_be_visible()
    wait_until_ready(page)  # the page's keys work once its script has run: a key pressed before is lost
    page.keyboard.press("3")  # coherent: Yes, on to error recovery
    page.keyboard.press("a")  # error recovery: N/A, on to its reason
    for name in ("consistent", "diverse", "topic_depth", "likeable", "understanding", "flexible", "informative", "inquisitive", "overall"):
        page.locator(f"input[name={name}]").first.check()
    page.get_by_role("button", name="Submit").click()
    expect(page.locator(".problems")).to_contain_text(["Error recovery: say why it does not apply."])
    reason = page.get_by_label("If N/A: why")
    expect(reason).to_be_focused()
    expect(reason).to_have_attribute("aria-invalid", "true")
    expect(page.locator("input[name=error_recovery][value=na]")).to_be_checked()
    page.keyboard.type("The system made no error to recover from.")
    page.keyboard.press("Control+Enter")
    expect(page.get_by_text("Nothing left for you")).to_be_visible()
    answers = job.items.get().slots.get().response.answers
    assert answers["error_recovery"] is None and answers["error_recovery_na_reason"] == "The system made no error to recover from."
