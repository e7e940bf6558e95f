"""The interactive leaderboard on a 390 px phone: each system is a card with its final score and
interval in view, each figure named. Before, the table scrolled inside itself and showed Rank, Rank
range, System and Dialogs, the scores cut off at the screen's edge."""
import pytest
from playwright.sync_api import expect

from evaluation.interactive.services.chats import create_chat_job
from evaluation.interactive.services.systems import register_system
from evaluation.interactive.systems.reference import ReferenceSystem
from tests.evaluation.systems import chinese_centre_goals, running
from tests.evaluation.test_interactive import _dialog

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SECRET = "a-secret-of-twenty-chars"


def expect_in_view(row, *labels):
    """Each named cell of the row is shown whole within the phone's 390 px."""
    for label in labels:
        cell = row.locator(f'td[data-label="{label}"]')
        expect(cell).to_be_visible()
        box = cell.bounding_box()
        assert box is not None and box["x"] + box["width"] <= 390, label


def test_each_system_final_score_is_in_view_on_a_phone(page, organizer_login, make_annotator):
    goals = chinese_centre_goals()
    with running(ReferenceSystem(SECRET)) as url:
        system = register_system(name="team-phone", url=url, secret=SECRET)
        job = create_chat_job(name="Chat on a phone", systems=[system], goal_set=goals)
        _dialog(job, make_annotator("w"), ["I want chinese food in the centre", "book it for 2 people"])
    page.set_viewport_size({"width": 390, "height": 844})
    organizer_login(f"/evaluation/interactive/{job.pk}/")
    row = page.locator("#interactive-ranking tbody tr").first
    expect_in_view(row, "System", "Final [95% CI]", "Failed calls")
    expect(row.locator('td[data-label="Final [95% CI]"]')).to_contain_text("1.000 [")


def test_each_system_state_is_in_view_on_a_phone(page, organizer_login):
    """The systems page on a phone: before, the table showed System and URL with a screen of blank
    rows above them, its contract check and state cut off; each system is now a card."""
    with running(ReferenceSystem(SECRET)) as url:
        register_system(name="team-phone", url=url, secret=SECRET)
    page.set_viewport_size({"width": 390, "height": 844})
    organizer_login("/evaluation/systems/")
    row = page.locator("#systems tbody tr").first
    expect_in_view(row, "System", "Contract check", "State")
    expect(row.locator('td[data-label="State"]')).to_contain_text("running")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
