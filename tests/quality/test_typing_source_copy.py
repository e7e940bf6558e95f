"""An even rhythm is evidence of typing out a text read elsewhere, except where the task is to
retype the source the page shows ("typos": the source with mistakes), which an honest worker
types exactly so."""
import random

import pandas as pd

from annotation.quality.flags import TEXT_COLUMNS, typing_evidence
from annotation.quality.typing import TypingThresholds
from annotation.text import typing_log

SOURCE = "I need a cheap table for 2 people in the centre please."
TYPOS = "I ned a cheap tabel for 2 peple in the centre plese."
PARAPHRASE = "Could you book a cheap table in the centre for two of us?"


def evenly_typed(text, seed=0):
    rng = random.Random(seed)
    return typing_log.build_record([("f", 800, None), *[("k", rng.gauss(170, 30), None) for _ in text]])


def rhythm_flags(field, text):
    texts = pd.DataFrame([(1, 7, 1, field, text, SOURCE, 0, 0, len(text), evenly_typed(text))], columns=TEXT_COLUMNS)
    found, _summary = typing_evidence(texts, TypingThresholds())
    return found["transcription_rhythm"]


def test_retyping_the_source_with_typos_at_an_even_rhythm_is_not_transcription_evidence():
    assert rhythm_flags("typos", TYPOS) == {}


def test_a_paraphrase_typed_at_the_same_rhythm_is():
    assert rhythm_flags("paraphrase", PARAPHRASE)[1].startswith("paraphrase: 57 characters typed with 0 hesitations")
