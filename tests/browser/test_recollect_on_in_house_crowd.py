"""The builder chose the in-house crowd on the job page, and a rewrite was voted down: the next
annotator opens the re-collected item from their home page. Before, the re-collected place was never
posted, and "Next item" answered "Every place the budget pays for is taken. Ask the organizer to post
more." The writing and the votes go through the services (their pages have their own tests)."""
import pytest
from playwright.sync_api import expect

from annotation.services.jobs import create_job, launch_job
from annotation.services.voting import enable_voting
from hits.services.config import configure_crowd
from tests.factories import make_corpus
from tests.quality.helpers import vote, write

from .test_annotator_flow import claim_by_keyboard, log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_next_annotator_takes_a_rewrite_voted_down_on_an_in_house_crowd_job(page, dialogs, make_annotator):
    job = create_job(corpus=make_corpus(dialogs=1, user_turns=1), name="Hotel rewrites")
    configure_crowd(job, provider="inhouse")
    vote_job = enable_voting(job, votes_per_response=2, against_threshold=2)
    job = launch_job(job)
    writer, first_voter, second_voter = (make_annotator(name)[1] for name in ("wes", "vic", "val"))
    make_annotator("nia")
    written = write(job, writer)
    vote_job.refresh_from_db()
    vote(vote_job, first_voter, "against", "unreadable")
    vote(vote_job, second_voter, "against", "unreadable")

    log_in(page, "nia", "nia-pass-1")
    claim_by_keyboard(page, "Hotel rewrites")
    expect(page.locator("#target-turn")).to_contain_text(written.item.payload["utterance"])
    assert dialogs == []
