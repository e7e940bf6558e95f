"""Spoken reading in a real browser with Chromium's fake microphone: the worker records k readings
(the fake device plays a sentence synthesised in the test run), plays one back, records one again,
submits, and the readings are stored as 16 kHz WAV; a refused (silent) reading is recorded again
alone; a failed connection keeps the recordings; a microphone the browser refuses is explained."""
import re
import shutil

import pytest
from playwright.sync_api import expect

from annotation.models import Response, SpokenReading
from annotation.services import readings
from annotation.speech.audio import read_wav
from annotation.speech.tts import synthesize
from tests.factories import make_corpus, make_live_job

from .conftest import CHROMIUM, CHROMIUM_ARGS, IN_CI
from .test_annotator_flow import claim_by_keyboard, log_in

pytestmark = [pytest.mark.browser, pytest.mark.speech, pytest.mark.django_db(transaction=True)]

FAKE_MIC = ["--use-fake-device-for-media-stream", "--use-fake-ui-for-media-stream"]


@pytest.fixture(autouse=True)
def no_transcription(monkeypatch):
    """The test server runs tasks inline, so each saving post would wait for the recognizer (and
    outlive the test); transcription has its own tests (tests/annotation/test_spoken_reading.py)."""
    monkeypatch.setattr(readings, "queue_transcription", lambda reading_id: None)


@pytest.fixture(scope="module")
def mic_browser(chromium_browser, tmp_path_factory):
    """A Chromium whose microphone plays a synthesised sentence (and allows it without asking), one
    for the module: the device is the browser's, and each test has a fresh context of it."""
    # Set up before the function-level service check in tests/conftest.py: the same rule here.
    if not shutil.which("espeak-ng"):
        message = "needs Debian's espeak-ng (scripts/ensure_speech.sh)"
        if IN_CI:
            pytest.fail(f"CI needs this service: {message}")
        pytest.skip(message)
    sentence = tmp_path_factory.mktemp("mic") / "sentence.wav"
    sentence.write_bytes(synthesize("I need a cheap table for two people in the centre please."))
    yield from browser_with_microphone(chromium_browser, sentence)


def browser_with_microphone(chromium_browser, wav_path):
    """A Chromium whose fake microphone plays `wav_path` in a loop, closed after its tests."""
    browser = chromium_browser.browser_type.launch(
        executable_path=CHROMIUM,
        args=[*CHROMIUM_ARGS, *FAKE_MIC, f"--use-file-for-fake-audio-capture={wav_path}"],
    )
    yield browser
    browser.close()


def fresh_tab(browser, live_server):
    """A tab of `browser` in a fresh context (no cookies), closed after its test."""
    context = browser.new_context(base_url=live_server.url)
    tab = context.new_page()
    tab.set_default_timeout(15_000)
    yield tab
    context.close()


@pytest.fixture
def mic_page(mic_browser, live_server):
    """A tab of the microphone's Chromium in a fresh context (no cookies)."""
    yield from fresh_tab(mic_browser, live_server)


def _open_item(page, make_annotator, username, readings=2, dialogs=1):
    """`username` logs in and opens the first item of a spoken-reading job of `dialogs` items; their Worker."""
    _user, worker = make_annotator(username)
    make_live_job(make_corpus(name="spoken", dialogs=dialogs, user_turns=1), task_type="spoken_reading",
                  name="Read aloud", settings={"readings": readings})
    log_in(page, username, f"{username}-pass-1")
    claim_by_keyboard(page, "Read aloud")
    return worker


def _record(page, name, seconds=1.6):
    expect(page.locator(f"#stop_{name}")).to_be_hidden()  # nothing to stop yet
    page.locator(f"#record_{name}").click()
    expect(page.locator(f"#stop_{name}")).to_be_visible()
    expect(page.locator(f"#record_{name}")).to_be_hidden()  # one button at a time: Stop while recording
    page.wait_for_timeout(int(seconds * 1000))
    page.locator(f"#stop_{name}").click()
    expect(page.locator(f"#state_{name}")).to_contain_text(re.compile(r"Recorded: \d+\.\d s"))


def test_record_play_back_record_again_and_submit(mic_page, make_annotator):
    page = mic_page
    worker = _open_item(page, make_annotator, "rita", readings=2)
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
    expect(page.locator("body")).to_contain_text("Saved. Thank you!")  # the done page: the job's only item

    response = Response.objects.get(worker=worker)
    readings = list(SpokenReading.objects.filter(response=response).order_by("index"))
    assert [r.index for r in readings] == [0, 1] and all(r.sample_rate == 16000 for r in readings)
    assert readings[1].seconds > readings[0].seconds  # the second take of reading 2 is the longer one
    audio = read_wav(readings[0].audio.open("rb").read())
    assert audio.sample_rate == 16000 and 1.0 <= audio.seconds <= 3.0


def test_submitting_without_every_reading_is_stopped_in_the_page(mic_page, make_annotator):
    page = mic_page
    worker = _open_item(page, make_annotator, "sam", readings=2)
    _record(page, "reading_1")
    page.locator("#submit-button").click()
    expect(page.locator("#mic-error")).to_contain_text("Record every reading before submitting: 1 still missing.")
    assert not Response.objects.filter(worker=worker).exists()


# Keeps the page's microphone stream reachable, so a test can mute it: a muted track records silence,
# the take a worker makes when their microphone is muted.
EXPOSE_MIC = """(() => {
  const get = navigator.mediaDevices.getUserMedia.bind(navigator.mediaDevices);
  navigator.mediaDevices.getUserMedia = (c) => get(c).then((s) => { window.testMic = s; return s; });
})()"""


def _mute(page, muted):
    page.evaluate("(muted) => window.testMic.getAudioTracks().forEach((t) => { t.enabled = !muted; })", muted)


def _recorded_seconds(page, name) -> float:
    return float(re.search(r"Recorded: (\d+\.\d) s", page.locator(f"#state_{name}").inner_text()).group(1))


def test_only_the_refused_reading_is_recorded_again(mic_page, make_annotator):
    page = mic_page
    page.add_init_script(EXPOSE_MIC)
    worker = _open_item(page, make_annotator, "una", readings=3, dialogs=2)  # a next item to go on to
    first_page = page.url

    _record(page, "reading_1")
    _mute(page, True)
    _record(page, "reading_2")  # the microphone was muted: a silent take
    _mute(page, False)
    _record(page, "reading_3", seconds=2.2)
    kept = {name: _recorded_seconds(page, name) for name in ("reading_1", "reading_3")}

    page.locator("#submit-button").click()
    expect(page.locator("#problems_reading_2")).to_contain_text("Reading 2: The recording is silent")
    expect(page.locator("#mic-error")).to_contain_text("record the reading marked below again")
    for name in kept:
        expect(page.locator(f"#problems_{name}")).to_have_text("Accepted: kept for your next submission.")
        expect(page.locator(f"#playback_{name}")).to_be_visible()
    assert page.url == first_page  # no reload: the recordings are still in the page
    assert page.evaluate("() => [...document.querySelectorAll('.reading-file')].map((f) => f.files.length)") == [1, 1, 1]
    expect(page.locator("#record_reading_2")).to_be_focused()
    assert not Response.objects.filter(worker=worker).exists() and not SpokenReading.objects.exists()

    _record(page, "reading_2", seconds=1.3)  # only the refused one, with the microphone on
    expect(page.locator("#problems_reading_2")).to_be_empty()
    page.locator("#submit-button").click()
    expect(page.locator("#saved-notice")).to_have_text("Saved. Here is your next item.")  # the next item's page
    expect(page).not_to_have_url(re.compile(r"saved=1"))  # the notice is said once: the address drops its mark
    assert page.url != first_page

    response = Response.objects.get(worker=worker)
    readings = {r.index: r for r in SpokenReading.objects.filter(response=response)}
    assert sorted(readings) == [0, 1, 2]
    assert readings[0].seconds == pytest.approx(kept["reading_1"], abs=0.06)  # the first takes, kept
    assert readings[2].seconds == pytest.approx(kept["reading_3"], abs=0.06)
    assert readings[2].seconds > readings[1].seconds


def test_a_failed_connection_keeps_the_recordings(mic_page, make_annotator):
    page = mic_page
    worker = _open_item(page, make_annotator, "vic", readings=1)
    _record(page, "reading_1")

    def cut(route):
        route.abort() if route.request.method == "POST" else route.continue_()

    page.route("**/work/**", cut)
    page.locator("#submit-button").click()
    expect(page.locator("#mic-error")).to_contain_text("could not be sent")
    expect(page.locator("#playback_reading_1")).to_be_visible()
    expect(page.locator("#submit-button")).to_be_enabled()
    assert not Response.objects.filter(worker=worker).exists()

    page.unroute("**/work/**", cut)  # back online: the same recording is submitted
    page.locator("#submit-button").click()
    expect(page.locator("body")).to_contain_text("Saved. Thank you!")
    assert SpokenReading.objects.filter(response__worker=worker).count() == 1


def test_a_refused_microphone_is_explained(page, make_annotator):
    """The ordinary test browser has no fake device and grants nothing: the page says what to do."""
    _open_item(page, make_annotator, "tess", readings=1)
    page.locator("#record_reading_1").click()
    expect(page.locator("#mic-error")).to_contain_text(re.compile("microphone", re.I))


def test_leaving_with_a_recording_not_sent_asks_first_and_skip_does_not(mic_page, make_annotator):
    """A reload lost every recording without a word (drafts.js keeps text, not files): the browser
    now asks first while a recording is not sent. Submit and Skip leave without asking (the submit
    test above would stall on a question)."""
    page = mic_page
    worker = _open_item(page, make_annotator, "lena", readings=2, dialogs=2)
    url = page.url
    page.evaluate("() => setTimeout(() => location.reload(), 0)")  # nothing recorded: no question
    page.wait_for_load_state()
    expect(page.locator("#record_reading_1")).to_be_visible()

    _record(page, "reading_1")
    with page.expect_event("dialog") as asked:
        page.evaluate("() => setTimeout(() => location.reload(), 0)")
    assert asked.value.type == "beforeunload"
    asked.value.dismiss()  # stay
    assert page.url == url
    assert page.evaluate("() => document.getElementById('id_reading_1').files.length") == 1  # the take is still there

    page.locator("#skip-button").click()  # the worker chose to give the item back: asked nothing
    expect(page).not_to_have_url(url)
    assert not Response.objects.filter(worker=worker).exists()
