"""A later round (raters added to a live Prolific job) that the budget cannot carry is not posted; the
builder reads so on the job page and in the API, with the cost and the budget that carries it, and
raising the budget that far posts it (a live job at once, a paused one when it resumes)."""
import html
import re

import pytest
from django.test import TestCase
from rest_framework.test import APIClient

from annotation.models import Item, Job
from annotation.services.extra_slots import add_slots
from annotation.services.jobs import launch_job, pause_job
from hits.models import Posting
from hits.services.config import configure_crowd
from hits.services.postings import launch_crowd_job, post_job


@pytest.fixture(autouse=True)
def _project_urls(settings):
    settings.ROOT_URLCONF = "quorum.urls"  # the organizer pages live in the project's URLs


@pytest.fixture
def api(organizer):
    client = APIClient()
    client.force_authenticate(organizer)
    return client


def _note_on_page(client, job):
    body = client.get(f"/organize/jobs/{job.pk}/").content.decode()
    found = re.search(r'id="crowd-unposted">(.*?)</td>', body, re.S)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", found.group(1))).split()) if found else None


def _round_beyond_the_budget(job):
    configure_crowd(job, provider="prolific", budget="3.00", prolific_fee_rate="0.3333")
    launch_crowd_job(job)
    post_job(job, concurrency=1)  # 4 places: $2.00 + $0.67 = $2.67 of $3.00
    with TestCase.captureOnCommitCallbacks(execute=True):  # a second rater on every item: 4 more places
        add_slots(job, {pk: 1 for pk in Item.objects.filter(job=job).values_list("pk", flat=True)})


def _postings(job):
    return list(Posting.objects.filter(job=job).order_by("seq").values_list("assignments", "state"))


def _raise_budget(api, job, budget):
    with TestCase.captureOnCommitCallbacks(execute=True):  # the post the raise queues runs here (tasks run eagerly)
        answer = api.put(f"/api/crowd/jobs/{job.pk}/", {"budget": budget}, format="json")
    assert answer.status_code == 200, answer.content
    return answer.json()


def test_a_round_beyond_the_budget_is_said_and_posted_once_the_budget_is_raised_that_far(api, client, organizer, fake_prolific, job_factory):
    client.force_login(organizer)
    job = job_factory(turns=4, reward="0.50")
    configure_crowd(job, provider="prolific", budget="3.00", prolific_fee_rate="0.3333")
    launch_crowd_job(job)
    post_job(job, concurrency=1)
    job.refresh_from_db()
    assert api.get(f"/api/crowd/jobs/{job.pk}/").json()["unposted"] is None and _note_on_page(client, job) is None

    with TestCase.captureOnCommitCallbacks(execute=True):
        add_slots(job, {pk: 1 for pk in Item.objects.filter(job=job).values_list("pk", flat=True)})
    assert Posting.objects.filter(job=job).count() == 1  # $2.67 more does not fit in the $0.33 left
    said = ("4 slots of this job are not posted to Prolific: posting them costs $2.67 with fees and the budget has "
            "$0.33 left. Raise the budget to at least $5.34: they are posted as soon as it carries them.")
    unposted = api.get(f"/api/crowd/jobs/{job.pk}/").json()["unposted"]
    assert unposted == {"slots": 4, "cost": "2.67", "left": "0.33", "note": said}
    assert _note_on_page(client, job) == said

    # Not far enough: nothing is posted, and the note says what is left now.
    assert _raise_budget(api, job, "5.00")["unposted"]["left"] == "2.33"
    assert _postings(job) == [(4, Posting.State.CREATED)]

    _raise_budget(api, job, "5.34")  # what the note asked for: posted with no other step
    assert _postings(job) == [(4, Posting.State.CREATED), (4, Posting.State.CREATED)]
    overview = api.get(f"/api/crowd/jobs/{job.pk}/").json()
    assert overview["unposted"] is None and overview["committed"] == "5.34" and _note_on_page(client, job) is None


def test_a_paused_jobs_round_is_posted_when_it_resumes_not_when_the_budget_is_raised(api, client, organizer, fake_prolific, job_factory):
    client.force_login(organizer)
    job = job_factory(turns=4, reward="0.50")
    _round_beyond_the_budget(job)
    pause_job(Job.objects.get(pk=job.pk))
    assert _note_on_page(client, job).endswith("Raise the budget to at least $5.34: they are posted when you resume the job.")

    _raise_budget(api, job, "6.00")
    assert _postings(job) == [(4, Posting.State.CREATED)]  # paused: no worker should find a new study now

    launch_job(Job.objects.get(pk=job.pk))  # Resume: reserves the round within the new budget
    post_job(job, concurrency=1)
    assert _postings(job) == [(4, Posting.State.CREATED), (4, Posting.State.CREATED)]
    assert api.get(f"/api/crowd/jobs/{job.pk}/").json()["unposted"] is None and _note_on_page(client, job) is None
