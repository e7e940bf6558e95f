"""MultiWOZ `span_info` for a text that took the place of the one it was counted in. Pure: no Django import.

A span `[act, slot, value, start, end]` says where a value stands in its turn's text, `end`
inclusive, in the unit its corpus counted: words in MultiWOZ 2.1 (tokens in ConvLab-2's tokenised
copy, by spaces or as tokens in untokenised copies: `importers.base.word_spans`), characters in a
corpus written without spaces (Chinese). A rewrite keeps the values verbatim but not their places,
so each value is found again in the new text by the importer's rule (`importers.base.locate`: whole
words, or beside any character of a script without spaces, never inside a number) and its place
is written in the unit the source turn's spans were counted in. A value the new text does not hold
has no place there: its span is left out and counted, never written with a wrong place.
"""
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from ..importers.base import locate, span_surface, word_spans
from ..text import text_units

Words = list[tuple[int, int]]


def _spaced(text: str) -> Words:
    return next(word_spans(text))


def _tokens(text: str) -> Words:
    # word_spans yields the tokenised count second, and only where it differs from the spaced one.
    return list(word_spans(text))[-1]


def _characters(text: str) -> Words:
    return [(i, i + 1) for i in range(len(text))]


@dataclass(frozen=True)
class Unit:
    """How a corpus counted span positions: `words` splits a text into its units (character
    offsets); `past` is 1 where `end` names the unit after the value (exclusive), else 0."""

    name: str
    words: Callable[[str], Words]
    past: int = 0


SPACED = Unit("words between spaces", _spaced)
TOKENS = Unit("tokens", _tokens)
CHARACTERS = Unit("characters", _characters)
CHARACTERS_EXCLUSIVE = Unit("characters, end exclusive", _characters, past=1)


@dataclass(frozen=True)
class Moved:
    spans: list
    #: Spans left out: their value is not in the new text (or had no place in the source).
    dropped: int


def _positioned(span) -> bool:
    return isinstance(span, list) and len(span) >= 5 and all(type(i) is int and i >= 0 for i in span[3:5])


def _candidates(source: str) -> list[Unit]:
    """The units a turn's spans may count in, the likelier first: characters for a text written
    without spaces; tokens where the source is tokenised (or has no punctuation, where both counts
    agree and tokens read a rewrite's punctuation as ConvLab-2 does); else spaces first, as the importer."""
    words = [TOKENS, SPACED] if len(list(word_spans(source))) == 1 else [SPACED, TOKENS]
    chars = [CHARACTERS, CHARACTERS_EXCLUSIVE]
    return chars + words if text_units.is_unspaced(source) else words + chars


def _covered(text: str, words: Words, span, unit: Unit) -> tuple[int, int] | None:
    first, last = span[3], span[4] - unit.past
    if last < first or last >= len(words):
        return None
    return words[first][0], words[last][1]


def unit_of(source: str, spans: Sequence) -> Unit:
    """The unit under which most of the source turn's spans spell their values (then: most cover
    exactly their value, which tells an exclusive end from an inclusive one); ties go to the likelier."""
    best, best_score = None, (-1, -1)
    for unit in _candidates(source):
        words = unit.words(source)
        agreeing = exact = 0
        for span in spans:
            value = str(span[2])
            agreeing += span_surface(source, words, span[3], span[4] - unit.past, value)[1] if value.strip() else 0
            covered = _covered(source, words, span, unit)
            exact += covered is not None and source[covered[0]:covered[1]].strip().casefold() == value.strip().casefold()
        if (agreeing, exact) > best_score:
            best, best_score = unit, (agreeing, exact)
    assert best is not None  # _candidates is never empty
    return best


def _surface(source: str, words: Words, span, unit: Unit) -> str | None:
    """What the span points at in the source, as the importer stored it: the value as written
    there, or where it does not stand at its place, the value looked up, else the words at the place."""
    value = str(span[2])
    at, agrees = span_surface(source, words, span[3], span[4] - unit.past, value) if _positioned(span) else (None, False)
    if agrees:
        return at
    looked_up = locate(source, source.lower(), value) if value.strip() else None
    return looked_up or at


def _place(text: str, surface: str) -> tuple[int, int] | None:
    """Character offsets of the occurrence of `surface` that `locate` accepts in `text`, or None."""
    found = locate(text, text.lower(), surface)
    if found is None:
        return None
    start = text.find(found)
    while start != -1:
        end = start + len(found)
        if not (start and text_units.joins_word(text[start - 1], text[start])) and not (
            end < len(text) and text_units.joins_word(text[end - 1], text[end])
        ):
            return start, end
        start = text.find(found, start + 1)
    return None


def _indices(words: Words, start: int, end: int, unit: Unit) -> tuple[int, int] | None:
    """The first and last unit (inclusive, or the one after with `past`) covering offsets start..end."""
    inside = [i for i, (s, e) in enumerate(words) if s < end and e > start]
    return (inside[0], inside[-1] + unit.past) if inside else None


@lru_cache(maxsize=256)
def _read_source(source: str, span_info_json: str) -> tuple[Unit, tuple[str | None, ...]]:
    """The unit of a source turn's spans and what each span points at there. A rewrite job's
    export moves the same source turn's spans into each variant's text (paraphrase, typos, ...),
    one dialog after another: read once, not once per variant (a third of a large export's time)."""
    span_info = json.loads(span_info_json)
    positioned = [span for span in span_info if _positioned(span)]
    unit = unit_of(source, positioned) if positioned else _candidates(source)[0]
    words = unit.words(source)
    surfaces = tuple(_surface(source, words, span, unit) if isinstance(span, list) and len(span) >= 5 else None for span in span_info)
    return unit, surfaces


def move_spans(span_info: Sequence, source: str, text: str, renamed: Mapping[str, str] | None = None) -> Moved:
    """`span_info` of `source` made true of `text`: each positioned span at its value's place in
    `text`, counted in the unit of the source's spans. `renamed` maps a value as written in the
    source to the value that replaced it (unseen entities); the span then names the new value.
    Entries without a place (fewer than five fields) are kept as they are."""
    renamed = renamed or {}
    unit, surfaces = _read_source(source, json.dumps(span_info))
    new_words = unit.words(text)
    spans, dropped = [], 0
    for span, surface in zip(span_info, surfaces, strict=True):
        if not (isinstance(span, list) and len(span) >= 5):
            spans.append(span)
            continue
        new = renamed.get(surface, surface) if surface else None
        place = _place(text, new) if new else None
        indices = _indices(new_words, *place, unit) if place else None
        if indices is None:
            dropped += 1
            continue
        value = new if surface in renamed else span[2]
        spans.append([span[0], span[1], value, *indices, *span[5:]])
    return Moved(spans, dropped)
