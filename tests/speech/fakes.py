"""A stand-in speaker and recogniser whose word error rate is a known function of the SNR.

The speaker says every text as the same quiet tone (known power); the recogniser measures the
noise power in what it hears, so it knows the SNR, and deletes the fraction
`1 / (1 + exp((snr - MIDPOINT_DB) / SLOPE_DB))` of the words (at least `min_deleted` words).
Calls come in corpus order, so a call counter says which utterance is being heard.
"""
import math

import numpy as np

from annotation.speech.asr import AsrBackend, Transcript
from annotation.speech.audio import Audio, read_wav, write_wav
from annotation.speech.wer import normalize_words

AMPLITUDE = 0.05  # quiet enough that noise at -10 dB SNR stays below the mixer's peak limit
SIGNAL_POWER = AMPLITUDE**2 / 2
MIDPOINT_DB, SLOPE_DB = 10.0, 2.0


def deleted_fraction(snr_db: float) -> float:
    return 1.0 / (1.0 + math.exp((snr_db - MIDPOINT_DB) / SLOPE_DB))


def snr_for(fraction: float) -> float:
    """The inverse of deleted_fraction."""
    return MIDPOINT_DB + SLOPE_DB * math.log(1.0 / fraction - 1.0)


def fake_tts(text: str, **_options) -> bytes:
    t = np.arange(32000) / 16000  # two seconds, a 440 Hz tone
    return write_wav(Audio.from_samples(AMPLITUDE * np.sin(2 * np.pi * 440 * t), 16000))


class FakeRecogniser(AsrBackend):
    name = "fake"

    def __init__(self, texts, min_deleted=0):
        self.texts, self.min_deleted, self.calls = list(texts), min_deleted, 0

    def transcribe(self, wav, *, language="en", adapt_to=()):
        assert list(adapt_to) == self.texts  # the recogniser is adapted to the corpus itself
        words = normalize_words(self.texts[self.calls % len(self.texts)])
        self.calls += 1
        noise_power = max(float(np.mean(np.square(read_wav(wav).samples, dtype=np.float64))) - SIGNAL_POWER, 1e-12)
        snr = 10 * math.log10(SIGNAL_POWER / noise_power)
        deleted = max(self.min_deleted, round(deleted_fraction(snr) * len(words)))
        return Transcript(" ".join(words[deleted:]), None, 0.0, 2.0, self.name)
