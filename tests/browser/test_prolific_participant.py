"""A Prolific participant in Chromium, from the study link to Prolific's completion page: the link
(PROLIFIC_PID, STUDY_ID, SESSION_ID) lands on their item; a refused answer keeps them on Quorum with
what to fix; the saved one sends them on to Prolific with the study's completion code, through the
page script's one-request cycle. Going back afterwards shows the item as saved and saves nothing twice.

Prolific's API is the local fake; its completion page (on app.prolific.com, out of reach here) is
answered by the browser's own route, so the test sees exactly where the participant was sent."""
from urllib.parse import urlencode

import pytest
from playwright.sync_api import expect

from annotation.models import Response
from hits import links
from hits.models import Posting, ProviderAssignment
from hits.services.config import configure_crowd
from hits.services.postings import launch_crowd_job, post_job
from tests.hits.conftest import ANSWERS, fake_prolific, make_job  # noqa: F401 - fake_prolific is a fixture

from .test_annotator_flow import wait_until_ready

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PROLIFIC_SITE = "https://app.prolific.com/"


def test_a_participant_goes_from_the_study_link_to_prolific_with_the_completion_code(page, dialogs, fake_prolific):  # noqa: F811
    job = make_job(turns=2, name="Hotel rewrites")
    configure_crowd(job, provider="prolific", budget="100", assignments_per_posting=2)
    launch_crowd_job(job)
    post_job(job, concurrency=1)
    posting = Posting.objects.get(job=job)
    session = fake_prolific.start_submission(posting.external_id, "5f1a2b3c4d5e6f7a8b9c0d1e")
    arrived_at_prolific = []
    page.route(PROLIFIC_SITE + "**", lambda route: (
        arrived_at_prolific.append(route.request.url),
        route.fulfill(status=200, content_type="text/html", body="<title>Prolific</title><h1>Submission complete</h1>"),
    ))

    page.goto(f"/crowd/prolific/{job.pk}/?" + urlencode({"PROLIFIC_PID": "5f1a2b3c4d5e6f7a8b9c0d1e", "STUDY_ID": posting.external_id, "SESSION_ID": session}))
    wait_until_ready(page)
    work_url = page.url
    expect(page.locator(".instructions-text")).to_contain_text("Rewrite the user's turn.")
    page.get_by_label("Paraphrase").fill("hello")  # drops the slot values: refused, and said why
    page.get_by_role("button", name="Submit").click()
    expect(page.locator("#problem-summary")).to_contain_text("cheap")
    assert not Response.objects.exists() and arrived_at_prolific == []

    page.get_by_label("Paraphrase").fill(ANSWERS["paraphrase"])
    page.get_by_role("button", name="Submit").click()
    expect(page.get_by_role("heading", name="Submission complete")).to_be_visible()
    assert arrived_at_prolific == [f"{PROLIFIC_SITE}submissions/complete?cc={links.completion_code(job.pk)}"]
    response = Response.objects.select_related("worker").get()
    assert (response.worker.provider, response.worker.external_id) == ("prolific", "5f1a2b3c4d5e6f7a8b9c0d1e")
    assert response.answers["paraphrase"] == ANSWERS["paraphrase"]
    assignment = ProviderAssignment.objects.get(external_id=session)
    assert assignment.state == ProviderAssignment.State.SUBMITTED and assignment.response_id == response.pk

    page.goto(work_url)  # back to the item afterwards (history, or a bookmarked link)
    expect(page.locator("body")).to_contain_text("your response is saved")
    assert Response.objects.count() == 1
    assert dialogs == []
