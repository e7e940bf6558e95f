"""The crowd estimate is the cost of every slot the job has: raters added to a live job count as much as the
first round (it was items x redundancy, so after a second round the page said "$2.68 for 4 assignments"
beside "$6.03 reserved on Prolific for 9 places"). What is posted is priced as its postings reserved it, so
once every slot is posted the estimate and the reservation say the same amount; page and API agree, on
every provider."""
import html
import re

import pytest
from django.test import TestCase

from annotation.models import Item
from annotation.services.extra_slots import add_slots
from hits.models import JobCrowdConfig, Posting
from hits.services.config import configure_crowd
from hits.services.postings import launch_crowd_job, post_job

pytestmark = pytest.mark.usefixtures("project_urls")  # the organizer pages live in the project's URLs


def _row(client, job, row_id):
    body = client.get(f"/organize/jobs/{job.pk}/").content.decode()
    found = re.search(rf'id="{row_id}">(.*?)</td>', body, re.S)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", found.group(1))).split())


def _add_a_rater_to_every_item(job):
    with TestCase.captureOnCommitCallbacks(execute=True):  # the round is posted as a live job's is
        add_slots(job, {pk: 1 for pk in Item.objects.filter(job=job).values_list("pk", flat=True)})


# provider, its settings, the fixture of its fake, and what 8 places at $0.50 cost in two rounds of 4:
# Prolific 33.33% on each study's $2.00 ($0.67 twice, where one study of 8 would be $1.33 of fees),
# MTurk 20% on each assignment, in-house the rewards alone.
PROVIDERS = {
    "prolific": ({"prolific_fee_rate": "0.3333"}, "fake_prolific", ("4.00", "1.34", "5.34")),
    "mturk": ({}, "fake_mturk", ("4.00", "0.80", "4.80")),
    "inhouse": ({}, None, ("4.00", "0.00", "4.00")),
}


@pytest.mark.parametrize("provider", list(PROVIDERS))
def test_raters_added_to_a_live_job_are_in_the_estimate_page_and_api_alike(provider, request, organizer_api, client, organizer, job_factory):
    options, fake, (rewards, fees, total) = PROVIDERS[provider]
    if fake:
        request.getfixturevalue(fake)
    client.force_login(organizer)
    job = job_factory(turns=4, reward="0.50")
    configure_crowd(job, provider=provider, budget="20.00", **options)
    launch_crowd_job(job)
    post_job(job, concurrency=1)
    job.refresh_from_db()
    _add_a_rater_to_every_item(job)
    assert list(Posting.objects.filter(job=job).order_by("seq").values_list("assignments", flat=True)) == [4, 4]

    estimate = organizer_api.get(f"/api/crowd/jobs/{job.pk}/").json()["estimate"]
    assert (estimate["assignments"], estimate["postings"]) == (8, 2)
    assert (estimate["rewards"], estimate["fees"], estimate["total"]) == (rewards, fees, total)
    # Everything is posted: the estimate is what the postings reserved, on the page beside the reservation.
    assert str(JobCrowdConfig.objects.get(job=job).committed) == total
    said = _row(client, job, "crowd-estimate")
    assert said.startswith(f"${total} for 8 assignments in 2 postings: ${rewards} rewards + ${fees} fees")
    assert "more than the budget allows" not in said
    assert _row(client, job, "crowd-committed").startswith(f"${total} ($")


def test_a_round_the_budget_cannot_post_is_in_the_estimate_and_said_to_exceed_it(organizer_api, client, organizer, fake_prolific, job_factory):
    client.force_login(organizer)
    job = job_factory(turns=4, reward="0.50")
    configure_crowd(job, provider="prolific", budget="3.00", prolific_fee_rate="0.3333")
    launch_crowd_job(job)
    post_job(job, concurrency=1)  # 4 places: $2.67 of $3.00
    job.refresh_from_db()
    _add_a_rater_to_every_item(job)  # 4 more would cost $2.67: not posted
    assert Posting.objects.filter(job=job).count() == 1

    overview = organizer_api.get(f"/api/crowd/jobs/{job.pk}/").json()
    assert overview["estimate"]["assignments"] == 8 and overview["estimate"]["total"] == "5.34"
    assert overview["committed"] == "2.67" and overview["unposted"]["cost"] == "2.67"
    said = _row(client, job, "crowd-estimate")
    assert said.startswith("$5.34 for 8 assignments in 2 postings") and "more than the budget allows" in said
