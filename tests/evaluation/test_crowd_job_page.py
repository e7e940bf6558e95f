"""An organizer creates (and launches) a campaign's crowd rating job from the campaign page: the
form (help text on every field) calls `create_crowd_job` and `launch_crowd_job` in one transaction;
a refusal is answered with the reason and creates nothing; a draft job gets a Launch button."""
import threading
from decimal import Decimal

import pytest
from django.db import connections
from django.test import Client
from django.urls import reverse

from annotation.extensions import launch_checks
from annotation.models import Item, Job, PayloadSet
from evaluation.campaigns.forms import CrowdJobForm
from evaluation.campaigns.services.campaigns import create_campaign, set_adaptive
from evaluation.campaigns.services.crowd import choose_instances
from evaluation.models import Campaign, CampaignItem, CampaignJob

from .crowd_data import SEEKING, make_test_set
from .test_adaptive_campaign import _write_test_set

pytestmark = pytest.mark.django_db

GOOD = {"crowd-raters": "2", "crowd-sample_size": "", "crowd-sample_seed": "0", "crowd-order_seed": "11", "crowd-reward": "0.25"}


@pytest.fixture
def listed_campaign(tmp_path):
    """A campaign as the campaigns page makes it (finalists and the reference rows), with no crowd job."""
    test_set, _finalists = make_test_set(tmp_path / "data")
    return create_campaign("from the list", test_set, list(test_set.entries.all()))


@pytest.fixture
def signed_in(client, organizer):
    client.force_login(organizer)
    return client


def _page(client, campaign):
    return client.get(reverse("evaluation:campaign-results", args=[campaign.pk])).content.decode()


def _create(client, campaign, **changes):
    data = {**GOOD, **changes}
    return client.post(reverse("evaluation:campaign-create-crowd-job", args=[campaign.pk]), {k: v for k, v in data.items() if v is not None})


def _nothing_created():
    return not CampaignJob.objects.exists() and not Job.objects.exists() and not Item.objects.exists() and not PayloadSet.objects.exists()


def test_every_field_has_help_text():
    assert all(field.help_text for field in CrowdJobForm().fields.values())


def test_an_organizer_creates_the_crowd_job_then_launches_it(signed_in, listed_campaign):
    page = _page(signed_in, listed_campaign)
    assert "Rate with the crowd" in page and "Raters per item" in page and "adaptive rating is off" in page
    response = _create(signed_in, listed_campaign)
    assert response.status_code == 302 and response["Location"].endswith("#crowd")
    crowd = CampaignJob.objects.select_related("job").get(campaign=listed_campaign)
    job = crowd.job
    # Four entries on the four knowledge-seeking instances, less the one where team-beta gave no response.
    assert job.items.count() == 15 and job.redundancy == 2 and job.reward == Decimal("0.25") and job.task_type == "likert"
    assert job.state == Job.State.DRAFT and crowd.instances == SEEKING and crowd.order_seed == 11
    assert CampaignItem.objects.filter(campaign=listed_campaign).count() == 15

    page = signed_in.get(response["Location"]).content.decode()
    assert "15 items x 2 raters on 4 instances" in page and "a draft" in page
    assert "15 responses to rate on 4 instances, 2 raters each; 0 of 30 ratings collected" in page
    assert reverse("organizer:job", args=[job.pk]) in page
    assert 'name="crowd-raters"' not in page  # the form is gone once the job exists
    launch = reverse("evaluation:campaign-launch-crowd-job", args=[listed_campaign.pk])
    assert launch in page and "The job is a draft: set up its crowd" in page

    response = signed_in.post(launch)
    assert response.status_code == 302
    job.refresh_from_db()
    assert job.state == Job.State.LIVE
    assert Campaign.objects.get(pk=listed_campaign.pk).state == Campaign.State.COLLECTING
    page = signed_in.get(response["Location"]).content.decode()
    assert "Launched: the crowd job is open to raters" in page and launch not in page and "The job is a draft" not in page
    # Launching again is refused with the reason, and changes nothing.
    page = signed_in.post(launch, follow=True).content.decode()
    assert "Not launched: the job is already live" in page


def test_launch_now_with_a_seeded_sample_and_a_random_order_seed(signed_in, listed_campaign):
    response = _create(signed_in, listed_campaign, **{"crowd-sample_size": "2", "crowd-sample_seed": "5", "crowd-order_seed": "", "crowd-launch": "on"})
    assert response.status_code == 302
    crowd = CampaignJob.objects.select_related("job").get(campaign=listed_campaign)
    assert crowd.job.state == Job.State.LIVE
    assert crowd.instances == choose_instances(listed_campaign.test_set, sample_size=2, seed=5) and len(crowd.instances) == 2
    assert crowd.order_seed is not None  # drawn and stored
    page = signed_in.get(response["Location"]).content.decode()
    assert "on 2 instances; launched: raters can start now" in page
    assert Campaign.objects.get(pk=listed_campaign.pk).state == Campaign.State.COLLECTING


def test_an_adaptive_campaign_gets_only_its_first_round(signed_in, tmp_path):
    test_set, entries = _write_test_set(tmp_path / "data")
    campaign = set_adaptive(create_campaign("adaptive", test_set, entries), round_size=40)
    assert "the job starts with the first round of 40 instances" in _page(signed_in, campaign)
    response = _create(signed_in, campaign, **{"crowd-raters": "1"})
    assert response.status_code == 302
    crowd = CampaignJob.objects.select_related("job").get(campaign=campaign)
    assert crowd.job.items.count() == 4 * 40  # every entry on the first 40 instances of the shared order
    assert len(crowd.instances) == 200 and crowd.round_sizes == [40, 80, 120, 160, 200]
    page = signed_in.get(response["Location"]).content.decode()
    assert "its first round, 160 items x 1 rater on the first 40 of 200 instances" in page


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"crowd-raters": "0"}, "Ensure this value is greater than or equal to 1."),
        ({"crowd-raters": "11"}, "Ensure this value is less than or equal to 10."),
        ({"crowd-raters": None}, "This field is required."),
        ({"crowd-reward": "-0.10"}, "Ensure this value is greater than or equal to 0."),
        ({"crowd-reward": "ten"}, "Enter a number."),
        ({"crowd-sample_size": "0"}, "Ensure this value is greater than or equal to 1."),
        ({"crowd-order_seed": "-1"}, "Ensure this value is greater than or equal to 0."),
    ],
)
def test_bad_fields_say_what_to_fix_and_create_nothing(signed_in, listed_campaign, changes, message):
    response = _create(signed_in, listed_campaign, **changes)
    page = response.content.decode()
    assert response.status_code == 400 and message in page
    assert 'id="crowd"' in page and 'name="crowd-raters"' in page  # the form again, with the error
    assert _nothing_created()


def test_a_refusal_of_the_service_is_shown_and_creates_nothing(signed_in, tmp_path):
    test_set, _finalists = make_test_set(tmp_path / "data", with_logs=False)
    campaign = create_campaign("no contexts", test_set, list(test_set.entries.all()))
    response = _create(signed_in, campaign)
    page = response.content.decode()
    assert response.status_code == 400
    assert "Nothing was created: the crowd job needs, first: the dialog contexts of test set &#x27;crowd-test&#x27;" in page
    assert "Add dialog contexts or knowledge to a test set" in page  # where on this site, not a shell command
    assert _nothing_created() and Campaign.objects.get(pk=campaign.pk).state == Campaign.State.DRAFT


def test_an_adaptive_round_too_large_is_refused(signed_in, tmp_path):
    test_set, entries = _write_test_set(tmp_path / "data")
    campaign = set_adaptive(create_campaign("adaptive", test_set, entries), round_size=40)
    response = _create(signed_in, campaign, **{"crowd-sample_size": "30"})
    assert response.status_code == 400
    assert "Nothing was created: adaptive round size 40 is not smaller than the 30 instances rated" in response.content.decode()
    assert _nothing_created()


def test_a_refused_launch_leaves_no_job_behind(signed_in, listed_campaign):
    with launch_checks.override("test.too_small", lambda job: "the crowd's budget is too small"):
        response = _create(signed_in, listed_campaign, **{"crowd-launch": "on"})
    assert response.status_code == 400
    assert "Nothing was created: the crowd&#x27;s budget is too small" in response.content.decode()
    assert _nothing_created()
    campaign = Campaign.objects.get(pk=listed_campaign.pk)
    assert campaign.state == Campaign.State.DRAFT


def test_a_second_crowd_job_is_refused(signed_in, listed_campaign):
    assert _create(signed_in, listed_campaign).status_code == 302
    response = _create(signed_in, listed_campaign, **{"crowd-raters": "5"})
    assert response.status_code == 400
    assert "Nothing was created: campaign &#x27;from the list&#x27; already has a crowd job" in response.content.decode()
    assert CampaignJob.objects.count() == 1 and Job.objects.get().redundancy == 2


def test_a_campaign_of_imported_ratings_says_why_instead_of_a_form(signed_in, campaign):
    page = _page(signed_in, campaign)
    assert 'id="crowd-imported"' in page and "ratings were imported" in page and 'name="crowd-raters"' not in page
    response = _create(signed_in, campaign)
    assert response.status_code == 400 and "already has imported ratings" in response.content.decode()
    assert _nothing_created()


def test_only_organizers_may_create_or_launch(client, make_annotator, listed_campaign):
    client.force_login(make_annotator("ann")[0])
    assert _create(client, listed_campaign, **{"crowd-launch": "on"}).status_code == 403
    assert client.post(reverse("evaluation:campaign-launch-crowd-job", args=[listed_campaign.pk])).status_code == 403
    assert _nothing_created()
    client.logout()
    response = _create(client, listed_campaign)
    assert response.status_code == 302 and "/login" in response["Location"]
    assert _nothing_created()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_double_submitted_form_makes_one_job(organizer, listed_campaign):
    """Two posts at once (a double click): the campaign's row lock makes the second wait and be
    refused with the reason, instead of failing on the one-job constraint."""
    statuses, errors = [], []
    start = threading.Barrier(2)

    def post():
        try:
            client = Client()
            client.force_login(organizer)
            start.wait()
            response = _create(client, listed_campaign)
            statuses.append((response.status_code, "already has a crowd job" in response.content.decode()))
        except Exception as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(repr(exc))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=post) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert sorted(statuses) == [(302, False), (400, True)]
    assert CampaignJob.objects.count() == 1 and Job.objects.count() == 1
