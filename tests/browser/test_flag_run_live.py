""""Recompute flags now" on the job page, in Chromium: the page answers at once with the flag run
queued, and the flags line follows it without a reload (static/progress.js on the job's
`job-flags-progress`) until it says the new flags were stored; "show them" loads the page again
with them. The worker is `test_background_export`'s gated thread, so the queued state is seen
before the in-process task runs."""
import pytest
from playwright.sync_api import expect

from annotation.models import FlagRun, JobFlagReport
from annotation.tasks import apply_worker_flags
from tests.browser.live import expect_followed_to, mark_this_page, still_this_page
from tests.browser.test_background_export import gated_worker  # noqa: F401 - a fixture
from tests.quality.test_flag_schedule import rushed_job

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_recompute_now_is_followed_on_the_job_page_without_a_reload(page, dialogs, organizer_login, gated_worker):  # noqa: F811
    job, _ = rushed_job()
    apply_worker_flags(job.pk)  # flags of an earlier run
    earlier = JobFlagReport.objects.get(job=job).computed_at
    organizer_login(f"/organize/jobs/{job.pk}/")
    page.get_by_role("button", name="Recompute flags now").click()

    line = page.locator("#flags-run")
    expect(line).to_contain_text("Recomputing worker flags: queued at")
    assert FlagRun.objects.get(job=job).status == FlagRun.Status.QUEUED
    mark_this_page(page)

    gated_worker["start"].set()  # the worker takes it
    expect_followed_to(page, line, "New flags were stored at", timeout=30_000)
    stored = JobFlagReport.objects.get(job=job).computed_at
    assert stored > earlier

    line.get_by_role("link", name="show them").click()
    expect(page.locator("#flags-computed")).to_contain_text("Worker flags computed at")
    expect(page.locator("#flags-run")).to_have_count(0)
    assert still_this_page(page) is None  # loaded again, with the new flags
    assert page.url.endswith("#flags-computed") and dialogs == []
