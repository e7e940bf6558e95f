"""An organizer who launched a pairwise job from its page, and came back to it as votes arrived,
found no way from there to the ranking: the job page linked its review queue, preview, quality and
exports, and a chat job's page its leaderboard, but the ranking of a pairwise job was only reached
through Evaluation's list. The job page now links it (annotation's `job_links`); a job that compares
no systems gets no such link."""
import pytest
from playwright.sync_api import expect

from annotation.services.jobs import launch_job
from annotation.services.payload_jobs import create_payload_job
from tests.evaluation.test_pairwise_report import pairwise_job, vote

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_job_page_links_its_ranking(page, organizer_login, make_annotator):
    job = pairwise_job(3, name="Parking pairs")
    vote(job, make_annotator("ann")[1], 9)
    organizer_login(f"/organize/jobs/{job.pk}/")
    link = page.get_by_role("link", name="Ranking: the systems ranked from these comparisons")
    expect(link).to_have_count(1)
    link.click()
    expect(page.get_by_role("heading", name="Parking pairs: systems ranked by pairwise comparison")).to_be_visible()
    expect(page.locator("#ranking tbody tr")).to_have_count(3)


def test_a_job_that_compares_no_systems_has_no_ranking_link(page, organizer_login):
    job = launch_job(create_payload_job(name="Paraphrases", task_type="qa_paraphrase", payloads=[{"id": "q1", "question": "Is there parking?", "answer": "Yes."}]))
    organizer_login(f"/organize/jobs/{job.pk}/")
    expect(page.locator("#job-state")).to_be_visible()
    expect(page.get_by_role("link", name="Ranking: the systems ranked from these comparisons")).to_have_count(0)
