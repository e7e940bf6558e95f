"""Following background work on a page without a reload (static/progress.js replaces a line from
its progress endpoint): a marker that any reload or navigation removes, and the wait for a line to
reach its end."""
from playwright.sync_api import expect


def mark_this_page(page):
    page.evaluate("window.stillTheSamePage = true")  # gone if anything reloads the page


def still_this_page(page):
    """True while the marked page is shown; None once it was loaded again."""
    return page.evaluate("window.stillTheSamePage")


def expect_followed_to(page, line, text, timeout):
    """The line comes to say `text` on the marked page, and progress.js has stopped following it."""
    expect(line).to_contain_text(text, timeout=timeout)
    expect(page.locator("[data-progress-url]")).to_have_count(0)
    assert still_this_page(page) is True
