"""The spoken-reading part of the demo: one user turn read aloud four times by a simulated annotator
whose voice is espeak-ng, through the real HTTP views (the work page's multipart form), then what the
ASR backend heard of each reading.

The annotator first submits a silent take of reading 1, as a worker with a muted microphone would,
sees it refused with what to fix, and submits again. The readings vary the wording slightly under
the same meaning, as CGoDial asks (PROTOCOLS.md 6b)."""
import logging
import random

import numpy as np
import requests

from ..models import Response, SpokenReading
from ..services.jobs import Selection, create_job, launch_job
from ..speech.audio import Audio, write_wav
from ..speech.tts import synthesize
from ..speech.wer import wer
from .annotators import parse_task_page

#: How a reader varies an utterance slightly under the same meaning.
VARIATIONS = ("{u}", "Hello, {u}", "{u} Thank you.", "Well, {u}")
SPEEDS = (165, 150, 180, 160)  # words per minute: four takes are not read at one pace


def readings_for(utterance: str, k: int, rng: random.Random) -> list[tuple[str, bytes]]:
    """k (text, WAV) readings of `utterance`, each a slight variation spoken by espeak-ng."""
    out = []
    for i in range(k):
        text = VARIATIONS[i % len(VARIATIONS)].format(u=utterance.rstrip(".") + ".")
        out.append((text, synthesize(text, speed=SPEEDS[i % len(SPEEDS)] + rng.randint(-5, 5))))
    return out


class SimulatedReader:
    def __init__(self, base_url: str, username: str, password: str, *, seed: int = 0):
        self.base_url = base_url.rstrip("/")
        self.username, self.password = username, password
        self.session = requests.Session()
        self.session.trust_env = False  # the demo's own server: as SimulatedAnnotator's session
        self.rng = random.Random(seed)

    def _post(self, url, data, files=None):
        url = url if url.startswith("http") else self.base_url + url
        data = {**data, "csrfmiddlewaretoken": self.session.cookies.get("csrftoken", "")}
        return self.session.post(url, data=data, files=files, headers={"Referer": url}, timeout=120)

    def login(self):
        self.session.get(self.base_url + "/accounts/login/", timeout=60)
        if "/accounts/login/" in self._post("/accounts/login/", {"username": self.username, "password": self.password}).url:
            raise RuntimeError(f"{self.username} could not log in")

    def read_one(self, job_id: int, k: int) -> dict:
        """Claim the job's next item, submit a silent first take (refused), then k readings."""
        page = self._post(f"/jobs/{job_id}/next/", {})
        if "/work/" not in page.url or page.status_code != 200:
            raise RuntimeError(f"{self.username} was offered no spoken-reading item")
        utterance = parse_task_page(page.text).utterance
        readings = readings_for(utterance, k, self.rng)
        files = {f"reading_{i + 1}": (f"reading_{i + 1}.wav", wav, "audio/wav") for i, (_text, wav) in enumerate(readings)}
        muted = write_wav(Audio.from_samples(np.zeros(32000, dtype=np.float32), 16000))  # a muted microphone
        request_log = logging.getLogger("django.request")
        level = request_log.level
        request_log.setLevel(logging.ERROR)  # the refusal is a 400 by design; the demo prints it
        try:
            refused = self._post(page.url, {"active_seconds": "60"}, files={**files, "reading_1": ("reading_1.wav", muted, "audio/wav")})
        finally:
            request_log.setLevel(level)
        problems = parse_task_page(refused.text).problems if refused.status_code == 400 else []
        saved = self._post(page.url, {"active_seconds": "75"}, files=files)
        if saved.status_code != 200 or saved.url == page.url:
            raise RuntimeError(f"the readings were refused: {parse_task_page(saved.text).problems}")
        return {"utterance": utterance, "read": [text for text, _wav in readings], "refused_first": problems}


def run_spoken_demo(corpus, organizer, server, username: str, password: str, *, seed: int, stamp: str, say=print) -> dict:
    """One spoken-reading item, done over HTTP by a simulated reader; prints and returns the hypotheses.
    The job's other items (the dialog's later user turns) are left open for the demo logins."""
    job = create_job(
        corpus=corpus, name=f"Demo spoken readings {stamp}", task_type="spoken_reading",
        # The first dialog's user turns: the reader reads the first one (a request with slot values);
        # the recognizer is adapted to all of them, the job's own text.
        selection=Selection(mode="dialogs", dialog_ids=[corpus.dialogs.order_by("position").values_list("external_id", flat=True)[0]]),
        redundancy=1, created_by=organizer,
        instructions="Read the highlighted user turn aloud four times, varying the wording slightly but keeping its meaning.",
    )
    launch_job(job)
    k = job.settings["readings"]
    reader = SimulatedReader(server.url, username, password, seed=seed)
    reader.login()
    done = reader.read_one(job.pk, k)
    response = Response.objects.get(item__job=job)  # the one item read
    rows = []
    for reading, text in zip(SpokenReading.objects.filter(response=response).order_by("index"), done["read"], strict=True):
        rows.append({
            "reading": reading.index + 1, "read": text, "asr": reading.asr_text, "confidence": reading.asr_confidence,
            "wer": round(wer(text, reading.asr_text), 3) if reading.transcribed_at else None,
            "seconds": round(reading.seconds, 2), "error": reading.asr_error,
        })
    say(f"8. Spoken reading (job {job.pk}): {username} read {done['utterance']!r} {k} times through {server.url}")
    for message in done["refused_first"]:
        say(f"   First try refused: {message}")
    for row in rows:
        heard = f"{row['asr']!r} (confidence {row['confidence']:.3f}, WER against the text read {row['wer']:.0%})" if row["wer"] is not None else f"not transcribed: {row['error']}"
        say(f"   Reading {row['reading']} ({row['seconds']} s) read {row['read']!r}")
        say(f"             ASR heard {heard}")
    return {"job": job.pk, "utterance": done["utterance"], "refused_first": done["refused_first"], "readings": rows}
