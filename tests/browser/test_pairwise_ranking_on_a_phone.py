"""A pairwise job's ranking on a 390 px phone: each system is a card with its log-strength and
interval, rank range and wins in view, each figure named. Before, the table scrolled inside itself:
the log-strength column squeezed to three lines and Wins cut at the screen's edge, Losses, Ties and
Comparisons out of sight; the style-controlled table the same."""
import pytest
from playwright.sync_api import expect

from evaluation.models import PairwiseReport
from tests.evaluation.test_pairwise_report import pairwise_job, vote

from .test_interactive_leaderboard_on_a_phone import expect_in_view

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_each_system_of_both_rankings_is_a_card_in_view_on_a_phone(page, organizer_login, make_annotator):
    job = pairwise_job(4)
    vote(job, make_annotator("ann")[1], 12)
    report = PairwiseReport.objects.filter(job=job, status="succeeded").latest("pk")  # each vote's task ran at its commit
    page.set_viewport_size({"width": 390, "height": 844})
    organizer_login(f"/evaluation/pairwise/{job.pk}/")
    best = report.report["rows"][0]
    row = page.locator("#ranking tbody tr").first
    for cell in (row.locator("td").nth(3), row.locator("td").last):  # the log-strength and the comparisons
        box = cell.bounding_box()
        assert box is not None and box["x"] + box["width"] <= 390, box
    expect_in_view(row, "Rank range", "System", "Log-strength [95% CI]", "Wins", "Losses", "Ties", "Comparisons")
    expect(row.locator('td[data-label="System"]')).to_have_text(best["system"])
    expect(row.locator('td[data-label="Wins"]')).to_have_text(str(best["wins"]))
    styled = page.locator("#style-ranking tbody tr").first
    expect_in_view(styled, "Rank range", "System", "Log-strength [95% CI]", "Raw rank range")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
