"""The organizer dashboard's recent exports follow a running run in Chromium without a reload: the
row shows it running with its share done, then, once the run has ended, its status and files
(the run's row is moved on in the database here, as a worker would)."""
import pytest
from playwright.sync_api import expect

from annotation.models import ExportRun, RunStatus
from annotation.services.jobs import create_job
from tests.browser.live import mark_this_page, still_this_page
from tests.factories import make_corpus

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_running_export_on_the_dashboard_updates_by_itself(page, dialogs, organizer_login):
    job = create_job(corpus=make_corpus(), name="watched job", redundancy=1)
    run = ExportRun.objects.create(job=job, status=RunStatus.RUNNING, done=1, total=4)
    organizer_login("/organize/")
    row = page.locator(f"#dashboard-export-{run.pk}")
    expect(row).to_contain_text("Running")
    expect(row.locator("progress")).to_be_visible()
    mark_this_page(page)

    ExportRun.objects.filter(pk=run.pk).update(done=3)
    expect(row).to_contain_text("75%")
    ExportRun.objects.filter(pk=run.pk).update(status=RunStatus.SUCCEEDED, done=4, files=["responses.csv", "items.csv"])
    expect(row).to_contain_text("Succeeded")
    expect(row.locator("progress")).to_have_count(0)
    expect(row.locator("td").nth(2)).to_have_text("2")
    assert still_this_page(page) is True and dialogs == []
