"""Evidence that a person read the turn aloud, in numbers a reviewer can weigh. Pure: no Django.

- `speech_seconds`: how long the recording is clearly louder than its own background (30 ms frames
  at least `ABOVE_BACKGROUND_DB` over the quietest tenth, and above `FLOOR_DBFS`). A rough speech
  detector: a cough counts for the fraction of a second it lasts; steady noise or a silent room
  does not.
- `fingerprint`: the recording's samples hashed, so the same recording sent twice (a file uploaded
  for several readings or turns) is found; a take made in the browser is never sample-identical to
  another one.
- `turn_match`: the recogniser's hypothesis against the turn: its WER, and how many of the turn's
  words it heard (a reading varies the wording, so WER alone is high for honest readers; a reading of
  another sentence hears few of the turn's words).

These are evidence, never verdicts: `doubts` says in words what a reviewer may want to listen to;
`listen_evidence` says it with every number beside it, for the stored flag a reading worth a
listen raises (`quality.flags`, code `worth_a_listen`).
"""
from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from quorum.lazy_modules import lazy

from .audio import FRAME_SECONDS, Audio, frame_levels
from .wer import normalize_words, word_errors

if TYPE_CHECKING:
    import numpy as np
else:
    np = lazy("numpy")

ABOVE_BACKGROUND_DB = 10.0
FLOOR_DBFS = -60.0
#: Below this much speech a reading is worth a listen (a word takes about 0.3 s).
LITTLE_SPEECH_SECONDS = 0.5
#: A reading whose hypothesis holds less than this share of the turn's words is worth a listen.
FEW_WORDS_SHARE = 0.5


def speech_seconds(audio: Audio) -> float:
    """Seconds of frames clearly louder than the recording's background (its quietest tenth)."""
    levels = frame_levels(audio)
    background = float(np.percentile(levels, 10))
    loud = levels >= max(background + ABOVE_BACKGROUND_DB, FLOOR_DBFS)
    return round(float(np.count_nonzero(loud)) * FRAME_SECONDS, 2)


def fingerprint(audio: Audio) -> str:
    """A hash of the samples (16-bit) and rate: equal for the same recording sent again."""
    digest = hashlib.sha256(str(audio.sample_rate).encode() + audio.pcm16())
    return digest.hexdigest()[:24]


@dataclass(frozen=True)
class TurnMatch:
    wer: float  # word error rate of the hypothesis against the turn
    heard: int  # how many of the turn's words the hypothesis holds
    words: int  # how many words the turn has

    @property
    def heard_share(self) -> float:
        return self.heard / self.words if self.words else 1.0


def turn_match(turn: str, hypothesis: str) -> TurnMatch:
    """The hypothesis against the turn it should be a reading of (the same normalisation as WER)."""
    turn_words, heard_words = Counter(normalize_words(turn)), Counter(normalize_words(hypothesis))
    heard = sum((turn_words & heard_words).values())
    return TurnMatch(wer=round(word_errors(turn, hypothesis).wer, 2), heard=heard, words=sum(turn_words.values()))


def doubts(*, speech: float | None, match: TurnMatch | None, same_as: list[str]) -> list[str]:
    """What makes a reading worth a listen, in words with its numbers (empty: nothing stands out).
    `speech`: its speech seconds (None: not measured, a reading stored before this was measured);
    `match`: its hypothesis against the turn (None: not transcribed); `same_as`: the other readings
    with the same recording, named."""
    out = []
    if speech is not None and speech < LITTLE_SPEECH_SECONDS:
        out.append(f"little speech: sound above the background for only {speech:.1f} s")
    if match is not None and match.words and match.heard_share < FEW_WORDS_SHARE:
        out.append(f"the recogniser heard {match.heard} of the turn's {match.words} words (another sentence, or unclear)")
    if same_as:
        out.append("the same recording as " + ", ".join(same_as))
    return out


def listen_evidence(*, speech: float | None, seconds: float | None, match: TurnMatch | None, same_as: list[str]) -> str:
    """Why one reading is worth a listen, with its numbers ("heard 3 of the turn's 11 words, 0.8 s
    of speech in a 4.1 s recording, WER 0.73"), or "" when nothing stands out (`doubts` is empty).
    Every measure taken is given, not only the one that stands out: a reviewer weighs them together
    (few words heard with plenty of speech is another sentence; with little speech, a cough)."""
    if not doubts(speech=speech, match=match, same_as=same_as):
        return ""
    parts = []
    if match is not None and match.words:
        parts.append(f"heard {match.heard} of the turn's {match.words} words")
    if speech is not None:
        parts.append(f"{speech:.1f} s of speech" + (f" in a {seconds:.1f} s recording" if seconds else ""))
    if match is not None:
        parts.append(f"WER {match.wer:.2f}")
    if same_as:
        parts.append("the same recording as " + ", ".join(same_as))
    return ", ".join(parts)
