"""A large corpus job created from the browser, as a builder does it: the job form answers at once
with a page that follows the creation (waiting for the worker, then running with the share of items
and slots written), and opens the draft job by itself once every item is there; nothing can be
launched before. A creation that fails part way says why on that page, left nothing behind, and
"Try again" makes the job.

The worker is the export test's thread (`queue_now` replaced), held at gates so the test sees each
state the page must show: it starts on `start`, and after writing the items waits for `resume`
before the slots."""
import threading

import pytest
from django.db import DatabaseError, connection
from playwright.sync_api import expect

from annotation.models import Item, Job, JobCreationRun, RunStatus, Slot
from annotation.services import jobs
from tests.browser.live import mark_this_page, still_this_page
from tests.browser.test_background_export import gated_worker  # noqa: F401 - a fixture
from tests.factories import make_corpus

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DIALOGS, USER_TURNS, REDUNDANCY = 3, 2, 3
ITEMS = DIALOGS * USER_TURNS


@pytest.fixture
def gated_slots(gated_worker, monkeypatch):  # noqa: F811 - the fixture imported above
    """The export test's worker thread (it starts on `start`), whose creation, once its items are
    written, waits for `resume` before the slots, and fails there while `fail` is set."""
    gated_worker["fail"] = threading.Event()
    insert_slots = jobs._insert_slots

    def slots_when_resumed(job, redundancy, first_position=0):
        gated_worker["resume"].wait(20)
        if gated_worker["fail"].is_set():
            raise DatabaseError("could not extend file: No space left on device")
        insert_slots(job, redundancy, first_position)

    monkeypatch.setattr(jobs, "_insert_slots", slots_when_resumed)
    return gated_worker


def _fill_the_form(page, corpus):
    page.get_by_label("Corpus").select_option(str(corpus.pk))
    page.get_by_label("Name", exact=True).fill("Big rewrites")
    page.get_by_label("Task type").select_option("rewrite")
    page.get_by_label("Redundancy").fill(str(REDUNDANCY))
    page.get_by_role("button", name="Create draft job").click()


def test_the_form_answers_at_once_follows_the_creation_and_opens_the_job(page, dialogs, organizer_login, gated_slots):
    corpus = make_corpus(dialogs=DIALOGS, user_turns=USER_TURNS)
    organizer_login("/organize/jobs/new/")
    _fill_the_form(page, corpus)

    card = page.locator("#job-creation")
    expect(page.get_by_role("heading", name="Creating the job “Big rewrites”")).to_be_visible()
    expect(page.locator("#creation-status")).to_have_text("Pending")
    expect(card).to_contain_text("Waiting for the background worker")
    expect(page.locator("#creation-progress")).to_be_visible()
    assert not Job.objects.exists()  # nothing a builder could launch yet
    mark_this_page(page)

    gated_slots["start"].set()
    expect(page.locator("#creation-status")).to_have_text("Running")  # followed without a reload
    if connection.vendor == "postgresql":  # SQLite's one writer: there the share is written at the end
        expect(page.locator("#creation-percent")).to_have_text("25%")  # the items of items and slots
    assert still_this_page(page) is True
    assert not Job.objects.exists()  # the items are written, not yet committed: still no job

    gated_slots["resume"].set()
    expect(page.locator("#job-state")).to_have_text("Draft", timeout=20_000)  # the job page, opened by itself
    expect(page.locator(".messages")).to_contain_text("Created draft job 'Big rewrites'")
    expect(page.locator("#items-done")).to_have_text(f"0 / {ITEMS}")
    job = Job.objects.get()
    assert (job.items.count(), Slot.objects.filter(job=job).count()) == (ITEMS, ITEMS * REDUNDANCY)
    assert dialogs == []


def test_a_failed_creation_leaves_nothing_says_why_and_is_tried_again(page, organizer_login, gated_slots):
    corpus = make_corpus(dialogs=DIALOGS, user_turns=USER_TURNS)
    organizer_login("/organize/jobs/new/")
    gated_slots["fail"].set()
    gated_slots["resume"].set()
    _fill_the_form(page, corpus)
    expect(page.locator("#creation-status")).to_have_text("Pending")
    gated_slots["start"].set()

    expect(page.locator("#creation-status")).to_have_text("Failed")
    expect(page.locator("#creation-error")).to_contain_text("DatabaseError")
    expect(page.locator("#job-creation")).to_contain_text("Nothing was created")
    expect(page.locator("#creation-progress")).to_have_count(0)
    assert not Job.objects.exists() and not Item.objects.exists() and not Slot.objects.exists()

    gated_slots["fail"].clear()  # the disk has room again
    page.get_by_role("button", name="Try again").click()
    expect(page.locator("#job-state")).to_have_text("Draft", timeout=20_000)
    job = Job.objects.get()
    assert (job.items.count(), Slot.objects.filter(job=job).count()) == (ITEMS, ITEMS * REDUNDANCY)
    assert JobCreationRun.objects.get().status == RunStatus.SUCCEEDED
