"""A builder settles crowd work from the job page in Chromium: ticks assignments, chooses what to do
and presses Settle. The bonus fields below it share the form (the ticks are one list), so they must
not stop a settlement the browser would otherwise refuse to send for their empty required boxes."""
import pytest
from playwright.sync_api import expect

from hits.models import Payment
from tests.hits.conftest import aws_env, fake_mturk, job_factory  # noqa: F401 - fixtures
from tests.hits.contract import LONG_REJECTION
from tests.hits.test_crowd_pages import submitted  # noqa: F401 - a fixture: an MTurk job with three submitted assignments

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_settle_and_bonus_each_go_from_the_page(page, organizer_login, submitted, fake_mturk, settings):  # noqa: F811
    settings.ROOT_URLCONF = "quorum.urls"
    job, (a, b, c) = submitted
    organizer_login(f"/organize/jobs/{job.pk}/")
    form = page.locator("#crowd-assignments-form")
    form.locator(f"#crowd-a-{a.pk}").check()
    form.locator(f"#crowd-a-{b.pk}").check()
    form.get_by_label("Action").select_option("approve")
    form.get_by_role("button", name="Settle").click()
    expect(page.locator(".messages")).to_contain_text("2 of 2 approved.")
    assert fake_mturk.assignments[a.external_id]["AssignmentStatus"] == "Approved"
    assert Payment.objects.filter(kind=Payment.Kind.APPROVE).count() == 2

    form = page.locator("#crowd-assignments-form")
    form.locator(f"#crowd-a-{c.pk}").check()
    form.get_by_label("Action").select_option("reject")
    form.get_by_label("Message").fill(LONG_REJECTION)
    form.get_by_role("button", name="Settle").click()
    expect(page.locator(".messages")).to_contain_text("1 of 1 rejected.")

    form = page.locator("#crowd-assignments-form")
    form.locator(f"#crowd-a-{a.pk}").check()
    form.get_by_label("Amount").fill("0.25")
    form.get_by_label("Reason").fill("Careful rewrites, thank you.")
    form.get_by_role("button", name="Pay bonus").click()
    expect(page.locator(".messages")).to_contain_text("1 of 1 paid a bonus.")
