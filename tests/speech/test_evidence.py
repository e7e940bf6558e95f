"""The evidence a reviewer reads beside each reading: speech heard, the same recording sent twice,
and the recogniser's hypothesis against the turn (no Django, no binaries)."""
import numpy as np
import pytest

from annotation.speech.audio import Audio
from annotation.speech.evidence import doubts, fingerprint, speech_seconds, turn_match

RATE = 16000
rng = np.random.default_rng(7)


def _room(seconds, level=0.003):
    return rng.normal(0, level, int(seconds * RATE))


def _voice(seconds, amplitude=0.2):
    """A voiced sound: a 150 Hz buzz with harmonics, syllable-like bursts of 0.2 s."""
    t = np.arange(int(seconds * RATE)) / RATE
    buzz = sum(np.sin(2 * np.pi * 150 * k * t) / k for k in range(1, 6))
    syllables = (np.sin(2 * np.pi * 2.5 * t) > -0.3).astype(float)
    return amplitude * buzz * syllables / 2


def test_speech_is_counted_and_a_cough_or_steady_noise_is_not():
    reading = Audio.from_samples(np.concatenate([_room(0.5), _voice(2.0) + _room(2.0), _room(0.5)]), RATE)
    cough = Audio.from_samples(np.concatenate([_room(0.8), rng.normal(0, 0.3, int(0.2 * RATE)), _room(1.0)]), RATE)
    noise = Audio.from_samples(rng.normal(0, 0.05, 3 * RATE), RATE)
    assert 1.2 <= speech_seconds(reading) <= 2.1
    assert speech_seconds(cough) <= 0.3
    assert speech_seconds(noise) == 0


def test_the_same_recording_has_the_same_fingerprint_and_another_take_does_not():
    take = Audio.from_samples(_voice(2.0) + _room(2.0), RATE)
    again = Audio.from_samples(take.samples.copy(), RATE)
    other = Audio.from_samples(_voice(2.0) + _room(2.0), RATE)  # the same sentence read again: other noise
    assert fingerprint(take) == fingerprint(again)
    assert fingerprint(take) != fingerprint(other)


def test_a_varied_reading_hears_most_of_the_turn_and_another_sentence_few_of_its_words():
    turn = "I need to book a hotel in the east that has 4 stars ."
    varied = turn_match(turn, "i'd like to book a hotel in the east with four stars please")
    stumble = turn_match(turn, "i need to book a hotel in the um i need to book a hotel in the east that has four stars")
    other = turn_match(turn, "to parking")
    assert (varied.heard, varied.words) == (9, 13) and varied.heard_share > 0.5
    assert stumble.heard == 13 and stumble.wer > 0.5  # a re-start is many insertions, not another sentence
    assert other.heard == 1 and other.wer == pytest.approx(0.92)


def test_doubts_say_what_to_listen_for_with_numbers():
    assert doubts(speech=2.9, match=turn_match("a cheap hotel", "a cheap hotel please"), same_as=[]) == []
    said = doubts(speech=0.1, match=turn_match("a cheap hotel in the east", ""), same_as=["reading 1 of response 7"])
    assert said == [
        "little speech: sound above the background for only 0.1 s",
        "the recogniser heard 0 of the turn's 6 words (another sentence, or unclear)",
        "the same recording as reading 1 of response 7",
    ]
    assert doubts(speech=None, match=None, same_as=[]) == []  # not measured, not transcribed: nothing said
