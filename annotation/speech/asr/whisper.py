"""A Whisper-family model from a directory the operator provides, run by faster-whisper (CTranslate2).

Nothing is downloaded: the directory must hold a converted model (e.g. from `ct2-transformers-converter`
or a faster-whisper model snapshot), and faster-whisper must be installed by the operator.
"""
from __future__ import annotations

import math
import os
import time
from collections.abc import Sequence
from pathlib import Path

from ..audio import read_wav, resample
from . import AsrBackend, AsrUnavailable, Transcript

SAMPLE_RATE = 16000
PROMPT_CHARS = 800  # Whisper's prompt holds about 224 tokens; the end of the expected text is kept


class WhisperBackend(AsrBackend):
    name = "whisper"

    def __init__(self, *, whisper_dir: str | os.PathLike | None = None, device: str = "cpu",
                 compute_type: str = "int8", **_ignored):
        if not whisper_dir:
            raise AsrUnavailable("The whisper backend needs a model directory: set QUORUM_ASR_WHISPER_DIR.")
        if not Path(whisper_dir).is_dir():
            raise AsrUnavailable("QUORUM_ASR_WHISPER_DIR is not a directory; point it at a faster-whisper model directory.")
        try:
            from faster_whisper import WhisperModel
        except ImportError as exc:
            raise AsrUnavailable(
                "The whisper backend needs the Python package faster-whisper (pip install faster-whisper) "
                "and a model directory in QUORUM_ASR_WHISPER_DIR."
            ) from exc
        self.model = WhisperModel(str(whisper_dir), device=device, compute_type=compute_type, local_files_only=True)

    def transcribe(self, wav: bytes, *, language: str = "en", adapt_to: Sequence[str] = ()) -> Transcript:
        audio = resample(read_wav(wav), SAMPLE_RATE)
        prompt = " ".join(adapt_to)[-PROMPT_CHARS:] or None
        started = time.process_time()
        segments, _info = self.model.transcribe(audio.samples, language=language.split("-")[0], initial_prompt=prompt)
        segments = list(segments)  # the generator does the decoding
        text = " ".join(segment.text.strip() for segment in segments).strip()
        confidence = (
            sum(math.exp(segment.avg_logprob) for segment in segments) / len(segments) if segments else None
        )
        return Transcript(text=text, confidence=confidence, decode_seconds=time.process_time() - started,
                          audio_seconds=audio.seconds, backend=self.name)
