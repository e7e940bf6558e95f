"""Campaigns are not dead ends (issue 23): renamed from their page, deleted while nothing depends on
them; otherwise the refusal names what depends on the campaign and what to do, and nothing changes."""
import pytest
from django.urls import reverse

from evaluation.campaigns.services.campaigns import create_campaign
from evaluation.campaigns.services.crowd import create_crowd_job
from evaluation.campaigns.services.lifecycle import delete_campaign, rename_campaign
from evaluation.errors import EvaluationInputError
from evaluation.models import Campaign, Entry, TestSet

from .test_adaptive_campaign import _write_test_set

pytestmark = pytest.mark.django_db


@pytest.fixture
def plain_campaign(tmp_path):
    test_set, entries = _write_test_set(tmp_path / "data")
    return create_campaign("pilot", test_set, entries)


def test_a_campaign_is_renamed_and_a_taken_or_blank_name_is_refused(plain_campaign, test_set):
    other = create_campaign("other", test_set, [])
    assert rename_campaign(plain_campaign, "  Pilot   round 2 ").name == "Pilot round 2"
    for bad, message in (("other", "another campaign is called 'other'"), ("   ", "give the campaign a name"), ("x" * 201, "at most 200")):
        with pytest.raises(EvaluationInputError, match=message):
            rename_campaign(plain_campaign, bad)
    assert Campaign.objects.get(pk=plain_campaign.pk).name == "Pilot round 2"
    assert Campaign.objects.get(pk=other.pk).name == "other"


def test_a_campaign_nothing_depends_on_is_deleted_and_its_test_set_and_entries_stay(plain_campaign):
    entries = set(plain_campaign.entries.values_list("pk", flat=True))
    assert delete_campaign(plain_campaign) == "pilot"
    assert not Campaign.objects.filter(pk=plain_campaign.pk).exists()
    assert TestSet.objects.filter(pk=plain_campaign.test_set_id).exists()
    assert set(Entry.objects.filter(pk__in=entries).values_list("pk", flat=True)) == entries


def test_imported_ratings_keep_a_campaign_and_the_refusal_says_what_to_do(campaign):
    with pytest.raises(EvaluationInputError) as refused:
        delete_campaign(campaign)
    assert "imported ratings belong to it" in str(refused.value) and "rename it" in str(refused.value)
    assert Campaign.objects.filter(pk=campaign.pk).exists() and campaign.ratings.exists()


def test_a_crowd_job_keeps_a_campaign(plain_campaign):
    crowd = create_crowd_job(plain_campaign, redundancy=1)
    with pytest.raises(EvaluationInputError, match=f"its crowd job “{crowd.job.name}”"):
        delete_campaign(plain_campaign)
    assert Campaign.objects.filter(pk=plain_campaign.pk).exists()


def test_the_page_renames_and_deletes_and_says_why_it_cannot(client, organizer, plain_campaign, campaign):
    client.force_login(organizer)
    page = client.get(reverse("evaluation:campaign-results", args=[plain_campaign.pk])).content.decode()
    assert 'id="rename-form"' in page and 'id="delete-form"' in page
    renamed = client.post(reverse("evaluation:campaign-rename", args=[plain_campaign.pk]), {"name": "human-eval"}, follow=True)
    assert "Not renamed: another campaign is called &#x27;human-eval&#x27;" in renamed.content.decode()
    client.post(reverse("evaluation:campaign-rename", args=[plain_campaign.pk]), {"name": "Pilot B"})
    assert Campaign.objects.get(pk=plain_campaign.pk).name == "Pilot B"

    unconfirmed = client.post(reverse("evaluation:campaign-delete", args=[plain_campaign.pk]), {}, follow=True)
    assert "tick “Yes, delete” to confirm" in unconfirmed.content.decode()
    assert Campaign.objects.filter(pk=plain_campaign.pk).exists()
    deleted = client.post(reverse("evaluation:campaign-delete", args=[plain_campaign.pk]), {"confirm": "1"}, follow=True)
    assert "Deleted the campaign “Pilot B”" in deleted.content.decode()
    assert not Campaign.objects.filter(pk=plain_campaign.pk).exists()

    kept = client.get(reverse("evaluation:campaign-results", args=[campaign.pk])).content.decode()
    assert 'id="delete-blocked"' in kept and 'id="delete-form"' not in kept and "imported ratings belong to it" in kept
    refused = client.post(reverse("evaluation:campaign-delete", args=[campaign.pk]), {"confirm": "1"}, follow=True)
    assert "Not deleted: campaign &#x27;human-eval&#x27;: " in refused.content.decode()
    assert Campaign.objects.filter(pk=campaign.pk).exists()
