"""The review queue in a real browser: filter by worker, read a rewrite's diff against its source,
and reject a response by keyboard (j to reach it, r to reject it with the reason typed above)."""
import pytest
from playwright.sync_api import expect

from annotation.models import CheckOverride, Response
from annotation.services.claims import claim_next_slot, submit_response
from tests.factories import good_answers, make_corpus, make_live_job

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def log_in(page, username, password, next_url):
    page.goto(f"/accounts/login/?next={next_url}")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.keyboard.press("Enter")
    # The login page's own address ends in ?next=<next_url>: wait for the organizer nav instead.
    expect(page.get_by_role("link", name="New job")).to_be_visible()


def test_filter_read_the_diff_and_reject_by_keyboard(page, dialogs, organizer, make_annotator):
    job = make_live_job(make_corpus(dialogs=2, user_turns=1), name="Table rewrites")
    ann, bob = make_annotator("ann")[1], make_annotator("bob")[1]
    for worker in (ann, bob):
        slot = claim_next_slot(job=job, worker=worker)
        submit_response(slot_id=slot.id, worker=worker, answers=good_answers(slot.item))
    bobs = Response.objects.get(worker=bob)

    log_in(page, "olga", "organizer-pass-1", f"/organize/jobs/{job.pk}/")
    page.locator("#review-link").click()
    expect(page.locator(".review-row")).to_have_count(2)

    page.select_option("select[name=worker]", str(bob.pk))
    page.click("#review-filters button[type=submit]")
    expect(page.locator(".review-row")).to_have_count(1)
    row = page.locator(f"#response-{bobs.pk}")
    expect(row.locator(".variant-typos ins")).to_have_text("tabel")
    expect(row.locator(".variant-typos del")).to_have_text("table")
    expect(row.locator(".source mark.slot").first).to_have_text("cheap")

    page.fill("#bulk-reason", "the area is lost")
    page.keyboard.press("Escape")  # leave the field: keys act on the queue again
    page.keyboard.press("j")
    expect(row).to_have_class("card review-row current")
    page.keyboard.press("e")  # a key asks first; Esc cancels and nothing is decided
    expect(page.locator("#bulk-confirm")).to_contain_text("Exclude 1 response?")
    page.keyboard.press("Escape")
    expect(page.locator("#bulk-confirm")).to_be_hidden()
    page.keyboard.press("r")
    expect(page.locator("#bulk-confirm")).to_contain_text("Reject 1 response?")
    page.keyboard.press("r")  # the same key again confirms
    expect(page.locator("#bulk-results")).to_contain_text(f"Response {bobs.pk}: rejected (not paid)")
    bobs.refresh_from_db()
    assert bobs.status == Response.Status.REJECTED
    assert CheckOverride.objects.get(response=bobs).reason == "the area is lost"
    assert Response.objects.get(worker=ann).status == Response.Status.ACCEPTED
    assert dialogs == []
