"""An organizer turns adaptive rating on from a campaign's page in a real browser: the browser
keeps an out-of-range value from being sent, the server's own refusal (a top k larger than the
entries) comes back on the form, and good settings are saved."""
import pytest
from playwright.sync_api import expect

from evaluation.campaigns.services.campaigns import create_campaign
from evaluation.models import Campaign

from ..evaluation.test_adaptive_campaign import _write_test_set

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_organizer_turns_adaptive_rating_on_from_the_page(page, dialogs, organizer_login, tmp_path):
    test_set, entries = _write_test_set(tmp_path / "data")
    campaign = create_campaign("adaptive from the page", test_set, entries)
    organizer_login(f"/evaluation/{campaign.pk}/")
    form = page.locator("#adaptive-settings form")
    expect(form).to_contain_text("Instances added per round")

    form.get_by_label("Adaptive rating").check()
    form.get_by_label("Top k").fill("9")
    form.get_by_label("Ratings budget").fill("500")
    form.get_by_label("Round size").fill("40")
    form.get_by_role("button", name="Save adaptive settings").click()
    expect(page.locator("#adaptive-settings")).to_contain_text("top k must be a whole number from 1 to the campaign's 4 ranked entries")
    assert Campaign.objects.get(pk=campaign.pk).adaptive is False

    form = page.locator("#adaptive-settings form")
    form.get_by_label("Confidence").fill("1.5")  # past the field's max: the browser does not send it
    form.get_by_label("Top k").fill("2")
    form.get_by_role("button", name="Save adaptive settings").click()
    assert Campaign.objects.get(pk=campaign.pk).adaptive is False
    form.get_by_label("Confidence").fill("0.9")
    form.get_by_role("button", name="Save adaptive settings").click()
    expect(page.locator("body")).to_contain_text("Adaptive rating is on")
    page.screenshot(path=str(tmp_path / "adaptive-settings.png"), full_page=True)
    saved = Campaign.objects.get(pk=campaign.pk)
    assert (saved.adaptive, saved.adaptive_confidence, saved.adaptive_top_k, saved.adaptive_budget, saved.adaptive_round_size) == (True, 0.9, 2, 500, 40)
    assert dialogs == []
