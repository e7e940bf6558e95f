"""Speech-error simulation (RADDLE): text -> synthetic speech -> background noise -> recogniser.

The noise level is searched so that the corpus word error rate lands on a target:

1. Each utterance is synthesised once (flite or espeak-ng).
2. The floor is the corpus WER at `CLEAN_SNR_DB`: clean speech with a noise floor far below it, as
   any recording has (pure digital silence between words upsets the recogniser's feature
   normalisation, so "clean" is measured with this floor rather than without one). A target more
   than `tolerance` below the floor cannot be reached and is refused, naming the floor.
3. Bisection on the signal-to-noise ratio between `CLEAN_SNR_DB` and `NOISIEST_SNR_DB`: WER falls as
   the SNR rises. Each utterance gets one seeded noise signal that is only rescaled from step to
   step, so WER(SNR) moves smoothly and a run is reproducible from its seed.

The recogniser is adapted to the corpus's own text (`adapt_to`), as a deployed system is adapted to
its domain; without that a generic offline model is far above RADDLE's 10-30% even on clean speech.
Pure: no Django; the command and any export call `simulate(...)` with (id, text) pairs.
"""
from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING

from quorum.lazy_modules import lazy

from .asr import AsrBackend, get_backend
from .audio import Audio, read_wav, resample, write_wav
from .tts import synthesize
from .wer import word_errors

if TYPE_CHECKING:
    import numpy as np
else:
    np = lazy("numpy")

SAMPLE_RATE = 16000
CLEAN_SNR_DB = 50.0
NOISIEST_SNR_DB = -10.0
MIN_BRACKET_DB = 0.1  # narrower than this, the SNR no longer changes the recogniser's output
NOISE_KINDS = ("white", "babble")
BABBLE_VOICES = 6  # other utterances summed into one babble track
PEAK = 0.95  # the mix is scaled down to this peak when noise would clip it
INPUT_FIELDS = ("id", "text")


class SimulationError(ValueError):
    """The input or the target cannot be used; the message says what to change."""


@dataclass(frozen=True)
class Progress:
    stage: str  # "synthesis" | "floor" | "search"
    done: int
    total: int
    snr_db: float | None = None
    wer: float | None = None  # set once a pass over the corpus is complete


@dataclass(frozen=True)
class SimulatedUtterance:
    id: object
    text: str
    asr: str
    wer: float

    def as_json(self) -> dict:
        return {"id": self.id, "text": self.text, "asr": self.asr, "wer": round(self.wer, 4)}


@dataclass
class Simulation:
    utterances: list[SimulatedUtterance]
    wer: float  # corpus WER achieved: total edits over total reference words
    snr_db: float
    floor: float  # corpus WER at CLEAN_SNR_DB
    steps: list[tuple[float, float]] = field(default_factory=list)  # (SNR, corpus WER) of each pass


def read_utterances(lines: Iterable[str]) -> list[tuple[object, str]]:
    """Parse JSON lines `{"id", "text"}`; a bad line is refused naming its number and what to fix."""
    pairs: list[tuple[object, str]] = []
    seen: set[object] = set()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise SimulationError(f"Line {number} is not valid JSON ({exc.msg}).") from None
        if not isinstance(row, dict):
            raise SimulationError(f'Line {number} must be a JSON object {{"id": ..., "text": ...}}.')
        unknown = sorted(set(row) - set(INPUT_FIELDS))
        if unknown:
            raise SimulationError(
                f"Line {number} has unknown field(s) {', '.join(unknown)}; the accepted fields are: {', '.join(INPUT_FIELDS)}."
            )
        missing = [name for name in INPUT_FIELDS if name not in row]
        if missing:
            raise SimulationError(f"Line {number} lacks {', '.join(missing)}; each line needs: {', '.join(INPUT_FIELDS)}.")
        ident, text = row["id"], row["text"]
        if not isinstance(ident, str | int) or isinstance(ident, bool) or ident == "":
            raise SimulationError(f"Line {number}: id must be a non-empty string or an integer.")
        if not isinstance(text, str) or not text.strip():
            raise SimulationError(f"Line {number}: text must be a non-empty string.")
        if ident in seen:
            raise SimulationError(f"Line {number}: id {ident!r} appears twice; ids must be unique.")
        seen.add(ident)
        pairs.append((ident, text))
    if not pairs:
        raise SimulationError("The input has no utterances; give one JSON object per line.")
    return pairs


def _check_request(target_wer: float, tolerance: float, noise: str, count: int) -> None:
    """Refuse a simulation that cannot be run as asked, saying what to give instead."""
    if not 0.0 <= target_wer <= 1.0:
        raise SimulationError(f"The target WER must be between 0 and 1 (e.g. 0.2 for 20%); got {target_wer:g}.")
    if not 0.0 < tolerance < 1.0:
        raise SimulationError(f"The tolerance must be between 0 and 1 (e.g. 0.05); got {tolerance:g}.")
    if noise not in NOISE_KINDS:
        raise SimulationError(f"Unknown noise {noise!r}; use one of: {', '.join(NOISE_KINDS)}.")
    if noise == "babble" and count < 2:
        raise SimulationError("Babble noise is made of the corpus's other utterances; give at least two, or use white noise.")


def _bisect(measure: Callable[[float, str], float], floor: float, target_wer: float, tolerance: float, max_steps: int) -> float:
    """The SNR whose measured WER came closest to `target_wer`, by bisection from the clean floor
    (`floor`, the WER at CLEAN_SNR_DB): `quiet` keeps WER below the target, `loud` above it."""
    best, best_rate = CLEAN_SNR_DB, floor
    quiet, loud = CLEAN_SNR_DB, NOISIEST_SNR_DB
    for _ in range(max_steps):
        if quiet - loud < MIN_BRACKET_DB:
            break
        middle = (quiet + loud) / 2
        rate = measure(middle, "search")
        if abs(rate - target_wer) < abs(best_rate - target_wer):
            best, best_rate = middle, rate
        if abs(rate - target_wer) <= tolerance / 2:
            break
        if rate < target_wer:
            quiet = middle
        else:
            loud = middle
    return best


def simulate(
    utterances: Sequence[tuple[object, str]],
    *,
    target_wer: float,
    tolerance: float = 0.05,
    seed: int = 0,
    engine: str = "flite",
    noise: str = "white",
    backend: AsrBackend | None = None,
    tts: Callable[[str], bytes] | None = None,
    max_steps: int = 14,
    progress: Callable[[Progress], None] | None = None,
) -> Simulation:
    """Add speech-recognition errors to `utterances` ((id, text) pairs) at a corpus WER near `target_wer`."""
    _check_request(target_wer, tolerance, noise, len(utterances))
    report = progress or (lambda _event: None)
    speak = tts or partial(synthesize, engine=engine, sample_rate=SAMPLE_RATE)
    backend = backend or get_backend()
    texts = [text for _, text in utterances]

    clean = []
    for index, text in enumerate(texts):
        clean.append(resample(read_wav(speak(text)), SAMPLE_RATE).samples.astype(np.float64))
        report(Progress("synthesis", index + 1, len(texts)))
    noises = _noises(clean, noise, seed)

    steps: list[tuple[float, float]] = []
    passes: dict[float, tuple[float, list[str]]] = {}

    def measure(snr: float, stage: str) -> float:
        hypotheses = []
        for index, (speech, noise_track) in enumerate(zip(clean, noises, strict=True)):
            mixed = Audio.from_samples(_mix(speech, noise_track, snr), SAMPLE_RATE)
            hypotheses.append(backend.transcribe(write_wav(mixed), adapt_to=texts).text)
            report(Progress(stage, index + 1, len(texts), snr_db=snr))
        rate = _corpus_wer(texts, hypotheses)
        passes[snr] = (rate, hypotheses)
        steps.append((snr, rate))
        report(Progress(stage, len(texts), len(texts), snr_db=snr, wer=rate))
        return rate

    floor = measure(CLEAN_SNR_DB, "floor")
    if target_wer < floor - tolerance:
        raise SimulationError(
            f"The target WER {target_wer:.3f} is below what clean speech already gives: the floor is {floor:.3f} "
            f"(engine {engine}). Choose a target of at least {max(floor - tolerance, 0):.3f}."
        )
    best = CLEAN_SNR_DB
    if abs(floor - target_wer) > tolerance / 2:
        best = _bisect(measure, floor, target_wer, tolerance, max_steps)
    achieved, hypotheses = passes[best]
    if abs(achieved - target_wer) > tolerance:
        highest = max(rate for _, rate in steps)
        raise SimulationError(
            f"No noise level gave a corpus WER within {tolerance:g} of {target_wer:.3f}: the closest was "
            f"{achieved:.3f} at {best:.1f} dB SNR (the noisiest tried gave {highest:.3f}). "
            "Try another seed, a larger tolerance or more utterances (WER moves in steps of one word)."
        )
    return Simulation(
        utterances=[
            SimulatedUtterance(ident, text, hypothesis, word_errors(text, hypothesis).wer)
            for (ident, text), hypothesis in zip(utterances, hypotheses, strict=True)
        ],
        wer=achieved,
        snr_db=best,
        floor=floor,
        steps=steps,
    )


def _corpus_wer(references: Sequence[str], hypotheses: Sequence[str]) -> float:
    edits = words = 0
    for reference, hypothesis in zip(references, hypotheses, strict=True):
        errors = word_errors(reference, hypothesis)
        edits, words = edits + errors.edits, words + errors.reference_words
    return edits / words if words else 0.0


def _noises(clean: list[np.ndarray], kind: str, seed: int) -> list[np.ndarray]:
    """One unit-power noise track per utterance, from a generator seeded by (seed, utterance index)."""
    tracks = []
    for index, speech in enumerate(clean):
        rng = np.random.default_rng([seed, index])
        if kind == "white":
            track = rng.standard_normal(len(speech))
        else:
            # Babble: other utterances of the corpus, each from a random offset, looped to length.
            others = [k for k in range(len(clean)) if k != index]
            chosen = rng.choice(others, size=min(BABBLE_VOICES, len(others)), replace=False)
            track = np.zeros(len(speech))
            for k in chosen:
                voice = clean[k] / (_rms(clean[k]) or 1.0)
                looped = np.tile(voice, len(speech) // len(voice) + 2)
                start = int(rng.integers(len(voice)))
                track += looped[start : start + len(speech)]
        tracks.append(track / (_rms(track) or 1.0))
    return tracks


def _rms(signal: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(signal)))) if len(signal) else 0.0


def _mix(speech: np.ndarray, noise_track: np.ndarray, snr_db: float) -> np.ndarray:
    """Speech plus noise scaled so that 10*log10(speech power / noise power) = snr_db."""
    mixed = speech + noise_track * (_rms(speech) / math.pow(10.0, snr_db / 20.0))
    peak = float(np.max(np.abs(mixed))) if len(mixed) else 0.0
    return mixed * (PEAK / peak) if peak > PEAK else mixed
