"""Word error rate after one documented normalisation, shared with the recogniser's language model.

Normalisation (`normalize_words`): lowercase; numbers written as words ("7" -> "seven",
"12:30" -> "twelve thirty", "3rd" -> "third"); every character that is not a letter, digit or an
apostrophe inside a word becomes a space. The same function prepares the text a language model is
built from, so the recogniser's vocabulary and the reference agree on spelling.

Edit distance over word lists is rapidfuzz's Levenshtein (already a pinned dependency, C speed);
jiwer would add a dependency for the same sum.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rapidfuzz.distance import Levenshtein

_ONES = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen"
).split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()
_ORDINAL_IRREGULAR = {"one": "first", "two": "second", "three": "third", "five": "fifth", "eight": "eighth",
                      "nine": "ninth", "twelve": "twelfth"}
_NUMBER = re.compile(r"(\d+)(st|nd|rd|th)?\b")
_NOT_WORD = re.compile(r"[^\w']|_")


def number_words(n: int) -> str:
    """Cardinal English words for 0 <= n < 10**12; larger numbers are read digit by digit."""
    if n < 20:
        return _ONES[n]
    if n < 100:
        return _TENS[n // 10] + ("" if n % 10 == 0 else " " + _ONES[n % 10])
    if n < 1000:
        rest = n % 100
        return _ONES[n // 100] + " hundred" + ("" if rest == 0 else " " + number_words(rest))
    for size, name in ((10**9, "billion"), (10**6, "million"), (1000, "thousand")):
        if size <= n < size * 1000:
            rest = n % size
            return number_words(n // size) + " " + name + ("" if rest == 0 else " " + number_words(rest))
    return " ".join(_ONES[int(d)] for d in str(n))


def _ordinal(words: str) -> str:
    head, _, last = words.rpartition(" ")
    if last in _ORDINAL_IRREGULAR:
        last = _ORDINAL_IRREGULAR[last]
    elif last.endswith("y"):
        last = last[:-1] + "ieth"
    else:
        last += "th"
    return f"{head} {last}".strip()


def _spell_number(match: re.Match) -> str:
    digits, suffix = match.group(1), match.group(2)
    # "007" is read digit by digit, as people read codes and phone numbers.
    words = " ".join(_ONES[int(d)] for d in digits) if digits.startswith("0") and len(digits) > 1 else number_words(int(digits))
    return f" {_ordinal(words) if suffix else words} "


def normalize_words(text: str) -> list[str]:
    text = _NUMBER.sub(_spell_number, text.lower())
    return [word.strip("'") for word in _NOT_WORD.sub(" ", text).split() if word.strip("'")]


def normalize(text: str) -> str:
    return " ".join(normalize_words(text))


@dataclass(frozen=True)
class WordErrors:
    edits: int  # substitutions + deletions + insertions
    reference_words: int

    @property
    def wer(self) -> float:
        """Edits per reference word; an empty reference scores 0 if the hypothesis is empty, else 1."""
        if self.reference_words == 0:
            return 0.0 if self.edits == 0 else 1.0
        return self.edits / self.reference_words


def word_errors(reference: str, hypothesis: str) -> WordErrors:
    ref, hyp = normalize_words(reference), normalize_words(hypothesis)
    return WordErrors(edits=Levenshtein.distance(ref, hyp), reference_words=len(ref))


def wer(reference: str, hypothesis: str) -> float:
    """Word error rate of one utterance."""
    return word_errors(reference, hypothesis).wer


def corpus_wer(pairs: Iterable[tuple[str, str]] | Sequence[tuple[str, str]]) -> float:
    """Total edits over total reference words, so long utterances weigh more (not a mean of rates)."""
    edits = words = 0
    for reference, hypothesis in pairs:
        errors = word_errors(reference, hypothesis)
        edits += errors.edits
        words += errors.reference_words
    return edits / words if words else 0.0
