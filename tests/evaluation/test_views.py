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


def test_results_page_shows_both_plots_drawn_from_the_stored_report(organizer, campaign, client):
    from django.http import Http404
    from django.urls import reverse

    with pytest.raises(Http404):
        get(organizer, views.campaign_plot, pk=campaign.pk, kind="scores")  # nothing computed yet
    compute_campaign_results(campaign.pk)
    page = get(organizer, views.campaign_results, pk=campaign.pk).content.decode()
    for kind in ("scores", "ratings"):
        url = reverse("evaluation:campaign-plot", args=[campaign.pk, kind])
        assert url in page
        client.force_login(organizer)
        png = client.get(url)
        assert png.status_code == 200 and png["Content-Type"] == "image/png"
        assert png.content.startswith(b"\x89PNG")
    assert client.get(reverse("evaluation:campaign-plot", args=[campaign.pk, "pie"])).status_code == 404
    assert CampaignResult.objects.count() == 1  # drawing did not recompute
