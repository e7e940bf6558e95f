"""An export with speech errors, started, watched and downloaded in Chromium as a first-time
organizer does it (issue 23, item 4): from the dashboard to the job, the export asked for with a
target word error rate; the page answers at once with the run waiting for the worker, then shows it
running with its share done, then its files, all without reloading; the speech-error test set is
downloaded from the row.

The worker is a thread here (`queue_now` replaced), held at two gates so the test sees each state
the page must show; the speech engine is the speech tests' closed-form speaker and recogniser."""
import json
import threading

import pytest
from django.db import connection
from playwright.sync_api import expect

from annotation.models import ExportRun, RunStatus
from quorum import background
from tests.annotation.test_export_speech_errors import USER_TURNS, corpus_job, use_fake_speech  # noqa: F401 - corpus_job is a fixture
from tests.browser.live import mark_this_page, still_this_page
from tests.speech.fakes import fake_tts

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def gated_worker(monkeypatch):
    """Queued tasks run on a thread once `start` is set; the speech synthesis waits for `resume`
    after its first utterance, so the run is seen running part way."""
    gates = {"start": threading.Event(), "resume": threading.Event(), "running": threading.Event()}
    threads = []

    def run(name, args):
        try:
            gates["start"].wait(20)
            background.task_named(name).apply(args=args)
        finally:
            connection.close()

    def queue_now(name, *args, countdown=None):  # the gate, not a countdown, decides when it starts
        thread = threading.Thread(target=run, args=(name, args), daemon=True)
        threads.append(thread)
        thread.start()
        return True

    monkeypatch.setattr(background, "queue_now", queue_now)
    yield gates
    for gate in ("start", "resume"):
        gates[gate].set()
    for thread in threads:
        thread.join(30)


def test_an_export_with_speech_errors_is_started_watched_and_downloaded(page, dialogs, organizer_login, corpus_job, gated_worker, monkeypatch):  # noqa: F811
    use_fake_speech(monkeypatch)
    monkeypatch.setattr("annotation.speech.simulate.synthesize", gated_worker_synthesize(gated_worker))
    organizer_login("/organize/")
    page.get_by_role("link", name=corpus_job.name).click()
    page.get_by_label("Speech errors: target WER").fill("0.2")
    page.get_by_role("button", name="Export results").click()

    # The page is back at once: the run waits for the worker, and the page follows it.
    expect(page.locator(".messages")).to_contain_text("Export started in the background")
    row = page.locator("tr.export-run")
    expect(row).to_contain_text("Pending")
    expect(row).to_contain_text("Waiting for the background worker")
    expect(row.locator("progress")).to_be_visible()
    mark_this_page(page)

    gated_worker["start"].set()
    expect(row).to_contain_text("Running")  # without a reload: the row was replaced from the progress endpoint
    gated_worker["resume"].set()
    expect(row.get_by_role("link", name="speech_errors/dialogs.jsonl")).to_be_visible(timeout=30_000)
    expect(row).to_contain_text("Succeeded")
    expect(row.locator("progress")).to_have_count(0)
    assert still_this_page(page) is True
    run = ExportRun.objects.get()
    assert run.status == RunStatus.SUCCEEDED and run.done == run.total

    with page.expect_download() as download_info:
        row.get_by_role("link", name="speech_errors/dialogs.jsonl").click()
    lines = [json.loads(line) for line in open(download_info.value.path(), encoding="utf-8")]
    user_texts = [turn["text"] for dialog in lines for turn in dialog["turns"] if turn["speaker"] == "user"]
    assert len(user_texts) == len(USER_TURNS) and user_texts != list(USER_TURNS)  # the user turns carry recognition errors
    assert dialogs == []


def gated_worker_synthesize(gates):
    """The speech synthesis of `use_fake_speech`, held after its first utterance until `resume`."""

    def synthesize(*args, **kwargs):
        if not gates["running"].is_set():
            gates["running"].set()
            gates["resume"].wait(20)
        return fake_tts(*args, **kwargs)

    return synthesize
