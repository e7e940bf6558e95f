"""Hostile uploads of a spoken reading (issue 25, item 3): the size, sample rate, channels and
declared duration are checked against fixed limits from the WAV header, before the samples are
decoded or anything stored, so no upload can make a transcription use gigabytes. Each case a test."""
import io
import struct
import time
import tracemalloc
import wave

import numpy as np
import pytest

from annotation.speech.audio import MAX_RECORDING_BYTES, RecordingError, check_recording


def wav(rate=16000, channels=1, seconds=2.0, width=2, frames=None) -> bytes:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as writer:
        writer.setnchannels(channels)
        writer.setsampwidth(width)
        writer.setframerate(rate)
        count = int(rate * seconds) if frames is None else frames
        t = np.arange(count) / max(rate, 1)
        samples = (0.3 * np.sin(2 * np.pi * 440 * t) * 32767).astype("<i2")
        writer.writeframes(np.repeat(samples, channels).tobytes() if width == 2 else b"\x80" * count * channels * width)
    return buffer.getvalue()


def declared_frames(data: bytes, frames: int) -> bytes:
    """The same 16-bit mono file with a data chunk that claims `frames` frames (the header lies)."""
    at = data.index(b"data") + 4
    return data[:at] + struct.pack("<I", min(2 * frames, 2**32 - 1)) + data[at + 4:]


def float_wav() -> bytes:
    data = bytearray(wav())
    data[20:22] = struct.pack("<H", 3)  # WAVE_FORMAT_IEEE_FLOAT
    return bytes(data)


CASES = {
    "rate_7999993": (lambda: wav(rate=7_999_993, seconds=0.01), "7999993 Hz"),
    "rate_7999993_16mb": (lambda: wav(rate=7_999_993, seconds=1.0), "16.0 MB"),  # the file: refused by size first
    "rate_96000": (lambda: wav(rate=96_000, seconds=1.5), "at most 48000 Hz"),
    "eight_channels": (lambda: wav(channels=8, seconds=1.5), "8 channels"),
    "declares_an_hour": (lambda: declared_frames(wav(seconds=1.5), 16000 * 3600), "says it is 3600 s"),
    "declares_max_frames": (lambda: declared_frames(wav(seconds=1.5), 2**32 - 1), "says it is"),
    "too_many_bytes": (lambda: wav(rate=48_000, channels=2, seconds=65), "MB"),
    "rate_zero": (lambda: wav(rate=1, seconds=2.0)[:24] + struct.pack("<I", 0) + wav(rate=1, seconds=2.0)[28:], "not a WAV"),
    "eight_bit": (lambda: wav(width=1), "8-bit"),
    "float_samples": (float_wav, "not a WAV"),
    "truncated_header": (lambda: wav()[:30], "not a WAV"),
    "empty": (lambda: b"", "not a WAV"),
    "riff_garbage": (lambda: b"RIFF\xff\xff\xff\xffWAVEfmt " + b"\xff" * 100, "not a WAV"),
    "mp3_named_wav": (lambda: b"ID3\x03\x00\x00\x00\x00\x00\x00" + b"\xff\xfb" * 1000, "not a WAV"),
    # Found by tests/test_fuzz_hardening.py: wave's chunk reader raised a bare RuntimeError (a 500)
    # for a `fmt ` chunk that says it is longer than the file.
    "fmt_chunk_longer_than_the_file": (lambda: wav()[:16] + struct.pack("<I", 65535) + wav()[20:], "not a WAV"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_hostile_recording_is_refused_quickly_and_cheaply(case):
    make, says = CASES[case]
    data = make()
    tracemalloc.start()
    started = time.process_time()
    with pytest.raises(RecordingError) as refused:
        check_recording(data)
    cpu = time.process_time() - started
    _now, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert says in str(refused.value), str(refused.value)
    assert cpu < 0.5 and peak < 4 * 1024 * 1024 + len(data), (cpu, peak)


def test_the_limits_still_accept_what_browsers_record():
    for rate, channels in ((16000, 1), (44100, 2), (48000, 1)):
        assert check_recording(wav(rate=rate, channels=channels, seconds=2.0)).sample_rate == rate
    assert len(wav(rate=48_000, channels=2, seconds=30)) < MAX_RECORDING_BYTES


def test_an_organizer_cannot_raise_the_duration_past_the_fixed_limit():
    with pytest.raises(RecordingError, match="at most 120 s"):
        check_recording(declared_frames(wav(seconds=1.5), 16000 * 200), max_seconds=10_000)
