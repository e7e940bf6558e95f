"""The one-request annotation cycle in Chromium (issue 26): the page's script posts the answers and
shows the next item's page from that one response; the address bar names the new item; a reload asks
for that item and stores nothing; Back leaves the work pages without posting again; the new page's
scripts run (live checks and counts attached), so the next submission goes the same way."""
import re

import pytest
from playwright.sync_api import expect

from annotation.models import Response, Slot
from annotation.work_tokens import read_token
from tests.factories import good_answers, make_corpus, make_live_job

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _slot(url) -> Slot:
    return Slot.objects.select_related("item").get(pk=read_token(re.search(r"/work/([^/?]+)/", url).group(1))[0])


def _answer(page):
    for name, text in good_answers(_slot(page.url).item).items():
        page.locator(f"textarea[name={name}]").fill(text)


def _log_in_and_claim(page):
    page.goto("/accounts/login/?next=/")
    page.locator("#id_username").fill("anna")
    page.locator("#id_password").fill("anna-pass-1")
    page.locator("#id_password").press("Enter")
    page.get_by_role("button", name=re.compile("^Next item: ")).click()
    expect(page.locator("#work-form[data-ready=true]")).to_be_visible()


def test_submit_shows_the_next_item_from_one_request(page, make_annotator):
    make_annotator("anna")
    make_live_job(make_corpus(dialogs=2, user_turns=2))  # four items
    _log_in_and_claim(page)
    first_url = page.url
    requests = []
    page.on("request", lambda r: requests.append((r.method, r.url)) if "/work/" in r.url and "/check/" not in r.url else None)

    _answer(page)
    page.get_by_role("button", name="Submit", exact=True).click()

    expect(page.locator("#saved-notice")).to_have_text("Saved. Here is your next item.")
    expect(page).to_have_url(re.compile(r"/work/[^/?]+/$"))  # the item's own address: a reload says "Saved" no more
    assert page.url != first_url
    assert [method for method, _url in requests] == ["POST"]  # no redirect, no second request
    second = _slot(page.url)
    assert second.state == Slot.State.CLAIMED and Response.objects.count() == 1
    expect(page.locator("#progress")).to_contain_text("Item 2 of 4")
    expect(page.locator("#work-form[data-ready=true]")).to_be_visible()  # the new page's script is attached
    assert page.url.split("?")[0].endswith(page.locator("#work-form").get_attribute("action"))  # the URL names this item

    # The next submission goes the same way, from the page that was written in place.
    _answer(page)
    page.keyboard.press("Control+Enter")
    expect(page.locator("#progress")).to_contain_text("Item 3 of 4")
    assert [method for method, _url in requests] == ["POST", "POST"]
    assert Response.objects.count() == 2


def test_reload_and_back_store_nothing_more(page, make_annotator):
    make_annotator("anna")
    make_live_job(make_corpus(dialogs=2, user_turns=2))
    _log_in_and_claim(page)
    _answer(page)
    page.get_by_role("button", name="Submit", exact=True).click()
    expect(page.locator("#saved-notice")).to_be_visible()
    shown = page.url

    page.reload()  # a GET of the item the address bar names: no "resubmit the form?" and no post

    expect(page.locator("#work-form[data-ready=true]")).to_be_visible()
    assert page.url == shown
    expect(page.locator("#saved-notice")).to_have_count(0)  # said once, after the submit, not on a reload
    assert _slot(page.url).state == Slot.State.CLAIMED
    assert Response.objects.count() == 1

    page.go_back()  # the submitted item's entry was replaced: Back leads to the job list

    expect(page.get_by_role("heading", name="Hello, anna")).to_be_visible()
    assert Response.objects.count() == 1
    assert Slot.objects.filter(state=Slot.State.CLAIMED).count() == 1
