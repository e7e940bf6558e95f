"""Waiting for a saved submission in the browser.

With the page's script the work form is posted by fetch and the next page is written in place of
this one (static/annotate.js): no navigation happens for Playwright to wait for, and the work page
itself says "you have saved N responses". So wait for the notice the page after a save shows."""
import re

from playwright.sync_api import expect

SAVED = re.compile(r"Saved\. (Here is your next item|Thank you)")
#: Playwright's default of 10 s was not always enough for a save (the typing flags, the next page) while
#: the suite's other worker ran a simulation on the same two cores; a save that never comes still fails.
SAVE_TIMEOUT_MS = 30_000


def expect_saved(page):
    expect(page.get_by_role("status").filter(has_text=SAVED)).to_be_visible(timeout=SAVE_TIMEOUT_MS)
