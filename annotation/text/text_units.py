"""Script-aware text measures for the automatic checks. Pure: no Django import.

CGoDial is Chinese: where a text is written without spaces between words, lengths count
characters and slot values match as plain substrings; elsewhere lengths count words and slot
values must stand as whole words ("3 people" is not found inside "13 people").
"""
import re
import unicodedata

# Scripts written without spaces between words: CJK ideographs, kana, Thai, Lao, Khmer, Myanmar.
_UNSPACED = re.compile(
    "[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u0e00-\u0e7f\u0e80-\u0eff\u1780-\u17ff\u1000-\u109f]"
)
_WORD = re.compile(r"\w+(?:['’]\w+)*", re.UNICODE)
_SPACE = re.compile(r"\s+")


def is_unspaced(text: str) -> bool:
    """True when most letters belong to a script written without spaces between words."""
    letters = sum(map(str.isalpha, text))
    if not letters:
        return False
    return sum(map(str.isalpha, _UNSPACED.findall(text))) * 2 >= letters


def normalize(text: str) -> str:
    """Unicode-normalized, case-folded, single-spaced text, for comparisons."""
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text)).strip().casefold()


class _SpaceAndPunctuation(dict):
    """`str.translate` table deleting white space and punctuation (Unicode category P*): each code
    point is looked up once and remembered, so a check costs a C-level translate instead of a
    Python test per character (the rewrite checks run on every submission of the annotation loop).
    Only the Basic Multilingual Plane is remembered, so the table stays small whatever is posted."""

    def __missing__(self, code: int):
        char = chr(code)
        kept = None if char.isspace() or unicodedata.category(char).startswith("P") else code
        if code < 0x10000:
            self[code] = kept
        return kept


_DROP_SPACE_AND_PUNCTUATION = _SpaceAndPunctuation()


def comparable(text: str) -> str:
    """The text with case, spaces and punctuation taken out, in every script (NFKC folds the
    full-width forms, so "。" and "," go too), for "is this rewrite just the source again?"."""
    return unicodedata.normalize("NFKC", text).casefold().translate(_DROP_SPACE_AND_PUNCTUATION)


def length(text: str, unspaced: bool) -> int:
    """Words in spaced scripts; non-space, non-punctuation characters in unspaced ones."""
    if unspaced:
        return len(text.translate(_DROP_SPACE_AND_PUNCTUATION))
    return len(_WORD.findall(text))


def unit_name(unspaced: bool, n: int) -> str:
    if unspaced:
        return "character" if n == 1 else "characters"
    return "word" if n == 1 else "words"


# Numerals a number can be written with besides Unicode's numeric characters (digits, 一..十, 百, 千, 万):
# 两 ("two", 两个人) and 几 ("some", 十几个人) glue onto numbers like any other numeral.
_MORE_NUMERALS = frozenset("两几幾")


def _numeral(char: str) -> bool:
    return char.isnumeric() or char in _MORE_NUMERALS


def joins_word(before: str, after: str) -> bool:
    """Whether these two neighbouring characters belong to one word or one number, so that a slot
    value cannot begin or end between them: letters or digits of scripts written with spaces
    ("least" holds no "east"), and numerals in any script ("十三个人" holds no "三个人": thirteen
    people are not three; "14位" holds no "4位"). Anywhere else in a script written without spaces
    ("订北京饭店"), a word may begin or end between any two characters."""
    if not (before.isalnum() and after.isalnum()):
        return False
    if _numeral(before) and _numeral(after):
        return True
    return not (is_unspaced(before) or is_unspaced(after))


def _contains_unspaced(haystack: str, needle: str) -> bool:
    start = haystack.find(needle)
    while start != -1:
        end = start + len(needle)
        if not (start and joins_word(haystack[start - 1], needle[0])) and not (
            end < len(haystack) and joins_word(needle[-1], haystack[end])
        ):
            return True
        start = haystack.find(needle, start + 1)
    return False


def contains_value(text: str, value: str, unspaced: bool) -> bool:
    """Whether `value` occurs in `text` as stored: its characters in order, with no other
    normalisation than Unicode form, case (a value may open a sentence: "Cheap Thai food") and
    runs of spaces; as whole words in spaced scripts, as a substring in unspaced ones, where it
    must still not extend a number ("三个人" is not kept in "十三个人", nor "4位" in "14位": see
    `joins_word`). Importers store values as whole words of the source, so the source's own words
    always pass."""
    haystack, needle = normalize(text), normalize(value)
    if not needle:
        return True
    if unspaced or is_unspaced(needle):
        return _contains_unspaced(haystack, needle)
    left = r"(?<!\w)" if needle[0].isalnum() else ""
    right = r"(?!\w)" if needle[-1].isalnum() else ""
    return re.search(left + re.escape(needle) + right, haystack) is not None
