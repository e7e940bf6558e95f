"""The box for an N/A's reason is shown only while N/A is the question's answer: a rater choosing a
point of the scale is not asked "If N/A: why". It appears when N/A is chosen by mouse or by the `a`
key (the keyboard lands in it), hides again when a point is chosen, and without JavaScript it is
always there, so the form still takes an N/A with its reason."""

import pytest
from playwright.sync_api import expect

from annotation.services.jobs import launch_job
from annotation.services.payload_jobs import create_payload_job

from .conftest import record_policy_violations
from .test_annotator_flow import wait_until_ready

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DIALOG = {"dialog": [{"speaker": "user", "text": "Hi! Any plans for the weekend?"}, {"speaker": "system", "text": "Hiking, you?"}]}
OTHERS = ("coherent", "consistent", "diverse", "topic_depth", "likeable", "understanding", "flexible", "informative", "inquisitive", "overall")


def _job(n=1):
    return launch_job(create_payload_job(name="FED dialogs", task_type="fed_dialog", payloads=[DIALOG] * n, redundancy=1, reward="0.20"))


def _start(page, job):
    page.goto("/accounts/login/?next=/")
    page.locator("#id_username").fill("ria")
    page.locator("#id_password").fill("ria-pass-1")
    page.locator("#id_password").press("Enter")
    page.get_by_role("button", name=f"Next item: {job.name}", exact=True).click()
    expect(page.locator("#answers-title")).to_be_visible()


def test_the_reason_box_shows_only_while_na_is_chosen(page, make_annotator):
    job = _job()
    make_annotator("ria")
    _start(page, job)
    wait_until_ready(page)
    reason = page.get_by_label("If N/A: why")
    expect(reason).to_be_hidden()
    page.locator("input[name=error_recovery][value=na]").check()
    expect(reason).to_be_visible()
    page.locator("input[name=error_recovery][value='2']").check()
    expect(reason).to_be_hidden()
    page.locator("input[name=error_recovery][value='2']").focus()
    page.keyboard.press("a")  # error recovery: N/A by key, the keyboard in its reason
    expect(reason).to_be_visible()
    expect(reason).to_be_focused()
    page.keyboard.type("No error was made.")
    for name in OTHERS:
        page.locator(f"input[name={name}]").first.check()
    page.keyboard.press("Control+Enter")
    expect(page.get_by_text("Nothing left for you")).to_be_visible()
    answers = job.items.get().slots.get().response.answers
    assert answers["error_recovery"] is None and answers["error_recovery_na_reason"] == "No error was made."


def test_without_javascript_the_reason_box_is_there_and_an_na_is_taken(chromium_browser, live_server, make_annotator):
    job = _job()
    make_annotator("ria")
    context = chromium_browser.new_context(base_url=live_server.url, java_script_enabled=False)
    refused = record_policy_violations(context)
    page = context.new_page()
    page.set_default_timeout(10_000)
    try:
        _start(page, job)
        reason = page.get_by_label("If N/A: why")
        expect(reason).to_be_visible()
        for name in OTHERS:
            page.locator(f"input[name={name}]").first.check()
        page.locator("input[name=error_recovery][value=na]").check()
        reason.fill("No error was made.")
        page.get_by_role("button", name="Submit").click()
        expect(page.get_by_text("Nothing left for you")).to_be_visible()
    finally:
        context.close()
    assert not refused
    answers = job.items.get().slots.get().response.answers
    assert answers["error_recovery"] is None and answers["error_recovery_na_reason"] == "No error was made."
