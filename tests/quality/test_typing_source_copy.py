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


VERBOSE = "Hello, I am hoping to find a cheap table for 2 people somewhere in the centre, if that is possible please."


def composed(text, seed=0):
    """Typed as one composes: a pause of a second or more before some words."""
    rng = random.Random(seed)
    events = [("f", 800, None)]
    for i in range(len(text)):
        thinking = i > 0 and text[i - 1] == " " and rng.random() < 0.3
        events.append(("k", rng.uniform(1200, 3000) if thinking else rng.gauss(170, 40), None))
    return typing_log.build_record(events)


def response_rhythm(*fields):
    rows = [(1, 7, 1, name, text, SOURCE, 0, 0, len(text), record) for name, text, record in fields]
    found, _summary = typing_evidence(pd.DataFrame(rows, columns=TEXT_COLUMNS), TypingThresholds())
    return found["transcription_rhythm"]


def test_one_even_field_beside_a_composed_one_is_no_evidence():
    assert response_rhythm(("paraphrase", PARAPHRASE, evenly_typed(PARAPHRASE)), ("verbose", VERBOSE, composed(VERBOSE))) == {}


def test_a_response_typed_evenly_throughout_is_flagged_with_the_whole_responses_figures():
    why = response_rhythm(("paraphrase", PARAPHRASE, evenly_typed(PARAPHRASE)), ("verbose", VERBOSE, evenly_typed(VERBOSE, 1)))[1]
    assert why.startswith("paraphrase: 57 characters typed with 0 hesitations")
    assert "; verbose: 106 characters typed with 0 hesitations" in why
    assert why.endswith("(the whole response: 0 hesitations in 161 intervals, 0.0%)")


def test_a_response_that_retypes_the_source_in_every_field_is_not_excused():
    near = SOURCE.replace("I need", "I want")  # a "paraphrase" that is the source with one word changed
    why = response_rhythm(("paraphrase", near, evenly_typed(near)), ("typos", TYPOS, evenly_typed(TYPOS, 1)))[1]
    assert why.startswith("paraphrase: 55 characters typed with 0 hesitations")
    assert "; typos: 52 characters typed with 0 hesitations" in why
