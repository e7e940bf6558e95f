"""A DSTC9-style crowd campaign from empty to leaderboard in Chromium, as a first-time organizer
does it from the dashboard with no shell (issue 23): a test set with labels and knowledge, its
dialog contexts added afterwards from the page, entries with outputs and objective scores, the
finalists chosen into a campaign, its crowd job created and launched, every item rated by an
annotator through the real rating pages (digit keys, Ctrl+Enter), the results computed and the
leaderboard shown with every rated system."""
import csv
import re
import zipfile

import pytest
from playwright.sync_api import expect

from annotation.models import Job, Response
from evaluation.models import Campaign, CampaignJob, Rating

from ..evaluation.crowd_data import write_files
from .test_annotator_flow import claim_by_keyboard, log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ENTRIES = [("team-alpha", "sub-a1"), ("team-beta", "sub-b7"), ("baseline-team", "base-0")]


def entry_files(data, tmp_path):
    """The entries as an organizer has them: a zip of team folders and the objective scores."""
    archive = tmp_path / "entries.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        for team, entry in ENTRIES:
            zipped.write(data / team / f"{entry}.json", f"{team}/{entry}.json")
    scores = tmp_path / "score.csv"
    with scores.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["team_id", "entry_id", "detection_f1", "selection_r@1"])
        writer.writerows([["team-alpha", "sub-a1", 0.95, 0.8], ["team-beta", "sub-b7", 0.9, 0.7], ["baseline-team", "base-0", 0.85, 0.6]])
    return archive, scores


def rate_every_item(page, job_name):
    """The annotator answers every item of the job with number keys: the position of the item
    decides the ratings, so systems differ. Returns how many were answered."""
    claim_by_keyboard(page, job_name)
    answered = 0
    while page.locator("#work-form").count():
        progress = page.locator("#progress").inner_text()
        scales = page.locator("fieldset.scale")
        expect(scales).to_have_count(2)
        for offset in range(2):
            page.keyboard.press(str(1 + (answered + offset) % 5))
        page.keyboard.press("Control+Enter")
        answered += 1
        expect(page.locator("body")).not_to_contain_text(progress)  # the next item, or nothing left
        page.wait_for_load_state()
        if page.locator("#work-form").count():  # written in place (one-request cycle): its keys are ready
            expect(page.locator("#work-form[data-ready=true]")).to_be_visible()
    expect(page.locator("body")).to_contain_text(re.compile("Nothing left|no more", re.I))
    return answered


def test_a_dstc9_crowd_campaign_from_empty_to_leaderboard(page, chromium_browser, live_server, dialogs, organizer_login, make_annotator, tmp_path):
    data = write_files(tmp_path / "data")
    archive, scores = entry_files(data, tmp_path)
    make_annotator("rae")
    organizer_login("/organize/")
    page.get_by_role("link", name="Evaluation", exact=True).first.click()
    expect(page.get_by_role("heading", name="Evaluation campaigns")).to_be_visible()

    # A test set with labels and knowledge; its dialog contexts added afterwards, as the page offers.
    form = page.locator("#test-set-form")
    form.get_by_label("Challenge").fill("DSTC9 Track 1")
    form.get_by_label("Name").fill("crowd")
    form.get_by_label("Labels").set_input_files(data / "labels.json")
    form.get_by_label("Knowledge").set_input_files(data / "knowledge.json")
    form.get_by_role("button", name="Upload test set").click()
    expect(page.locator("body")).to_contain_text("Imported test set “DSTC9 Track 1 / crowd”: 6 instances, without dialog contexts")
    test_set = page.locator("#logs-form").get_by_label("Test set").locator("option").nth(1).get_attribute("value")
    logs = page.locator("#logs-form")
    logs.get_by_label("Test set").select_option(test_set)
    logs.get_by_label("Logs").set_input_files(data / "logs.json")
    logs.get_by_role("button", name="Add to the test set").click()
    expect(page.locator("body")).to_contain_text("Stored the dialog contexts of “DSTC9 Track 1 / crowd”")
    expect(page.locator("#test-sets tbody tr").first).to_contain_text("yes")

    entries = page.locator("#entries-form")
    entries.get_by_label("Test set").select_option(test_set)
    entries.get_by_label("Archive").set_input_files(archive)
    entries.get_by_label("Scores").set_input_files(scores)
    entries.get_by_label("Baseline teams").fill("baseline-team")
    entries.get_by_label("Ground truth").check()
    entries.get_by_role("button", name="Upload entries").click()
    expect(page.locator("body")).to_contain_text("Imported 3 entries with outputs and their objective scores")

    finalists = page.locator("#finalists")
    finalists.get_by_label("Metrics (comma-separated").fill("detection_f1,selection_r@1")
    finalists.get_by_label("Finalist teams").fill("2")
    finalists.get_by_label("Create a campaign of this name").fill("crowd finals")
    finalists.get_by_role("button", name="Select finalists").click()
    expect(page.locator("#finalist-table tbody tr")).to_have_count(2)
    page.get_by_role("link", name="Open campaign “crowd finals”").click()
    expect(page.locator("#campaign-state")).to_have_text("Draft")

    # The crowd job: one rater per item on every instance, created and launched from the page.
    crowd = page.locator("#crowd")
    crowd.get_by_label("Raters per item").fill("1")
    crowd.get_by_role("button", name="Create the crowd job").click()
    expect(page.locator("body")).to_contain_text("Created the crowd job")
    page.locator("#crowd").get_by_role("button", name="Launch").click()
    expect(page.locator("#campaign-state")).to_have_text("Collecting ratings")
    campaign = Campaign.objects.get(name="crowd finals")
    job = CampaignJob.objects.select_related("job").get(campaign=campaign).job
    assert job.state == Job.State.LIVE

    # An annotator rates every item through the rating pages, in a browser of their own.
    rater = chromium_browser.new_context(base_url=live_server.url).new_page()
    answered = rate_every_item_as(rater, job.name)
    rater.context.close()
    assert answered == job.items.count() and Response.objects.filter(item__job=job).count() == answered
    assert Rating.objects.filter(campaign=campaign).count() == 2 * answered  # two questions per rating

    # Back on the campaign page: the results are computed and the leaderboard ranks every system.
    page.reload()
    page.get_by_role("button", name="Compute results").first.click()
    leaderboard = page.locator("#leaderboard tbody tr")
    expect(leaderboard).to_have_count(campaign.entries.count())
    for label in ("team-alpha/sub-a1", "team-beta/sub-b7"):
        expect(page.locator("#leaderboard")).to_contain_text(label)
    ranks = [row.locator("td").first.inner_text().strip() for row in leaderboard.all()]
    assert any(rank.lstrip("=").isdigit() for rank in ranks)  # rated systems are ranked
    assert dialogs == []


def rate_every_item_as(page, job_name):
    log_in(page, "rae", "rae-pass-1")
    return rate_every_item(page, job_name)
