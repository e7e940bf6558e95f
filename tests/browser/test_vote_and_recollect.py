"""CGoDial's quality loop in Chromium: two workers vote on another's rewrites, one variant at a time;
both turn the paraphrase down with a reason, so the item is collected again; the writer reads the
voters' reasons on their home page, and another worker gets the item back to rewrite.

The writer's response is saved through the service (the rewrite page itself has its own browser
tests); the votes, the feedback and the re-collection are what this test drives from the page."""
import pytest
from playwright.sync_api import expect

from annotation.models import Response, Slot
from annotation.services.claims import claim_next_slot, submit
from annotation.services.voting import enable_voting
from tests.browser.saving import expect_saved
from tests.factories import good_answers, make_corpus, make_live_job

from .test_annotator_flow import claim_by_keyboard, log_in, wait_until_ready

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

REASON = "The paraphrase asks for something else than the user did."


def _vote(page, name, paraphrase):
    log_in(page, name, f"{name}-pass-1")
    claim_by_keyboard(page, "Hotel rewrites · votes")
    expect(page.locator("#shown-response")).to_contain_text(paraphrase)  # the writer's own text, to judge
    for part in page.locator("fieldset.field").all():
        choice = "No" if "Paraphrase" in part.locator("legend").inner_text() else "Yes"
        part.get_by_role("radio", name=choice).check()
    page.get_by_label("Reason (optional)").fill(REASON)
    page.get_by_role("button", name="Submit").click()
    expect_saved(page)
    page.get_by_role("button", name="Log out").click()


def test_a_rewrite_voted_down_is_collected_again_and_its_writer_reads_why(page, dialogs, make_annotator):
    _user, writer = make_annotator("wes")
    for name in ("vic", "val", "nia"):
        make_annotator(name)
    job = make_live_job(make_corpus(dialogs=1, user_turns=1), name="Hotel rewrites")
    enable_voting(job, votes_per_response=2, against_threshold=2)
    slot = claim_next_slot(job=job, worker=writer)
    answers = good_answers(slot.item)
    written = submit(slot_id=slot.pk, worker=writer, answers=answers).response

    _vote(page, "vic", answers["paraphrase"])
    assert Response.objects.get(pk=written.pk).status == Response.Status.AWAITING_REVIEW  # one vote against of two
    _vote(page, "val", answers["paraphrase"])

    written.refresh_from_db()
    assert written.status == Response.Status.EXCLUDED  # soft-rejected: paid, data left out
    assert Slot.objects.filter(item=written.item, state=Slot.State.OPEN).count() == 1  # collected again

    log_in(page, "wes", "wes-pass-1")
    feedback = page.locator("#feedback")
    expect(feedback).to_contain_text("Voted down: what other workers said")
    expect(feedback.locator(".feedback-item")).to_contain_text(REASON)
    # The writer's rewrites in the form's order, by their labels; the one turned down marked.
    expect(feedback.locator(".feedback-answer .muted")).to_have_text(["Paraphrase:", "Typos:", "Verbose:", "Simplified:"])
    expect(feedback.locator(".feedback-answer.turned-down")).to_contain_text(answers["paraphrase"])
    expect(feedback.locator(".turned-down-parts")).to_have_text("Turned down: Paraphrase (2 said no)")
    expect(page.get_by_role("button", name="Next item: Hotel rewrites", exact=True)).to_have_count(0)  # not their own item again
    page.get_by_role("button", name="Log out").click()

    log_in(page, "nia", "nia-pass-1")
    claim_by_keyboard(page, "Hotel rewrites")
    wait_until_ready(page)
    expect(page.locator("#target-turn")).to_contain_text(written.item.payload["utterance"])
    assert dialogs == []
