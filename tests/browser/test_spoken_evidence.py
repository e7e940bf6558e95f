"""What a worker and a builder see of the evidence that a turn was read, in a real browser whose
fake microphone plays a cough in a quiet room: the worker is told the take has almost no speech (a
hint; the take may still be sent), the take is accepted (nothing is refused for it), and the
builder's review queue marks the reading "Worth a listen" with its seconds of speech. A refusal of
every reading no longer says "your other readings are kept"."""
import re

import numpy as np
import pytest
from playwright.sync_api import expect

from annotation.models import Response
from annotation.services import readings
from annotation.speech.audio import Audio, write_wav
from tests.factories import make_corpus, make_live_job

from .test_annotator_flow import claim_by_keyboard, log_in
from .test_spoken_reading import EXPOSE_MIC, _mute, _record, browser_with_microphone, fresh_tab

pytestmark = [pytest.mark.browser, pytest.mark.speech, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def no_transcription(monkeypatch):
    """As in test_spoken_reading: the inline recogniser would hold each saving post."""
    monkeypatch.setattr(readings, "queue_transcription", lambda reading_id: None)


@pytest.fixture(scope="module")
def cough_browser(chromium_browser, tmp_path_factory):
    """A Chromium whose microphone plays a 0.2 s burst of noise between a second of quiet room on
    each side (Chromium loops the file), one for the module."""
    rng = np.random.default_rng(5)
    room = lambda seconds: rng.normal(0, 0.003, int(seconds * 16000))  # noqa: E731
    cough = tmp_path_factory.mktemp("mic") / "cough.wav"
    cough.write_bytes(write_wav(Audio.from_samples(np.concatenate([room(1.0), rng.normal(0, 0.3, 3200), room(1.0)]), 16000)))
    yield from browser_with_microphone(chromium_browser, cough)


@pytest.fixture
def cough_page(cough_browser, live_server):
    yield from fresh_tab(cough_browser, live_server)


def _open_item(page, make_annotator, username, readings):
    _user, worker = make_annotator(username)
    job = make_live_job(make_corpus(name="spoken", dialogs=1, user_turns=1), task_type="spoken_reading",
                        name="Read aloud", settings={"readings": readings})
    log_in(page, username, f"{username}-pass-1")
    claim_by_keyboard(page, "Read aloud")
    return job, worker


def test_a_cough_is_hinted_to_the_worker_accepted_and_marked_for_the_builder(cough_page, make_annotator, organizer):
    page = cough_page
    job, worker = _open_item(page, make_annotator, "coughing-carl", readings=1)
    _record(page, "reading_1", seconds=2.2)
    expect(page.locator("#state_reading_1")).to_contain_text(
        re.compile(r"we hear almost no speech in it \(0\.\d s\): play it back, and record it again if your reading is not there"))
    page.locator("#submit-button").click()
    expect(page.locator("body")).to_contain_text("Saved. Thank you!")  # a hint, not a refusal
    response = Response.objects.get(worker=worker)
    assert response.answers["reading_1"]["speech_seconds"] < 0.5

    page.context.clear_cookies()
    page.goto(f"/accounts/login/?next=/organize/jobs/{job.pk}/review/")
    page.locator("#id_username").fill("olga")
    page.locator("#id_password").fill("organizer-pass-1")
    page.locator("#id_password").press("Enter")
    card = page.locator(f"#response-{response.pk}")
    expect(card.locator(".variant-reading_1")).to_contain_text(re.compile(r"s of audio, 0\.\d s of it speech"))
    expect(card.locator(".reading-doubts")).to_contain_text(re.compile(r"Worth a listen: little speech: sound above the background for only 0\.\d s"))
    expect(card.locator(".reading-doubts-summary")).to_contain_text("Reading 1: little speech")


def test_refusing_every_reading_does_not_speak_of_other_readings_kept(cough_page, make_annotator):
    page = cough_page
    page.add_init_script(EXPOSE_MIC)
    _job, worker = _open_item(page, make_annotator, "muted-mia", readings=2)
    _record(page, "reading_1")
    _mute(page, True)
    _record(page, "reading_1")  # again, muted: both takes silent
    _record(page, "reading_2")
    page.locator("#submit-button").click()
    expect(page.locator("#mic-error")).to_have_text("Not saved: record the 2 readings marked below again, then submit.")
    expect(page.locator("#problems_reading_1")).to_contain_text("The recording is silent")
    assert not Response.objects.filter(worker=worker).exists()
