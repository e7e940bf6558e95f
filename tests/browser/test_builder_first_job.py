"""A dataset builder's first job, from the browser alone: a corpus file that is not MultiWOZ is
refused with what is wrong and nothing is imported; the corrected file is imported and its run page
leads to a new job with the corpus chosen; the draft is previewed as a worker sees it and launched;
an annotator then finds it among their jobs and gets its first turn to rewrite.

Tasks run in-process in the tests, so the import has finished when its run page first answers."""
import json

import pytest
from playwright.sync_api import expect

from annotation.demo.corpus import generate_corpus
from annotation.models import Corpus, ImportRun, Job, RunStatus

from .test_annotator_flow import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _upload(page, name, path):
    page.get_by_role("link", name="Upload corpus").click()
    page.get_by_label("Name").fill(name)
    page.get_by_label("Format").select_option("multiwoz")
    page.get_by_label("Corpus file").set_input_files(path)
    page.get_by_role("button", name="Upload and import").click()


def test_a_builder_imports_a_corpus_creates_previews_and_launches_a_job(page, dialogs, organizer_login, make_annotator, tmp_path):
    make_annotator("ada")
    corpus = generate_corpus(3, seed=5)
    first_user_turn = next(iter(corpus.values()))["log"][0]["text"]
    broken = dict(corpus)
    broken["SNG100001.json"] = {"goal": {}}  # a dialog without its turns
    (tmp_path / "broken.json").write_text(json.dumps(broken))
    (tmp_path / "data.json").write_text(json.dumps(corpus))

    organizer_login("/organize/")
    _upload(page, "restaurants", tmp_path / "broken.json")
    expect(page.locator("body")).to_contain_text("SNG100001.json")  # the refusal names the dialog at fault
    assert not Corpus.objects.exists()  # all or nothing: not two dialogs of three
    assert not ImportRun.objects.filter(status=RunStatus.SUCCEEDED).exists()
    expect(page.locator("#import-run")).to_contain_text("Nothing was imported")
    expect(page.locator("#run-progress")).to_have_count(0)  # no progress bar stuck at 0% beside the reason

    page.get_by_role("link", name="Upload a corrected file").click()  # the name and format are kept
    expect(page.get_by_label("Name")).to_have_value("restaurants")
    expect(page.get_by_label("Format")).to_have_value("multiwoz")
    page.get_by_label("Corpus file").set_input_files(tmp_path / "data.json")
    page.get_by_role("button", name="Upload and import").click()
    expect(page.locator("#run-status")).to_have_text("Succeeded")
    expect(page.locator("#import-run")).to_contain_text("Imported corpus “restaurants”")
    page.get_by_role("link", name="Create a job from it").click()

    expect(page.get_by_label("Corpus")).to_have_value(str(Corpus.objects.get().pk))
    page.get_by_label("Name", exact=True).fill("Restaurant rewrites")
    page.get_by_label("Task type").select_option("pairwise")  # a type whose items come from a file
    expect(page.get_by_label("Payload file")).to_be_visible()
    expect(page.locator("#turn-selection")).to_be_hidden()
    page.get_by_label("Task type").select_option("rewrite")
    expect(page.get_by_label("Payload file")).to_be_hidden()  # a rewrite's items are the corpus's turns
    expect(page.get_by_label("Sample size")).to_be_hidden()
    page.get_by_label("A random sample of turns").check()
    expect(page.get_by_label("Sample size")).to_be_visible()
    expect(page.get_by_label("Dialog ids")).to_be_hidden()
    page.get_by_label("Every source turn").check()
    expect(page.get_by_label("Sample size")).to_be_hidden()
    expect(page.get_by_label("Annotators").locator("option")).to_have_text(["ada"])  # by user name
    page.get_by_label("Instructions").fill("Rewrite the turn four ways; keep the marked values.")
    page.get_by_role("button", name="Create draft job").click()
    expect(page.locator("#job-state")).to_have_text("Draft")
    job = Job.objects.get(name="Restaurant rewrites")
    user_turns = sum(t["metadata"] == {} for d in corpus.values() for t in d["log"])
    expect(page.locator("#items-done")).to_have_text(f"0 / {user_turns}")

    page.get_by_role("link", name="Preview as a worker").click()
    expect(page.locator("#preview-banner")).to_contain_text(f"item 1 of {user_turns}")
    expect(page.locator("#target-turn")).to_contain_text(first_user_turn)
    page.get_by_role("link", name="Back to the job").click()

    expect(page.locator("#crowd-launch-note")).to_contain_text("posts every open slot to In-house")
    page.get_by_role("button", name="Launch").click()  # the one launch button of the page
    expect(page.locator("#job-state")).to_have_text("Live")
    job.refresh_from_db()
    assert job.state == Job.State.LIVE

    page.get_by_role("button", name="Log out").click()
    log_in(page, "ada", "ada-pass-1")
    expect(page.locator("body")).to_contain_text("Restaurant rewrites")
    page.get_by_role("button", name="Next item: Restaurant rewrites", exact=True).click()
    expect(page.locator("#target-turn")).to_contain_text(first_user_turn)
    expect(page.locator(".instructions-text")).to_contain_text("keep the marked values")
    assert dialogs == []
