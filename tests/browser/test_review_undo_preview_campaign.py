"""Issue 23 in Chromium, as a first-time organizer from the dashboard, with no shell: a bulk review
decision made by keyboard (it asks first) and undone with a reason; the compact view chosen and a
row decided from it; a job previewed as a worker sees it (nothing stored); a campaign renamed and
deleted, and one that ratings depend on refused with what to do."""
import pytest
from playwright.sync_api import expect

from annotation.models import DecisionUndo, Response, ResponseTransition, Slot
from annotation.services.claims import claim_next_slot, submit_response
from tests.factories import good_answers, make_corpus, make_live_job

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def job(make_annotator):
    job = make_live_job(make_corpus(dialogs=3, user_turns=1), name="Table rewrites")
    for name in ("ann", "bob", "cy"):
        worker = make_annotator(name)[1]
        slot = claim_next_slot(job=job, worker=worker)
        submit_response(slot_id=slot.id, worker=worker, answers=good_answers(slot.item))
    return job


def _open_review_queue(page, organizer_login, job):
    organizer_login("/organize/")
    page.get_by_role("link", name=job.name).first.click()
    page.locator("#review-link").click()
    page.wait_for_url("**/review/*")  # and its load event: review.js is deferred, keys pressed before it runs are lost


def test_a_bulk_decision_is_undone_with_a_reason(page, dialogs, organizer_login, job):
    _open_review_queue(page, organizer_login, job)
    expect(page.locator(".review-row")).to_have_count(3)
    page.fill("#bulk-reason", "copied from the source")
    page.keyboard.press("Escape")
    for _ in range(2):
        page.keyboard.press("j")
        page.keyboard.press("x")  # pick the first two responses
    page.keyboard.press("r")
    expect(page.locator("#bulk-confirm")).to_contain_text("Reject 2 responses?")  # a key asks first
    page.keyboard.press("Enter")
    expect(page.locator("#bulk-results")).to_contain_text("rejected")
    assert Response.objects.filter(item__job=job, status="rejected").count() == 2

    page.fill("#undo-last-reason", "they were rewritten after all")
    page.locator("#undo-last-submit").click()

    expect(page.locator("#undo-results li.ok")).to_have_count(2)
    expect(page.locator("#undo-results")).to_contain_text("back to accepted")
    expect(page.locator(".decision-group").first).to_contain_text("undone by olga: “they were rewritten after all”")
    assert Response.objects.filter(item__job=job, status="accepted").count() == 3
    moves = ResponseTransition.objects.filter(response__item__job=job, from_status="rejected", to_status="accepted")
    assert moves.count() == 2 and all("they were rewritten after all" in m.reason for m in moves)
    assert DecisionUndo.objects.count() == 2
    assert dialogs == []


def test_the_compact_view_is_chosen_remembered_and_a_row_decided(page, dialogs, organizer_login, job):
    _open_review_queue(page, organizer_login, job)
    page.locator("#view-compact").click()
    rows = page.locator("#review-compact tbody tr.review-row")
    expect(rows).to_have_count(3)
    first = Response.objects.filter(item__job=job).order_by("pk").first()
    row = page.locator(f"#response-{first.pk}")
    expect(row.locator(".excerpt")).to_contain_text(first.answers["paraphrase"])
    page.fill("#bulk-reason", "off topic")
    row.get_by_role("button", name="Exclude").click()
    expect(page.locator("#bulk-results")).to_contain_text(f"Response {first.pk}: excluded")
    assert list(Response.objects.filter(item__job=job).order_by("pk").values_list("status", flat=True)) == ["excluded", "accepted", "accepted"]
    page.goto("/organize/")  # away and back: the compact view is remembered
    page.goto(f"/organize/jobs/{job.pk}/review/")
    expect(page.locator("#review-compact")).to_be_visible()
    assert dialogs == []


def test_a_job_is_previewed_as_a_worker_sees_it_and_nothing_is_stored(page, dialogs, organizer_login, job):
    before = (Slot.objects.filter(job=job).exclude(state="open").count(), Response.objects.count())
    organizer_login("/organize/")
    page.get_by_role("link", name=job.name).first.click()
    page.locator("#preview-link").click()
    expect(page.locator("#preview-banner")).to_contain_text("Preview")
    expect(page.locator("#preview-banner")).to_contain_text("Nothing you do here is saved")
    expect(page.locator("#work-form textarea").first).to_be_visible()  # the rewrite task's own form
    page.get_by_role("link", name="Next item").click()
    expect(page.locator("#preview-banner")).to_contain_text("item 2 of 3")
    page.locator("#submit-button").click()  # empty answers: the checks a worker meets, and nothing saved
    expect(page.locator("#problem-summary")).to_be_visible()
    assert (Slot.objects.filter(job=job).exclude(state="open").count(), Response.objects.count()) == before
    assert dialogs == []


def test_a_campaign_is_renamed_and_deleted_and_one_with_ratings_is_kept(page, dialogs, organizer_login):
    from evaluation.campaigns.services.campaigns import create_campaign
    from evaluation.campaigns.services.imports import import_human_eval, import_test_set
    from evaluation.models import Campaign
    from tests.evaluation.conftest import DSTC9

    test_set = import_test_set("DSTC9 Track 1", "test", DSTC9 / "labels.json", DSTC9 / "knowledge.json")
    create_campaign("pilot", test_set, [])
    rated = create_campaign("rated", test_set, [])
    import_human_eval(rated, DSTC9 / "human_eval")

    organizer_login("/organize/")
    page.get_by_role("link", name="Evaluation", exact=True).first.click()
    page.get_by_role("link", name="pilot", exact=True).first.click()
    page.locator("#campaign-manage summary").click()
    page.fill("#campaign-name", "Pilot, round 2")
    page.locator("#rename-submit").click()
    expect(page.locator("h1")).to_have_text("Pilot, round 2")
    page.locator("#campaign-manage summary").click()
    page.locator("#delete-confirm").check()
    page.locator("#delete-submit").click()
    expect(page.locator("body")).to_contain_text("Deleted the campaign “Pilot, round 2”")
    assert not Campaign.objects.filter(name__in=["pilot", "Pilot, round 2"]).exists()

    page.get_by_role("link", name="rated", exact=True).first.click()
    page.locator("#campaign-manage summary").click()
    expect(page.locator("#delete-blocked")).to_contain_text("imported ratings belong to it")
    expect(page.locator("#delete-submit")).to_have_count(0)
    assert Campaign.objects.filter(name="rated").exists()
    assert dialogs == []
