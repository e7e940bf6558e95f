"""An organizer sets up an evaluation in a real browser: uploads a test set and the entries with
their objective scores, selects the finalists into a new campaign and opens it; a bad upload is
refused on the form with its reason."""
import zipfile

import pytest
from playwright.sync_api import expect

from evaluation.models import Campaign, Entry, TestSet

from ..evaluation.conftest import DSTC9

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def entries_zip(path, extra=None):
    with zipfile.ZipFile(path, "w") as archive:
        for file in sorted((DSTC9 / "entries").rglob("*.json")):
            archive.write(file, file.relative_to(DSTC9 / "entries").as_posix())
        for name, content in (extra or {}).items():
            archive.writestr(name, content)
    return path


def test_an_organizer_uploads_a_test_set_and_entries_and_creates_the_campaign(page, dialogs, organizer, tmp_path):
    page.goto("/accounts/login/?next=/evaluation/")
    page.locator("#id_username").fill("olga")
    page.locator("#id_password").fill("organizer-pass-1")
    page.locator("#id_password").press("Enter")
    expect(page.get_by_role("heading", name="Evaluation campaigns")).to_be_visible()

    form = page.locator("#test-set-form")
    form.get_by_label("Challenge").fill("DSTC9 Track 1")
    form.get_by_label("Name").fill("test")
    form.get_by_label("Labels").set_input_files(DSTC9 / "labels.json")
    form.get_by_label("Knowledge").set_input_files(DSTC9 / "knowledge.json")
    form.get_by_role("button", name="Upload test set").click()
    expect(page.locator("body")).to_contain_text("Imported test set “DSTC9 Track 1 / test”")
    test_set = TestSet.objects.get()

    # A broken member: refused on the form, naming the member, and nothing is imported.
    entries = page.locator("#entries-form")
    entries.get_by_label("Test set").select_option(str(test_set.pk))
    entries.get_by_label("Archive").set_input_files(entries_zip(tmp_path / "bad.zip", {"team9/entry0.json": "["}))
    entries.get_by_role("button", name="Upload entries").click()
    expect(page.get_by_role("alert").first).to_contain_text("team9/entry0.json: not valid JSON")
    assert not Entry.objects.exists()

    entries = page.locator("#entries-form")
    expect(entries.get_by_label("Test set")).to_have_value(str(test_set.pk))  # the refused form keeps its choices
    entries.get_by_label("Archive").set_input_files(entries_zip(tmp_path / "entries.zip"))
    entries.get_by_label("Scores").set_input_files(DSTC9 / "score.csv")
    entries.get_by_label("Ground truth").check()
    entries.get_by_role("button", name="Upload entries").click()
    expect(page.locator("body")).to_contain_text("Imported 6 entries with outputs and their objective scores")

    finalists = page.locator("#finalists")
    finalists.get_by_label("Metrics (comma-separated").fill("detection_f1,selection_r@1")
    finalists.get_by_label("Finalist teams").fill("2")
    finalists.get_by_label("Create a campaign of this name").fill("finals")
    finalists.get_by_role("button", name="Select finalists").click()
    expect(page.locator("#finalist-table tbody tr")).to_have_count(2)
    page.get_by_role("link", name="Open campaign “finals”").click()
    expect(page.get_by_role("heading", name="finals")).to_be_visible()
    expect(page.locator("#campaign-state")).to_have_text("Draft")

    campaign = Campaign.objects.get(name="finals")
    assert campaign.entries.filter(is_baseline=True).exists() and campaign.entries.filter(is_ground_truth=True).exists()
    assert campaign.entries.filter(is_baseline=False, is_ground_truth=False).count() == 2
    assert dialogs == []
