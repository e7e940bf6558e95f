"""A pairwise job's ranking page opened with a paragraph of method (Bradley-Terry, bootstrap, Holm,
tie groups and rank ranges): on a 390 px phone the ranking's first row began at 1,350 px, below
a screen and a half of text (on a laptop it fitted, under the method). The organizer came for the
ranking: its first row is now on the first screen, the method right under the table."""
import pytest
from playwright.sync_api import expect

from evaluation.models import PairwiseReport
from tests.evaluation.test_pairwise_report import pairwise_job, vote

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize(("width", "height"), [(1280, 720), (390, 844)])
def test_the_first_system_is_on_the_first_screen_and_the_method_follows_the_table(page, organizer_login, make_annotator, width, height):
    job = pairwise_job(4)
    vote(job, make_annotator("ann")[1], 12)
    assert PairwiseReport.objects.filter(job=job, status="succeeded").exists()  # each vote's task ran at its commit
    page.set_viewport_size({"width": width, "height": height})
    organizer_login(f"/evaluation/pairwise/{job.pk}/")
    first = page.locator("#ranking tbody tr").first
    expect(first).to_be_visible()
    box = first.bounding_box()
    assert box is not None and box["y"] + box["height"] <= height, f"the first row ends at {box and box['y'] + box['height']} px"
    method = page.locator("main p").filter(has_text="Bradley-Terry strengths from the comparisons that count")
    expect(method).to_have_count(1)
    expect(method).to_contain_text("Holm-adjusted")
    assert method.bounding_box()["y"] > page.locator("#ranking").bounding_box()["y"]
