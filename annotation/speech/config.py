"""The one place the speech engine meets Django settings: build the configured ASR backend."""
from __future__ import annotations

from django.conf import settings

from .asr import AsrBackend, get_backend


def asr_backend() -> AsrBackend:
    """The backend QUORUM_ASR_BACKEND names, with its options from the QUORUM_ASR_* settings."""
    return get_backend(
        settings.QUORUM_ASR_BACKEND,
        whisper_dir=settings.QUORUM_ASR_WHISPER_DIR or None,
        http_url=settings.QUORUM_ASR_HTTP_URL or None,
        http_timeout=settings.QUORUM_ASR_HTTP_TIMEOUT,
        cache_dir=settings.QUORUM_ASR_CACHE_DIR or None,
    )
