"""A dialog system is never a dead end, from the systems page: registered with the wrong secret it
fails the check with a hint about the secret and is not offered for chat jobs; its secret changed
on its row, it passes and is offered; an unused system is deleted and its name is free again."""
import re

import pytest
from playwright.sync_api import expect

from evaluation.interactive.systems.reference import ReferenceSystem
from evaluation.models import DialogSystem
from tests.evaluation.systems import running

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SECRET = "the-right-secret-of-24ch"


def test_a_system_with_the_wrong_secret_is_fixed_from_its_row_then_offered(page, dialogs, organizer_login):
    with running(ReferenceSystem(SECRET)) as url:
        organizer_login("/organize/")
        page.get_by_role("link", name="Evaluation", exact=True).first.click()
        page.goto("/evaluation/systems/")
        form = page.locator("#system-form")
        form.locator("#system_name").fill("team-7")
        form.locator("#system_url").fill(url)
        form.locator("#system_secret").fill("a-wrong-secret-of-24chars")
        form.get_by_role("button").click()
        expect(page.locator("body")).to_contain_text("failed the contract check")
        expect(page.locator("body")).to_contain_text("the secret registered here probably differs")
        system = DialogSystem.objects.get(name="team-7")
        expect(page.locator("#id_chatjob-systems, [name=systems]").first.locator("option")).to_have_count(0)

        row = page.locator(f"#system-{system.pk}")
        row.get_by_text("Change URL or secret").click()
        row.get_by_label(re.compile("New secret")).fill(SECRET)
        row.get_by_role("button", name="Save and check again").click()
        expect(page.locator("body")).to_contain_text("passed the contract check")
        expect(page.locator("[name=systems]").first.locator("option")).to_have_count(1)

        page.locator(f"#system-{system.pk}-delete-confirm").check()  # a required box: no inline script confirms
        page.locator(f"#system-{system.pk}-delete").click()
        expect(page.locator("body")).to_contain_text("Deleted “team-7”")
        assert not DialogSystem.objects.filter(name="team-7").exists()
    assert dialogs == []
