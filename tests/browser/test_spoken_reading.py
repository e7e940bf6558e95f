"""Spoken reading in a real browser with Chromium's fake microphone: the worker records k readings
(the fake device plays a sentence synthesised in the test run), plays one back, records one again,
submits, and the readings are stored as 16 kHz WAV; a microphone the browser refuses is explained."""
import re

import pytest
from playwright.sync_api import expect

from annotation.models import Response, SpokenReading
from annotation.speech.audio import read_wav
from annotation.speech.tts import synthesize
from tests.factories import make_corpus, make_live_job

from .conftest import CHROMIUM, CHROMIUM_ARGS
from .test_annotator_flow import claim_by_keyboard, log_in

pytestmark = [pytest.mark.browser, pytest.mark.speech, pytest.mark.django_db(transaction=True)]

FAKE_MIC = ["--use-fake-device-for-media-stream", "--use-fake-ui-for-media-stream"]


@pytest.fixture
def mic_page(chromium_browser, live_server, tmp_path):
    """A tab in a Chromium whose microphone plays a synthesised sentence (and allows it without asking)."""
    sentence = tmp_path / "sentence.wav"
    sentence.write_bytes(synthesize("I need a cheap table for two people in the centre please."))
    browser = chromium_browser.browser_type.launch(
        executable_path=CHROMIUM,
        args=[*CHROMIUM_ARGS, *FAKE_MIC, f"--use-file-for-fake-audio-capture={sentence}"],
    )
    context = browser.new_context(base_url=live_server.url)
    tab = context.new_page()
    tab.set_default_timeout(15_000)
    yield tab
    context.close()
    browser.close()


def _spoken_job(readings=2):
    return make_live_job(make_corpus(name="spoken", dialogs=1, user_turns=1), task_type="spoken_reading",
                         name="Read aloud", settings={"readings": readings})


def _record(page, name, seconds=1.6):
    page.locator(f"#record_{name}").click()
    expect(page.locator(f"#stop_{name}")).to_be_visible()
    page.wait_for_timeout(int(seconds * 1000))
    page.locator(f"#stop_{name}").click()
    expect(page.locator(f"#state_{name}")).to_contain_text(re.compile(r"Recorded: \d+\.\d s"))


def test_record_play_back_record_again_and_submit(mic_page, make_annotator):
    page = mic_page
    _user, worker = make_annotator("rita")
    _spoken_job(readings=2)
    log_in(page, "rita", "rita-pass-1")
    claim_by_keyboard(page, "Read aloud")
    expect(page.locator("#mic-explainer")).to_contain_text("microphone")

    _record(page, "reading_1")
    _record(page, "reading_2", seconds=1.3)
    playback = page.locator("#playback_reading_1")
    expect(playback).to_be_visible()
    played = page.evaluate("""() => { const a = document.getElementById('playback_reading_1');
        return a.play().then(() => new Promise(r => setTimeout(() => r(a.currentTime), 400))); }""")
    assert played > 0  # the worker hears their own reading back
    _record(page, "reading_2", seconds=2.2)  # recorded again: the new one replaces it
    expect(page.locator("#record_reading_2")).to_have_text("Record again")

    page.locator("#submit-button").click()
    expect(page.locator("body")).to_contain_text(re.compile("saved|Nothing left", re.I))

    response = Response.objects.get(worker=worker)
    readings = list(SpokenReading.objects.filter(response=response).order_by("index"))
    assert [r.index for r in readings] == [0, 1] and all(r.sample_rate == 16000 for r in readings)
    assert readings[1].seconds > readings[0].seconds  # the second take of reading 2 is the longer one
    audio = read_wav(readings[0].audio.open("rb").read())
    assert audio.sample_rate == 16000 and 1.0 <= audio.seconds <= 3.0


def test_submitting_without_every_reading_is_stopped_in_the_page(mic_page, make_annotator):
    page = mic_page
    _user, worker = make_annotator("sam")
    _spoken_job(readings=2)
    log_in(page, "sam", "sam-pass-1")
    claim_by_keyboard(page, "Read aloud")
    _record(page, "reading_1")
    page.locator("#submit-button").click()
    expect(page.locator("#mic-error")).to_contain_text("Record every reading before submitting: 1 still missing.")
    assert not Response.objects.filter(worker=worker).exists()


def test_a_refused_microphone_is_explained(page, make_annotator):
    """The ordinary test browser has no fake device and grants nothing: the page says what to do."""
    _user, _worker = make_annotator("tess")
    _spoken_job(readings=1)
    log_in(page, "tess", "tess-pass-1")
    claim_by_keyboard(page, "Read aloud")
    page.locator("#record_reading_1").click()
    expect(page.locator("#mic-error")).to_contain_text(re.compile("microphone", re.I))
