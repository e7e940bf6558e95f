"""A draft job is no dead end: from the dashboard an organizer opens it, changes its name and
reward, and deletes it; a live job offers neither."""
import pytest
from playwright.sync_api import expect

from annotation.models import Job
from annotation.services.payload_jobs import create_payload_job

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PAIR = {"context": [{"speaker": "user", "text": "Hi"}], "a": {"system": "A", "text": "x"}, "b": {"system": "B", "text": "y"}}


def test_a_draft_is_edited_then_deleted_from_its_page(page, dialogs, organizer_login):
    job = create_payload_job(name="Pairs v1", task_type="pairwise", payloads=[PAIR])
    organizer_login("/organize/")
    page.get_by_role("link", name="Pairs v1").first.click()
    page.get_by_text("Edit or delete this draft").click()
    page.locator("#draft-name").fill("Pairs v2")
    page.locator("#draft-reward").fill("0.75")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.locator("h1")).to_have_text("Pairs v2")
    job.refresh_from_db()
    assert str(job.reward) == "0.75"
    page.get_by_text("Edit or delete this draft").click()
    page.locator("#draft-reward").fill("-1")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.locator("body")).to_contain_text("Not saved")
    page.get_by_text("Edit or delete this draft").click()
    page.locator("#draft-delete").click()  # not confirmed: the browser asks for the box, nothing is posted
    expect(page.locator("#draft-delete-confirm")).to_be_focused()
    assert Job.objects.filter(pk=job.pk).exists()
    page.get_by_label("Yes, delete “Pairs v2” and its 1 item").check()
    page.locator("#draft-delete").click()
    expect(page.locator("body")).to_contain_text("Deleted the draft job 'Pairs v2'")
    assert not Job.objects.filter(pk=job.pk).exists()
    assert dialogs == []
