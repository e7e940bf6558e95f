""""Compute results" on the campaign page, in Chromium: the page answers at once with the computation
queued, and the results line follows it without a reload (static/progress.js on the campaign's
results-run endpoint) until it says the new results were stored; "show them" loads the page again
with the leaderboard. The worker is `test_background_export`'s gated thread, so the queued state is
seen before the in-process task runs."""
import pytest
from playwright.sync_api import expect

from evaluation.campaigns.services.campaigns import create_campaign
from evaluation.campaigns.services.imports import import_human_eval, import_test_set
from evaluation.models import CampaignResult, CampaignResultsRun
from tests.browser.live import mark_this_page, still_this_page
from tests.browser.test_background_export import gated_worker  # noqa: F401 - a fixture
from tests.evaluation.conftest import DSTC9

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_compute_results_is_followed_on_the_campaign_page_without_a_reload(page, dialogs, organizer_login, gated_worker):  # noqa: F811
    test_set = import_test_set("DSTC9 Track 1", "test", DSTC9 / "labels.json", DSTC9 / "knowledge.json")
    campaign = create_campaign("human-eval", test_set, [])
    import_human_eval(campaign, DSTC9 / "human_eval")
    organizer_login(f"/evaluation/{campaign.pk}/")
    expect(page.locator("#leaderboard")).to_have_count(0)
    page.locator("#campaign-actions").get_by_role("button", name="Compute results").click()

    expect(page.locator(".messages")).to_contain_text("Results are being computed")
    line = page.locator("#results-run")
    expect(line).to_contain_text("Computing the results: queued at")
    assert CampaignResultsRun.objects.get(campaign=campaign).status == CampaignResultsRun.Status.QUEUED
    mark_this_page(page)

    gated_worker["start"].set()  # the worker takes it
    # The page said "No results yet": it shows the first results by itself, not a link beside that line.
    expect(page.locator("#leaderboard tbody tr")).to_have_count(campaign.entries.count(), timeout=60_000)
    assert CampaignResult.objects.filter(campaign=campaign).count() == 1
    expect(page.locator("#no-results")).to_have_count(0)
    expect(page.locator("#results-run")).to_have_count(0)
    assert still_this_page(page) is None  # loaded again, with the results
    assert dialogs == []
