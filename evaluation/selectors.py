"""Reads for the evaluation app. Pages read stored results; nothing here computes statistics."""
from .models import Campaign, CampaignResult


def campaigns():
    return Campaign.objects.select_related("test_set__challenge").order_by("-created_at")


def current_result(campaign: Campaign):
    """The stored result for the campaign's current inputs, or None (then the page says it is
    being computed or stale, and shows the latest older result if any)."""
    return CampaignResult.objects.filter(campaign=campaign, inputs_version=campaign.inputs_version).first()


def latest_result(campaign: Campaign):
    return CampaignResult.objects.filter(campaign=campaign).order_by("-computed_at").first()
