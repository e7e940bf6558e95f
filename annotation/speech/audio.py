"""Audio as numpy arrays: read and write 16-bit PCM WAV, resample, and check a worker's recording."""
from __future__ import annotations

import io
import math
import struct
import wave
from dataclasses import dataclass
from math import gcd
from typing import TYPE_CHECKING

from quorum.lazy_modules import lazy

if TYPE_CHECKING:
    import numpy as np
else:
    np = lazy("numpy")


class RecordingError(ValueError):
    """A recording that cannot be used; the message says what the worker must do about it."""


@dataclass(frozen=True)
class Audio:
    samples: np.ndarray  # float32, mono, in [-1, 1]
    sample_rate: int
    seconds: float

    @classmethod
    def from_samples(cls, samples: np.ndarray, sample_rate: int) -> Audio:
        samples = np.asarray(samples, dtype=np.float32)
        return cls(samples=samples, sample_rate=int(sample_rate), seconds=len(samples) / float(sample_rate))

    def pcm16(self) -> bytes:
        """Little-endian 16-bit samples, what recognisers take as raw input."""
        return (np.clip(self.samples, -1.0, 1.0) * 32767.0).round().astype("<i2").tobytes()

    def rms_dbfs(self) -> float:
        """Loudness as RMS relative to full scale; -inf for digital silence."""
        if not len(self.samples):
            return -math.inf
        rms = float(np.sqrt(np.mean(np.square(self.samples, dtype=np.float64))))
        return 20.0 * math.log10(rms) if rms > 0 else -math.inf

    def loudest_dbfs(self) -> float:
        """The level of the recording's loud parts: the 95th percentile of its 30 ms frames' levels.
        The silence check reads this, not the whole recording's RMS, which a quiet reader who waits
        before and after speaking brought under the threshold (refused as silent, speech and all)."""
        return float(np.percentile(frame_levels(self), 95))


FRAME_SECONDS = 0.03


def frame_levels(audio: Audio) -> np.ndarray:
    """RMS level of each 30 ms frame in dBFS (-120 for digital silence)."""
    size = max(1, int(audio.sample_rate * FRAME_SECONDS))
    count = len(audio.samples) // size
    if count == 0:
        return np.full(1, -120.0)
    frames = audio.samples[: count * size].reshape(count, size).astype(np.float64)
    rms = np.sqrt(np.mean(np.square(frames), axis=1))
    return 20.0 * np.log10(np.maximum(rms, 1e-6))


NOT_A_WAV = "The file is not a WAV recording; record again in the page."
# What the standard library's wave raises for a file it cannot read. RuntimeError is what its chunk
# reader raises, bare, for a chunk (e.g. `fmt `) that says it is longer than the file (found by
# tests/test_fuzz_hardening.py: a 500 on submission before).
WAVE_ERRORS = (wave.Error, EOFError, ValueError, RuntimeError, struct.error)


def read_wav(data: bytes) -> Audio:
    """Decode 16-bit PCM WAV (mono, or stereo averaged to mono). Anything else is a RecordingError."""
    try:
        with wave.open(io.BytesIO(data), "rb") as reader:
            channels = reader.getnchannels()
            width = reader.getsampwidth()
            rate = reader.getframerate()
            frames = reader.readframes(reader.getnframes())
    except WAVE_ERRORS as exc:
        # wave raises wave.Error for non-PCM formats (e.g. float, compressed) and for non-RIFF input.
        raise RecordingError(NOT_A_WAV) from exc
    if width != 2:
        raise RecordingError(f"The recording uses {8 * width}-bit samples; it must be 16-bit PCM WAV. Record again in the page.")
    if channels < 1 or rate <= 0:
        raise RecordingError(NOT_A_WAV)
    pcm = np.frombuffer(frames[: len(frames) - len(frames) % (2 * channels)], dtype="<i2")
    samples = pcm.reshape(-1, channels).astype(np.float32).mean(axis=1) / 32768.0
    return Audio.from_samples(samples, rate)


def write_wav(audio: Audio) -> bytes:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as writer:
        writer.setnchannels(1)
        writer.setsampwidth(2)
        writer.setframerate(audio.sample_rate)
        writer.writeframes(audio.pcm16())
    return buffer.getvalue()


def resample(audio: Audio, rate: int) -> Audio:
    """Polyphase resampling (scipy), which filters against aliasing when going down."""
    if rate == audio.sample_rate:
        return audio
    from scipy.signal import resample_poly  # here, not at the top: web workers that never resample skip scipy

    divisor = gcd(rate, audio.sample_rate)
    samples = resample_poly(audio.samples, rate // divisor, audio.sample_rate // divisor)
    return Audio.from_samples(np.clip(samples, -1.0, 1.0), rate)


#: Fixed limits on a worker's recording, checked from the WAV header before it is decoded or stored:
#: what a browser records (16-48 kHz, mono or stereo) and what a transcription can afford. A
#: declared rate of millions of Hz made the recogniser resample to gigabytes (issue 25).
MAX_SAMPLE_RATE = 48_000
MAX_CHANNELS = 2
MAX_RECORDING_SECONDS = 120.0
MAX_RECORDING_BYTES = 48_000 * 2 * 2 * 60 + 4096  # a minute of 48 kHz 16-bit stereo, and headers


def _check_header(data: bytes, max_seconds: float) -> None:
    """Refuse a recording by its size and WAV header alone (no samples read)."""
    if len(data) > MAX_RECORDING_BYTES:
        raise RecordingError(
            f"The recording is {len(data) / 1e6:.1f} MB; at most {MAX_RECORDING_BYTES / 1e6:.1f} MB is accepted. Record again in the page."
        )
    try:
        with wave.open(io.BytesIO(data), "rb") as reader:
            channels, rate, frames = reader.getnchannels(), reader.getframerate(), reader.getnframes()
    except WAVE_ERRORS as exc:
        raise RecordingError(NOT_A_WAV) from exc
    if rate > MAX_SAMPLE_RATE:
        raise RecordingError(f"The recording's sample rate is {rate} Hz; at most {MAX_SAMPLE_RATE} Hz is accepted. Record again in the page.")
    if not 1 <= channels <= MAX_CHANNELS:
        raise RecordingError(f"The recording has {channels} channels; it must be mono or stereo. Record again in the page.")
    if rate > 0 and frames / rate > max_seconds + 1:
        raise RecordingError(
            f"The recording says it is {frames / rate:.0f} s long; it must be at most {max_seconds:g} s. "
            "Stop recording when you have read the sentence."
        )


def check_recording(
    data: bytes,
    *,
    min_seconds: float = 1.0,
    max_seconds: float = 30.0,
    min_sample_rate: int = 16000,
    silence_dbfs: float = -50.0,
) -> Audio:
    """Decode a worker's recording and refuse one that cannot be transcribed, saying what to fix.
    The size, sample rate, channels and declared duration are checked against the fixed limits
    above before anything is decoded; `max_seconds` is capped at MAX_RECORDING_SECONDS."""
    max_seconds = min(float(max_seconds), MAX_RECORDING_SECONDS)
    _check_header(data, max_seconds)
    audio = read_wav(data)
    if audio.sample_rate < min_sample_rate:
        raise RecordingError(
            f"The recording's sample rate is {audio.sample_rate} Hz; at least {min_sample_rate} Hz is needed. "
            "Record again in the page (not by telephone or a low-quality setting)."
        )
    if audio.seconds < min_seconds:
        raise RecordingError(
            f"The recording is {audio.seconds:.1f} s long; it must be at least {min_seconds:g} s. "
            "Read the whole sentence aloud."
        )
    if audio.seconds > max_seconds:
        raise RecordingError(
            f"The recording is {audio.seconds:.1f} s long; it must be at most {max_seconds:g} s. "
            "Stop recording when you have read the sentence."
        )
    level = audio.loudest_dbfs()
    if level < silence_dbfs:
        shown = "silent" if level <= -90 else f"{level:.0f} dBFS at its loudest"
        raise RecordingError(
            f"The recording is silent ({shown}). Check that the microphone is allowed and not muted, "
            "then read the sentence aloud."
        )
    return audio
