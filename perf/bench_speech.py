"""Speech engine (issue 14): transcription throughput of the default recogniser and the cost of the
speech-error search.

Throughput is seconds of audio per second of CPU (this process plus its children, e.g. espeak-ng
looking up pronunciations), so it is comparable across loaded and idle machines; above 1 the
recogniser keeps up with speech on one core. Measured on 30 synthesised (flite) MultiWOZ-like
utterances: the generic bundled model, then the same model adapted to the utterances' text. The
search figure is `simulate` at target WER 0.2 over the same utterances (its synthesis included).
"""
import os
import time

import numpy as np

from .common import peak_rss_mb, save

UTTERANCES = 30
TARGET_WER = 0.2

_TEMPLATES = [
    "I need {price} {place} in the {area} of town.",
    "Is there {price} {food} restaurant in the {area}?",
    "Book a table for {people} at {hour} pm on {day}.",
    "I want a train to {city} that leaves on {day} after {hour}.",
    "Can you book a taxi from the {place} to the station at {hour}?",
    "What is the address of the {food} restaurant in the {area}, please?",
]
_SLOTS = {
    "price": ["a cheap", "a moderately priced", "an expensive"], "place": ["hotel", "guesthouse", "museum", "college"],
    "area": ["north", "south", "east", "west", "centre"], "food": ["Italian", "Chinese", "Indian", "British"],
    "people": ["two", "three", "four"], "hour": ["5", "6", "7", "8"], "day": ["Monday", "Friday", "Sunday"],
    "city": ["London", "Cambridge", "Norwich", "Ely"],
}


def utterances(count=UTTERANCES, seed=5):
    """`count` distinct sentences from the templates, with slot values drawn by a seeded generator."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(100 * count):  # bounded: duplicates are redrawn, never looped on forever
        template = _TEMPLATES[rng.integers(len(_TEMPLATES))]
        text = template.format(**{k: v[rng.integers(len(v))] for k, v in _SLOTS.items()})
        if text not in out:
            out.append(text)
        if len(out) == count:
            return out
    raise ValueError(f"the templates give fewer than {count} distinct sentences")


def cpu_seconds() -> float:
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def _throughput(backend, recordings, texts, adapt_to):
    from annotation.speech.wer import corpus_wer

    started = cpu_seconds()
    transcripts = [backend.transcribe(wav, adapt_to=adapt_to) for wav in recordings]
    cpu = cpu_seconds() - started
    audio = sum(t.audio_seconds for t in transcripts)
    return {
        "audio_seconds": round(audio, 1),
        "cpu_seconds": round(cpu, 2),
        "audio_seconds_per_cpu_second": round(audio / cpu, 1),
        "corpus_wer": round(corpus_wer(zip(texts, (t.text for t in transcripts), strict=False)), 3),
    }


def run() -> dict:
    from annotation.speech.asr import get_backend
    from annotation.speech.simulate import simulate
    from annotation.speech.tts import synthesize

    texts = utterances()
    backend = get_backend()  # the default: pocketsphinx with its bundled model
    started = cpu_seconds()
    recordings = [synthesize(text, engine="flite") for text in texts]
    synthesis_cpu = cpu_seconds() - started

    # Warm up the decoder (loading the acoustic model is once a process) and build the adapted model
    # once, so both passes measure decoding only; the adaptation's own cost is reported apart.
    backend.transcribe(recordings[0])
    started = cpu_seconds()
    backend.transcribe(recordings[0], adapt_to=texts)
    adaptation_cpu = cpu_seconds() - started

    generic = _throughput(backend, recordings, texts, ())
    adapted = _throughput(backend, recordings, texts, texts)

    started_cpu, started_wall = cpu_seconds(), time.perf_counter()
    result = simulate(list(enumerate(texts)), target_wer=TARGET_WER, engine="flite", backend=backend, seed=1)
    figures = {
        "utterances": len(texts),
        "synthesis_cpu_seconds": round(synthesis_cpu, 2),
        "adaptation_build_cpu_seconds": round(adaptation_cpu, 2),
        "generic": generic,
        "adapted": adapted,
        "adapted_vs_generic_speed": round(adapted["audio_seconds_per_cpu_second"] / generic["audio_seconds_per_cpu_second"], 2),
        "speech_errors": {
            "target_wer": TARGET_WER,
            "achieved_wer": round(result.wer, 3),
            "snr_db": round(result.snr_db, 2),
            "clean_floor_wer": round(result.floor, 3),
            "passes": len(result.steps),
            "cpu_seconds": round(cpu_seconds() - started_cpu, 1),
            "wall_seconds": round(time.perf_counter() - started_wall, 1),
        },
        "peak_rss_mb": round(peak_rss_mb(), 1),
    }
    save("speech", figures)
    return figures
