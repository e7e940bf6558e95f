"""Campaign pages: organizers only, and they read stored results without computing."""
import pytest
from django.core.exceptions import PermissionDenied
from django.test import RequestFactory

from evaluation import views
from evaluation.models import CampaignResult
from evaluation.services import compute_campaign_results

pytestmark = pytest.mark.django_db


def get(user, view, **kwargs):
    request = RequestFactory().get("/")
    request.user = user
    return view(request, **kwargs)


def test_results_page_shows_the_stored_leaderboard(organizer, campaign):
    response = get(organizer, views.campaign_results, pk=campaign.pk)
    assert b"No results yet" in response.content
    assert not CampaignResult.objects.exists()  # the page did not compute anything
    compute_campaign_results(campaign.pk)
    campaign.refresh_from_db()
    page = get(organizer, views.campaign_results, pk=campaign.pk).content.decode()
    assert "team1/entry1" in page and "ground-truth/labels (ground_truth)" in page and "ordinal" in page


def test_annotators_are_refused(make_annotator, campaign):
    user, _ = make_annotator("ann")
    with pytest.raises(PermissionDenied):
        get(user, views.campaign_results, pk=campaign.pk)
    with pytest.raises(PermissionDenied):
        get(user, views.campaign_list)
