"""Fixtures for tests that drive Debian's chromium through Playwright against pytest-django's live server.

Mark such tests `@pytest.mark.browser` and `@pytest.mark.django_db(transaction=True)`: the live
server answers from its own thread, so the test's rows must be committed for it to see them.
"""
import os
import shutil

import pytest

# Playwright's sync API runs an asyncio event loop on this thread (in a greenlet) for as long as
# the browser is open. Django sees that loop and refuses ORM calls from the test body, which builds
# data and checks results, with SynchronousOnlyOperation. Those calls are in fact synchronous and
# never overlap with the loop's own work (Playwright is idle between our calls), and the live server
# answers requests from its own thread, so relaxing the check here is safe. Set before any test
# runs; it only affects this test process.
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

# QUORUM_TEST_CHROMIUM names another build. Debian's chromium-headless-shell (the same Chromium built
# for headless use only) spends less CPU per test, but in it test_prolific_participant.py's exit to
# the provider never finishes its navigation: not the default until that is understood.
CHROMIUM = os.environ.get("QUORUM_TEST_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


@pytest.fixture(scope="session")
def chromium_browser():
    # This session fixture runs before the function-level service check in tests/conftest.py,
    # so it applies the same rule itself: skip without chromium, fail under CI.
    if not CHROMIUM:
        message = "needs Debian's chromium package (apt-get install chromium)"
        if IN_CI:
            pytest.fail(f"CI needs this service: {message}")
        pytest.skip(message)
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


def record_policy_violations(context) -> list[str]:
    """What the context's pages were refused by their Content-Security-Policy (an inline script, a
    foreign source), as Chromium reports it on the console; a page of Quorum's breaks none."""
    refused: list[str] = []
    context.on("console", lambda message: refused.append(message.text) if "Content Security Policy" in message.text else None)
    return refused


@pytest.fixture
def page(chromium_browser, live_server):
    """A fresh browser tab (no cookies) whose relative URLs go to the live server. The test fails
    if any page of its context broke the site's Content-Security-Policy."""
    from playwright.sync_api import expect

    context = chromium_browser.new_context(base_url=live_server.url)
    refused = record_policy_violations(context)
    tab = context.new_page()
    tab.set_default_timeout(10_000)
    # `expect` waits 5 s by default: the same 10 s as the tab's actions, for a live check's round
    # trip on a machine running the suite on every core.
    expect.set_options(timeout=10_000)
    yield tab
    context.close()
    assert not refused, f"a page broke its Content-Security-Policy: {refused[:3]}"


@pytest.fixture
def dialogs(page):
    """Messages of every alert/confirm/prompt the page opens; a safe page opens none."""
    seen = []

    def record(dialog):
        seen.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", record)
    return seen


@pytest.fixture
def organizer_login(page, organizer):
    """Signs the `organizer` fixture's user in through the login form, landing on `next_url`."""

    def log_in(next_url):
        page.goto(f"/accounts/login/?next={next_url}")
        page.locator("#id_username").fill("olga")
        page.locator("#id_password").fill("organizer-pass-1")
        page.locator("#id_password").press("Enter")

    return log_in
