"""Recordings for the spoken-reading tests, made in the test run (no audio files are committed):
speech synthesised with espeak-ng through the speech engine, silence, tones, and a few non-WAVs."""
from functools import lru_cache

import numpy as np
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.speech.audio import Audio, write_wav
from annotation.speech.tts import synthesize


@lru_cache(maxsize=32)
def speech(text: str) -> bytes:
    """`text` spoken by espeak-ng, 16 kHz mono 16-bit WAV (cached: synthesis is a subprocess)."""
    return synthesize(text)


def silence(seconds: float = 2.0, rate: int = 16000) -> bytes:
    return write_wav(Audio.from_samples(np.zeros(int(seconds * rate), dtype=np.float32), rate))


def tone(seconds: float, rate: int = 16000, hz: float = 440.0) -> bytes:
    t = np.arange(int(seconds * rate)) / rate
    return write_wav(Audio.from_samples((0.3 * np.sin(2 * np.pi * hz * t)).astype(np.float32), rate))


def upload(name: str, data: bytes) -> SimpleUploadedFile:
    return SimpleUploadedFile(f"{name}.wav", data, content_type="audio/wav")


def readings_of(text: str, k: int) -> dict:
    """Good answers for a spoken-reading item with k readings: k slightly different readings."""
    variants = [text, f"{text} Thanks.", f"Hello. {text}", f"Well, {text}"]
    return {f"reading_{i + 1}": upload(f"reading_{i + 1}", speech(variants[i % len(variants)])) for i in range(k)}
