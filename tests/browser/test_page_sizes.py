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
    from evaluation.campaigns.services.campaigns import compute_campaign_results

    compute_campaign_results(campaign.pk, bootstrap=1000)  # the page with its leaderboard, as a reader meets it
    return campaign


def _size(page):
    return page.evaluate("[document.documentElement.scrollWidth, document.documentElement.scrollHeight]")


def test_the_campaign_page_fits_a_phone_and_pages_are_measured(page, organizer_login, campaign, make_annotator, tmp_path):
    from annotation.services.payload_jobs import create_payload_job

    pair = {"context": [{"speaker": "user", "text": "Hi"}], "a": {"system": "A", "text": "x"}, "b": {"system": "B", "text": "y"}}
    job = create_payload_job(name="Pairs", task_type="pairwise", payloads=[pair] * 10)
    organizer_login(f"/evaluation/{campaign.pk}/")
    page.wait_for_load_state("networkidle")
    url = page.url
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(url)
    width, _height = _size(page)
    assert width <= 390, f"the campaign page is {width} px wide on a 390 px phone"
    page.set_viewport_size({"width": 1280, "height": 900})
    sizes = {}
    pages = (
        "/organize/", "/organize/jobs/new/", f"/organize/jobs/{job.pk}/", f"/organize/jobs/{job.pk}/review/", "/organize/team/",
        "/evaluation/", f"/evaluation/{campaign.pk}/", "/evaluation/systems/", f"/evaluation/pairwise/{job.pk}/",
    )
    for path in pages:
        page.goto(path)
        sizes[path] = _size(page)[1]
        if path == f"/evaluation/{campaign.pk}/":
            page.screenshot(path=tmp_path / "campaign-page.png", full_page=True)
            assert page.locator("#results").bounding_box()["y"] < 600  # the results lead the page
    print("PAGE HEIGHTS at 1280 px:", sizes)
    assert all(h <= 5000 for h in sizes.values()), sizes
