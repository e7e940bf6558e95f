"""Speech recognition behind one small interface, with backends chosen by name.

- `pocketsphinx` (default): offline, the English model that ships inside the pocketsphinx wheel,
  adapted to the job's own text (`adapt_to`) by a trigram language model built from it.
- `whisper`: a Whisper-family model from a directory the operator provides (faster-whisper).
- `http`: POST the WAV to a transcription endpoint that answers `{"text", "confidence"}`.

Options come in as keyword arguments (this package reads no settings; `annotation/speech/config.py`
does that for Django callers).
"""
from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass

DEFAULT_BACKEND = "pocketsphinx"
BACKENDS = {
    "pocketsphinx": "annotation.speech.asr.sphinx:PocketsphinxBackend",
    "whisper": "annotation.speech.asr.whisper:WhisperBackend",
    "http": "annotation.speech.asr.http_backend:HttpBackend",
}


class AsrUnavailable(RuntimeError):
    """The backend cannot run as configured (missing package, model, language, URL); retrying won't help."""


class AsrFailed(RuntimeError):
    """A transcription attempt failed for a reason that may pass (endpoint down, timeout); a retry may help."""


@dataclass
class Transcript:
    text: str
    confidence: float | None  # in [0, 1] where the backend gives one
    decode_seconds: float  # CPU (local backends) or wall-clock (http) time spent on this recording
    audio_seconds: float
    backend: str


class AsrBackend:
    name = ""

    def transcribe(self, wav: bytes, *, language: str = "en", adapt_to: Sequence[str] = ()) -> Transcript:
        """Transcribe 16-bit PCM WAV bytes. `adapt_to` is the text the speech is expected to be close to."""
        raise NotImplementedError


def get_backend(name: str | None = None, **options) -> AsrBackend:
    """The backend called `name` (None: the default, pocketsphinx), built with its options."""
    name = name or DEFAULT_BACKEND
    if name not in BACKENDS:
        raise AsrUnavailable(f"Unknown ASR backend {name!r}; QUORUM_ASR_BACKEND must be one of: {', '.join(BACKENDS)}.")
    module_name, _, class_name = BACKENDS[name].partition(":")
    # Backends are imported on demand so a missing optional package only matters to its own backend.
    backend_class = getattr(importlib.import_module(module_name), class_name)
    return backend_class(**options)


__all__ = ["AsrBackend", "AsrFailed", "AsrUnavailable", "BACKENDS", "DEFAULT_BACKEND", "Transcript", "get_backend"]
