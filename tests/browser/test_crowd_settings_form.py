"""The crowd settings of a job's page in a real browser: the provider's own fields come from its
option schema with their help and are shown for the chosen provider only, a value the service
refuses comes back on its field (the form open, what was typed kept), and a good value is saved."""
import pytest
from playwright.sync_api import expect

from hits.models import JobCrowdConfig
from tests.factories import make_corpus, make_live_job

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_refused_value_is_shown_by_its_field_and_a_good_one_is_saved(page, dialogs, organizer_login):
    job = make_live_job(make_corpus(dialogs=1, user_turns=1), name="Crowd settings")
    organizer_login(f"/organize/jobs/{job.pk}/")
    form = page.locator("#crowd-settings-form")
    expect(form).to_be_hidden()  # a live job has nothing to launch: the settings stay folded
    page.locator("#crowd-settings summary").click()
    expect(form).to_be_visible()
    expect(form.locator("#id_crowd_provider")).to_have_value("inhouse")
    expect(form.locator("#id_crowd_locales")).to_be_hidden()  # MTurk's own, not In-house's
    expect(form.locator("#id_crowd_prolific_filters")).to_be_hidden()
    form.locator("#id_crowd_provider").select_option("mturk")
    expect(form.locator('fieldset[data-provider="mturk"]')).to_contain_text("lowest percentage of approved assignments")  # an MTurk option's help
    expect(form.locator("#id_crowd_prolific_filters")).to_be_hidden()
    form.locator("#id_crowd_budget").fill("20")
    form.locator("#id_crowd_minutes_per_assignment").fill("2")
    form.locator("#id_crowd_assignments_per_posting").fill("9")
    form.locator("#id_crowd_locales").fill("USA, GB")
    form.get_by_role("button", name="Save crowd settings").click()

    locales = page.locator("#id_crowd_locales").locator("xpath=..")
    expect(locales).to_contain_text("two-letter country codes")
    expect(page.locator("#id_crowd_locales")).to_have_value("USA, GB")  # shown: the refused form came back with MTurk chosen
    expect(page.locator("#id_crowd_prolific_filters")).to_be_hidden()
    assert not JobCrowdConfig.objects.filter(job=job).exists()

    page.locator("#id_crowd_locales").fill("us, gb")
    page.locator("#crowd-settings-form").get_by_role("button", name="Save crowd settings").click()
    expect(page.locator("body")).to_contain_text("Crowd settings saved.")
    config = JobCrowdConfig.objects.get(job=job)
    assert config.provider == "mturk" and config.requirements["locales"] == ["US", "GB"]
    assert dialogs == []
