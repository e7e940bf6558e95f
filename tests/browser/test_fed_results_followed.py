"""A FED set's page whose answers changed since its results were stored: it shows the stored results
marked as not current, follows the computation it asked for (queued, in the background) and, once
new results are stored, links to them; the page they lead to shows them without the mark."""
import pytest
from playwright.sync_api import expect

from annotation import task_types
from evaluation.fed.results import run_fed_results
from evaluation.fed.services import import_fed_static, launch_fed_job

from ..evaluation.test_fed_results_stored import STATIC, rate

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_page_follows_the_computation_of_new_results(page, organizer_login, make_annotator, queued_by_name):
    fed_set = import_fed_static(name="books", jsonl=STATIC, level="dialog")
    job = launch_fed_job(fed_set, raters=2)
    fields = [f for f in task_types.get("fed_dialog").answer_fields(job.settings) if f.get("choices")]
    rate(job, make_annotator("ann")[1], fields)
    run_fed_results(fed_set.pk)
    rate(job, make_annotator("bea")[1], fields, limit=1)

    organizer_login(f"/evaluation/fed/{fed_set.pk}/")
    expect(page.locator("#fed-results-note")).to_contain_text("the answers have changed since (9 count now): new ones are being computed")
    expect(page.locator("#fed-results-run")).to_contain_text("Computing the results: queued at")
    assert ("evaluation.tasks.compute_fed_results", fed_set.pk) in queued_by_name  # queued, not run in the request

    run_fed_results(fed_set.pk)  # the worker
    expect(page.locator("#fed-results-run")).to_contain_text("New results were stored", timeout=20_000)
    page.locator("#fed-results-run-new").click()
    expect(page.locator("#fed-results")).to_be_visible()
    expect(page.locator("#fed-results-note")).to_have_count(0)
    assert fed_set.results.get().answers == 9
