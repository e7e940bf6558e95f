"""An organizer turns adaptive rating on from the campaign page: the form (help text on every
field) calls `set_adaptive`; a bad post is answered with what to fix and writes nothing; once the
crowd job exists the settings are fixed."""
import pytest
from django.urls import reverse

from evaluation.campaigns.forms import AdaptiveForm
from evaluation.campaigns.services.campaigns import create_campaign
from evaluation.campaigns.services.crowd import create_crowd_job
from evaluation.models import Campaign

from .test_adaptive_campaign import _write_test_set

pytestmark = pytest.mark.django_db

GOOD = {"adaptive-adaptive": "on", "adaptive-confidence": "0.9", "adaptive-top_k": "2", "adaptive-budget": "500", "adaptive-round_size": "40"}


@pytest.fixture
def plain_campaign(tmp_path):
    test_set, entries = _write_test_set(tmp_path / "data")
    return create_campaign("settings", test_set, entries)


def _post(client, campaign, **changes):
    return client.post(reverse("evaluation:campaign-set-adaptive", args=[campaign.pk]), {**GOOD, **changes})


def _unchanged(campaign):
    campaign = Campaign.objects.get(pk=campaign.pk)
    return (campaign.adaptive, campaign.adaptive_confidence, campaign.adaptive_top_k, campaign.adaptive_budget, campaign.adaptive_round_size) == (False, 0.95, None, None, 100)


def test_every_field_has_help_text():
    assert all(field.help_text for field in AdaptiveForm().fields.values())


def test_an_organizer_turns_adaptive_mode_on_from_the_page(client, organizer, plain_campaign):
    client.force_login(organizer)
    page = client.get(reverse("evaluation:campaign-results", args=[plain_campaign.pk])).content.decode()
    assert 'id="adaptive-settings"' in page and "Instances added per round" in page
    response = _post(client, plain_campaign)
    assert response.status_code == 302
    campaign = Campaign.objects.get(pk=plain_campaign.pk)
    assert (campaign.adaptive, campaign.adaptive_confidence, campaign.adaptive_top_k, campaign.adaptive_budget, campaign.adaptive_round_size) == (True, 0.9, 2, 500, 40)
    page = client.get(response["Location"]).content.decode()
    assert "Adaptive rating is on" in page and 'value="500"' in page  # the form shows the stored settings
    assert "No crowd job yet: the first round starts when the campaign's crowd job is created" in page and "Collecting the first round" not in page
    # The crowd job made now uses them: rounds of 40 of the 200 instances.
    crowd = create_crowd_job(campaign, redundancy=1)
    assert crowd.round_sizes == [40, 80, 120, 160, 200]
    # Off again is allowed only before the job; after it the form is gone and a post is refused.
    page = client.get(reverse("evaluation:campaign-results", args=[plain_campaign.pk])).content.decode()
    assert 'id="adaptive-settings"' not in page and "No crowd job yet" not in page
    response = _post(client, plain_campaign, **{"adaptive-budget": "900"})
    assert response.status_code == 400
    assert "adaptive settings are fixed when the job is created" in response.content.decode()
    assert Campaign.objects.get(pk=plain_campaign.pk).adaptive_budget == 500


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"adaptive-confidence": "1.5"}, "Ensure this value is less than or equal to 0.999."),
        ({"adaptive-confidence": "high"}, "Enter a number."),
        ({"adaptive-round_size": "1"}, "Ensure this value is greater than or equal to 2."),
        ({"adaptive-budget": "0"}, "Ensure this value is greater than or equal to 1."),
        ({"adaptive-top_k": "9"}, "top k must be a whole number from 1 to the campaign&#x27;s 4 ranked entries"),
    ],
)
def test_bad_posts_say_what_to_fix_and_write_nothing(client, organizer, plain_campaign, changes, message):
    client.force_login(organizer)
    response = _post(client, plain_campaign, **changes)
    page = response.content.decode()
    assert response.status_code == 400 and message in page
    assert 'id="adaptive-settings"' in page  # the form is shown again with the error
    assert _unchanged(plain_campaign)


def test_a_campaign_with_one_ranked_entry_cannot_be_adaptive(client, organizer, tmp_path):
    test_set, entries = _write_test_set(tmp_path / "data")
    campaign = create_campaign("single", test_set, entries[:1])
    client.force_login(organizer)
    response = _post(client, campaign, **{"adaptive-top_k": ""})
    assert response.status_code == 400 and "has 1 ranked entry" in response.content.decode()
    assert _unchanged(campaign)


def test_only_organizers_may_post(client, make_annotator, plain_campaign):
    client.force_login(make_annotator("ann")[0])
    assert _post(client, plain_campaign).status_code == 403
    assert _unchanged(plain_campaign)
