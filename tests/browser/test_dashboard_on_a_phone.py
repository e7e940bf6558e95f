"""The dashboard on a 390 px phone: each job is a card whose state and responses are in view, each
figure named. Before, the jobs table scrolled inside itself and its State column was cut off at the
screen's edge, the responses out of sight."""
import pytest
from playwright.sync_api import expect

from tests.factories import make_corpus, make_live_job

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_job_state_and_responses_are_in_view_on_a_phone(page, dialogs, organizer_login):
    make_live_job(make_corpus(dialogs=1, user_turns=2), name="RADDLE MultiWOZ val rewrites")
    page.set_viewport_size({"width": 390, "height": 844})
    organizer_login("/organize/")
    row = page.locator("#jobs tbody tr").first
    for cell in (row.locator(".state"), row.locator("td[data-label=Responses]")):
        expect(cell).to_be_visible()
        box = cell.bounding_box()
        assert box is not None and box["x"] + box["width"] <= 390
    expect(row.locator("td[data-label=Responses]")).to_contain_text("0 / 2")
    assert dialogs == []
