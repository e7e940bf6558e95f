"""An MTurk worker in Chromium, inside MTurk's frame: the HIT's ExternalQuestion page frames Quorum's
entry URL; the item opens in the frame (the pages let MTurk frame them, and identity is the signed
token, not a third-party cookie); the saved answer is sent on to MTurk's externalSubmit with the
assignment id, by a form post from the frame, once the response is committed.

MTurk's API is the local fake; its worker site (out of reach here) is answered by the browser's own
routes: the page that frames the HIT, and externalSubmit, whose posted fields the test reads."""
from urllib.parse import parse_qs, urlencode

import pytest
from playwright.sync_api import expect

from annotation.models import Response
from hits.models import Posting, ProviderAssignment
from hits.services.config import configure_crowd
from hits.services.postings import launch_crowd_job, post_job
from tests.hits.conftest import ANSWERS, aws_env, fake_mturk, make_job  # noqa: F401 - aws_env and fake_mturk are fixtures

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

MTURK_SITE = "https://workersandbox.mturk.com"


def test_a_worker_does_the_hit_in_mturks_frame_and_is_sent_to_external_submit(page, dialogs, fake_mturk, live_server):  # noqa: F811
    job = make_job(turns=2, name="Hotel rewrites")
    configure_crowd(job, provider="mturk", budget="100", assignments_per_posting=2)
    launch_crowd_job(job)
    post_job(job, concurrency=1)
    posting = Posting.objects.filter(job=job).first()
    assignment_id = fake_mturk.accept(posting.external_id, "A1WORKERONE")
    entry = f"{live_server.url}/crowd/mturk/{job.pk}/?" + urlencode({
        "assignmentId": assignment_id, "hitId": posting.external_id, "workerId": "A1WORKERONE", "turkSubmitTo": MTURK_SITE,
    })
    submitted = []

    def worker_site(route):
        if route.request.url.startswith(f"{MTURK_SITE}/mturk/externalSubmit"):
            submitted.append(parse_qs(route.request.post_data or ""))
            return route.fulfill(status=200, content_type="text/html", body="<h1>HIT submitted</h1>")
        return route.fulfill(status=200, content_type="text/html", body=f'<h1>HIT</h1><iframe id="hit" src="{entry}" width="1200" height="900"></iframe>')

    # Chromium asks before a public site's page reaches this machine's network; MTurk's is a public
    # site framing a server that here runs on loopback, so the test grants what a worker's browser
    # never needs to (Quorum is not on their local network).
    page.context.grant_permissions(["local-network-access"], origin=MTURK_SITE)
    page.route(f"{MTURK_SITE}/**", worker_site)
    page.goto(f"{MTURK_SITE}/projects/hotel/tasks")
    frame = page.frame_locator("#hit")
    expect(frame.locator("#work-form[data-ready=true]")).to_be_visible()
    expect(frame.locator(".instructions-text")).to_contain_text("Rewrite the user's turn.")
    frame.get_by_label("Paraphrase").fill(ANSWERS["paraphrase"])
    frame.get_by_role("button", name="Submit").click()
    expect(frame.get_by_role("heading", name="HIT submitted")).to_be_visible()

    assert len(submitted) == 1 and submitted[0]["assignmentId"] == [assignment_id]  # one post, naming the assignment
    response = Response.objects.select_related("worker").get()
    assert (response.worker.provider, response.worker.external_id.upper()) == ("mturk", "A1WORKERONE")
    assignment = ProviderAssignment.objects.get(external_id=assignment_id)
    assert assignment.state == ProviderAssignment.State.SUBMITTED and assignment.response_id == response.pk
    assert dialogs == []
