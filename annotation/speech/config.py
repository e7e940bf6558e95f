"""The one place the speech engine meets Django settings: build the configured ASR backend."""
from __future__ import annotations

from django.conf import settings

from .asr import AsrBackend, get_backend

#: Which languages each recogniser understands, in a builder's words.
_LANGUAGES = {
    "pocketsphinx": "English only",
    "whisper": "the many languages of its Whisper speech model",
    "http": "the languages of the transcription service it is connected to",
}


def recogniser_languages() -> str:
    """What the speech recogniser this server is configured with understands, in plain words."""
    return _LANGUAGES.get(settings.QUORUM_ASR_BACKEND, "the languages its operator set it up for")


def asr_backend() -> AsrBackend:
    """The backend QUORUM_ASR_BACKEND names, with its options from the QUORUM_ASR_* settings."""
    return get_backend(
        settings.QUORUM_ASR_BACKEND,
        whisper_dir=settings.QUORUM_ASR_WHISPER_DIR or None,
        http_url=settings.QUORUM_ASR_HTTP_URL or None,
        http_timeout=settings.QUORUM_ASR_HTTP_TIMEOUT,
        cache_dir=settings.QUORUM_ASR_CACHE_DIR or None,
    )
