"""A test set's "leaderboard with human evaluation" (the campaigns page's link for each test set)
leads with the campaigns whose ratings rank its entries, before the live-chat table.

Organizer walk on DSTC9 Track 1: the test set's leaderboard page showed its 106 entries by team
name, each with "—" and "no chat evaluation yet", and "No scheduled human evaluation for this test
set", while the campaign of its 123,888 ratings ranked them (team19/entry2 4.392 [4.362, 4.418]):
nothing on the page named or linked that campaign."""
import re

import pytest
from django.urls import reverse

from evaluation.campaigns.services.campaigns import compute_campaign_results

pytestmark = pytest.mark.django_db


def test_the_test_sets_leaderboard_page_leads_with_its_rating_campaigns(campaign, client, organizer):
    client.force_login(organizer)
    url = reverse("evaluation:scheduled-leaderboard", args=[campaign.test_set.pk])
    link = reverse("evaluation:campaign-results", args=[campaign.pk])

    page = client.get(url).content.decode()
    assert page.index(f'href="{link}"') < page.index('id="scheduled-leaderboard"')
    lead = re.search(r'<section id="rating-campaigns".*?</section>', page, re.S).group(0)
    assert f">{campaign.name}</a>" in lead and "no results yet" in lead

    compute_campaign_results(campaign.pk)
    lead = re.search(r'<section id="rating-campaigns".*?</section>', client.get(url).content.decode(), re.S).group(0)
    assert "results current" in lead and f"{campaign.ratings.count()} ratings" in lead
