"""A later round (raters added to a live Prolific job) that the budget cannot carry is not posted; the
builder reads so on the job page and in the API, with the cost and what to do, and doing it posts it."""
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


def test_a_round_beyond_the_budget_is_said_and_posted_once_the_budget_carries_it(api, client, organizer, fake_prolific, job_factory):
    client.force_login(organizer)
    job = job_factory(turns=4, reward="0.50")
    configure_crowd(job, provider="prolific", budget="3.00", prolific_fee_rate="0.3333")
    launch_crowd_job(job)
    post_job(job, concurrency=1)  # 4 places: $2.00 + $0.67 = $2.67 of $3.00
    job.refresh_from_db()
    assert api.get(f"/api/crowd/jobs/{job.pk}/").json()["unposted"] is None and _note_on_page(client, job) is None

    with TestCase.captureOnCommitCallbacks(execute=True):  # a second rater on every item: 4 more places
        add_slots(job, {pk: 1 for pk in Item.objects.filter(job=job).values_list("pk", flat=True)})
    assert Posting.objects.filter(job=job).count() == 1  # $2.67 more does not fit in the $0.33 left
    said = ("4 slots of this job are not posted to Prolific: posting them costs $2.67 with fees and the budget has "
            "$0.33 left. Raise the budget, then pause and resume the job to post them.")
    unposted = api.get(f"/api/crowd/jobs/{job.pk}/").json()["unposted"]
    assert unposted == {"slots": 4, "cost": "2.67", "left": "0.33", "note": said}
    assert _note_on_page(client, job) == said

    configure_crowd(job, budget="6.00")
    pause_job(Job.objects.get(pk=job.pk))
    launch_job(Job.objects.get(pk=job.pk))  # Resume: reserves the round within the new budget
    post_job(job, concurrency=1)
    assert list(Posting.objects.filter(job=job).order_by("seq").values_list("assignments", "state")) == [
        (4, Posting.State.CREATED), (4, Posting.State.CREATED)
    ]
    assert api.get(f"/api/crowd/jobs/{job.pk}/").json()["unposted"] is None and _note_on_page(client, job) is None
