"""An HTTP transcription endpoint: POST the WAV (audio/wav), get `{"text": ..., "confidence": ...}` back.

The expected text is not sent: the endpoint is someone else's service and the job's text may be private.
"""
from __future__ import annotations

import time
from collections.abc import Sequence

import requests

from ..audio import read_wav
from . import AsrBackend, AsrFailed, AsrUnavailable, Transcript


class HttpBackend(AsrBackend):
    name = "http"

    def __init__(self, *, http_url: str | None = None, http_timeout: float = 30.0, session=None, **_ignored):
        if not http_url:
            raise AsrUnavailable("The http backend needs an endpoint: set QUORUM_ASR_HTTP_URL.")
        self.url = http_url
        self.timeout = http_timeout
        self.session = session or requests.Session()

    def transcribe(self, wav: bytes, *, language: str = "en", adapt_to: Sequence[str] = ()) -> Transcript:
        audio = read_wav(wav)
        started = time.monotonic()
        try:
            response = self.session.post(self.url, data=wav, params={"language": language},
                                         headers={"Content-Type": "audio/wav"}, timeout=self.timeout)
        except requests.Timeout as exc:
            raise AsrFailed(f"The transcription endpoint did not answer within {self.timeout:g} s.") from exc
        except requests.RequestException as exc:
            raise AsrFailed(f"The transcription endpoint could not be reached ({type(exc).__name__}).") from exc
        if response.status_code != 200:
            raise AsrFailed(f"The transcription endpoint answered HTTP {response.status_code}.")
        try:
            body = response.json()
            text = body["text"]
            confidence = body.get("confidence")
            if not isinstance(text, str) or not (confidence is None or isinstance(confidence, int | float)):
                raise TypeError
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise AsrFailed('The transcription endpoint did not answer JSON {"text": str, "confidence": number|null}.') from exc
        return Transcript(text=text, confidence=None if confidence is None else float(confidence),
                          decode_seconds=time.monotonic() - started, audio_seconds=audio.seconds, backend=self.name)
