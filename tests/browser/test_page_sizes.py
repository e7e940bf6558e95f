"""Organizer pages fit their readers: the campaign page is no wider than a 390 px phone, and page
heights at 1280 px wide are measured (and printed: `pytest -s` shows them for the closing note)."""
import pytest

from tests.evaluation.conftest import DSTC9

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def campaign(tmp_path):
    from evaluation.campaigns.services.campaigns import create_campaign
    from evaluation.campaigns.services.imports import import_human_eval, import_test_set

    test_set = import_test_set("DSTC9 Track 1", "test", DSTC9 / "labels.json", DSTC9 / "knowledge.json")
    campaign = create_campaign("human-eval", test_set, [])
    import_human_eval(campaign, DSTC9 / "human_eval")
    return campaign


def _size(page):
    return page.evaluate("[document.documentElement.scrollWidth, document.documentElement.scrollHeight]")


def test_the_campaign_page_fits_a_phone_and_pages_are_measured(page, organizer_login, campaign):
    organizer_login(f"/evaluation/{campaign.pk}/")
    page.wait_for_load_state("networkidle")
    url = page.url
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(url)
    width, _height = _size(page)
    assert width <= 390, f"the campaign page is {width} px wide on a 390 px phone"
    page.set_viewport_size({"width": 1280, "height": 900})
    sizes = {}
    for path in ("/organize/", "/organize/jobs/new/", "/evaluation/", f"/evaluation/{campaign.pk}/"):
        page.goto(path)
        sizes[path] = _size(page)[1]
    print("PAGE HEIGHTS at 1280 px:", sizes)
    assert all(h <= 5000 for h in sizes.values()), sizes
