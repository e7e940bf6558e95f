"""An organizer has a campaign made on the campaigns page rated by the crowd, in a real browser:
a value out of range is not sent, good values create the draft job (the crowd progress line
shows it), and the Launch button opens it to raters."""
import pytest
from playwright.sync_api import expect

from annotation.models import Job
from evaluation.campaigns.services.campaigns import create_campaign
from evaluation.models import Campaign, CampaignJob

from ..evaluation.crowd_data import make_test_set

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_organizer_creates_and_launches_the_crowd_job_from_the_page(page, dialogs, organizer_login, tmp_path):
    test_set, _finalists = make_test_set(tmp_path / "data")
    campaign = create_campaign("crowd from the page", test_set, list(test_set.entries.all()))
    organizer_login(f"/evaluation/{campaign.pk}/")
    section = page.locator("#crowd")
    expect(section).to_contain_text("Rate with the crowd")
    expect(section).to_contain_text("adaptive rating is off")

    page.screenshot(path=str(tmp_path / "crowd-job-form-empty.png"), full_page=True)
    form = section.locator("form")
    form.get_by_label("Raters per item").fill("11")  # past the field's max: the browser does not send it
    form.get_by_role("button", name="Create the crowd job").click()
    assert not CampaignJob.objects.filter(campaign=campaign).exists()
    form.get_by_label("Raters per item").fill("2")
    form.get_by_label("Sample size").fill("3")
    form.get_by_label("Order seed").fill("7")
    form.get_by_label("Reward per response (USD)").fill("0.15")
    form.get_by_role("button", name="Create the crowd job").click()
    expect(page.locator("body")).to_contain_text("x 2 raters on 3 instances")  # the server has answered
    crowd = CampaignJob.objects.select_related("job").get(campaign=campaign)
    items = crowd.job.items.count()
    expect(page.locator("body")).to_contain_text(f"{items} items x 2 raters on 3 instances")
    expect(page.locator("#crowd-progress")).to_contain_text(f"{items} responses to rate on 3 instances, 2 raters each; 0 of {2 * items} ratings collected")
    assert crowd.job.state == Job.State.DRAFT and crowd.order_seed == 7 and str(crowd.job.reward) == "0.15"
    expect(page.locator("#crowd-job-link")).to_have_attribute("href", f"/organize/jobs/{crowd.job_id}/")

    page.locator("#crowd").get_by_role("button", name="Launch").click()
    expect(page.locator("body")).to_contain_text("Launched: the crowd job is open to raters")
    expect(page.locator("#crowd-progress")).to_contain_text("(Live)")
    expect(page.locator("#campaign-state")).to_have_text("Collecting ratings")
    page.screenshot(path=str(tmp_path / "crowd-job-form.png"), full_page=True)
    crowd.job.refresh_from_db()
    assert crowd.job.state == Job.State.LIVE and Campaign.objects.get(pk=campaign.pk).state == Campaign.State.COLLECTING
    assert dialogs == []
