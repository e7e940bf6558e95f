"""What every corpus reader shares: the records it yields, its error, and JSON streaming helpers.

Readers are pure Python (no Django): they stream a source file, validate each dialog, and yield
`DialogRecord`s; `annotation.services.imports` writes them in one transaction. A reader raises
`FormatError` with a message that names the file, the place in it (dialog id, index or line) and
the reason, so the person who uploaded the file knows what to fix.
"""
from __future__ import annotations

import json
import math
import os
import re
import sys
import unicodedata
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, NamedTuple

import ijson

from quorum.lazy_modules import lazy

from ..text import text_units
from .json_errors import MAX_DEPTH, TOO_DEEP, locate_syntax_error

if TYPE_CHECKING:
    import numpy as np
else:
    np = lazy("numpy")

USER = "user"
SYSTEM = "system"

# Dialog.external_id is a CharField(max_length=200).
MAX_EXTERNAL_ID = 200

_BOM = b"\xef\xbb\xbf"

# Marks the end of a stream in next(stream, END): a JSON null is a value, not the end.
END = object()


class FormatError(Exception):
    """A source file does not have the structure of its format; the message says where and why.

    A message may quote the file (a dialog id); what of it cannot be stored or printed (a NUL, a
    lone surrogate) is written as an escape, so that the message itself can be saved and shown.
    """

    def __init__(self, message: str):
        super().__init__(printable(message))


def printable(text: str) -> str:
    """`text` with NUL characters and lone surrogates written as escapes (\\x00, \\ud800)."""
    return text.replace("\x00", "\\x00").encode("utf-8", "backslashreplace").decode("utf-8")


class TurnRecord(NamedTuple):
    speaker: str  # USER or SYSTEM
    text: str
    slot_values: list  # [{"slot": str, "value": surface form found in text}]
    raw: dict  # other source fields of the turn, kept for export


class DialogRecord(NamedTuple):
    external_id: str
    meta: dict
    turns: list  # [TurnRecord]


class CorpusReader:
    """Reads one corpus from its files. Use as a context manager, then iterate `dialogs()`.

    Subclasses set `label` (the format's name in messages), `optional_roles` and implement
    `dialogs()`; files with roles other than "data" are opened in `_open_extra()`.
    """

    label = "corpus"
    optional_roles: tuple[str, ...] = ()

    def __init__(self, files: Mapping[str, Path]):
        self.paths = {role: Path(path) for role, path in files.items()}
        self.data_path = self.paths["data"]
        self.data_name = self.data_path.name
        self.corpus_meta: dict = {}
        self._data: IO[bytes] | None = None
        self._seen_ids: set[str] = set()

    # -- lifecycle -------------------------------------------------------------------------
    def __enter__(self):
        self._data = open_skipping_bom(self.data_path)
        try:
            self._open_extra()
        except BaseException:
            self._data.close()
            raise
        return self

    def __exit__(self, *exc):
        self._close_extra()
        if self._data is not None:
            self._data.close()
        return False

    def _open_extra(self):
        """Open or load the files of other roles (labels, knowledge)."""

    def _close_extra(self):
        """Close what `_open_extra` opened."""

    # -- progress --------------------------------------------------------------------------
    @property
    def total_bytes(self) -> int:
        return os.path.getsize(self.data_path)

    def bytes_read(self) -> int:
        """How far the data file has been read (the parser reads ahead by one buffer)."""
        if self._data is None or self._data.closed:
            return 0
        return min(self._data.tell(), self.total_bytes)

    # -- reading ---------------------------------------------------------------------------
    def dialogs(self) -> Iterator[DialogRecord]:
        raise NotImplementedError

    def _open_data(self) -> IO[bytes]:
        """The data file, open inside the reader's `with` block."""
        if self._data is None:
            raise RuntimeError("read a corpus inside `with reader:`")
        return self._data

    def _claim_id(self, external_id: str, where: str) -> str:
        """Check an external id (non-empty, short enough, not seen before) and remember it."""
        if not external_id:
            raise FormatError(f"{where}: the dialog id is empty")
        if len(external_id) > MAX_EXTERNAL_ID:
            raise FormatError(f"{where}: the dialog id is longer than {MAX_EXTERNAL_ID} characters")
        check_json_value(external_id, where, "the dialog id")
        if external_id in self._seen_ids:
            raise FormatError(f"{where}: the dialog id {external_id!r} appears more than once")
        self._seen_ids.add(external_id)
        return external_id


# -- JSON helpers ------------------------------------------------------------------------------
def open_skipping_bom(path: Path) -> IO[bytes]:
    """Open a JSON file for reading as bytes, past a UTF-8 byte order mark if it starts with one
    (editors on Windows write one; every file of every format accepts it alike)."""
    f = open(path, "rb")  # noqa: SIM115 - the caller closes it
    if f.read(len(_BOM)) != _BOM:
        f.seek(0)
    return f


def numbered(word: str, field: str, index: int) -> str:
    """A list entry named for a person, counting from 1, with its 0-based place in the file:
    numbered("turn", "log", 2) -> 'turn 3 (log[2])'."""
    return f"{word} {index + 1} ({field}[{index}])"


def huge_integer_message() -> str:
    return f"an integer with more than {sys.get_int_max_str_digits():,} digits (the most Python reads)"


def _string_problem(text: str) -> str | None:
    """Why a string cannot be stored: a NUL (PostgreSQL's text and jsonb refuse it) or a lone
    surrogate (not Unicode text: it cannot be encoded, and must not turn into "?")."""
    if "\x00" in text:
        return "holds a NUL character (\\u0000), which cannot be stored"
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            return f"holds a lone surrogate (\\u{ord(text[exc.start]):04x}), which is not text"
    return None


def _constant(number: float) -> str:
    """How Python's json wrote a non-finite number (NaN, Infinity, -Infinity)."""
    if math.isnan(number):
        return "NaN"
    return "Infinity" if number > 0 else "-Infinity"


def _show_path(path: tuple) -> str:
    shown = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in path[:8]).lstrip(".")
    return shown + ("…" if len(path) > 8 else "")


_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, check_circular=False)  # one, reused: it is per dialog


def check_json_value(value, where: str, what: str | None = None) -> None:
    """Refuse a parsed value that cannot be stored as it is: a string with a NUL or a lone
    surrogate, NaN or ±Infinity (accepted by Python's json, but not JSON), nesting deeper than
    MAX_DEPTH. The message names the place inside the value (`turns[0].text`).

    For values parsed whole (JSONL lines, knowledge.json, ids); streamed files are checked on their
    bytes by `JsonStreamGuard` instead. Every JSONL dialog passes here, so the common case is checked in C: the value is
    serialised once (NaN refused, a NUL or a surrogate found in the text, the nesting read off its
    brackets). Only a value that fails is walked node by node, to name the place.
    """
    try:
        text = _ENCODER.encode(value)
        # json writes a NUL as the escape \u0000; a string that merely shows that escape is walked
        # too, and the walk finds nothing wrong with it.
        clean = "\\u0000" not in text and (text.isascii() or _encodes(text)) and _depth_within(text)
    except (ValueError, RecursionError):
        clean = False
    if not clean:
        _locate_json_problem(value, where, what)


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


# Serialised JSON reduced to its brackets at C speed: escaped backslashes and quotes go first (so a
# quote that ends a string is never taken for an escaped one), then every byte but brackets and
# quotes (bytes.translate), then the strings left between quotes, with any brackets they hold.
_KEEP = b'[]{}"'
_DROP = bytes(b for b in range(256) if b not in _KEEP)
_BYTE_STRING = re.compile(rb'"[^"]*"')
_AS_PARENS = bytes.maketrans(b"[]{}", b"()()")
_QUOTE = ord('"')


@cache
def _step_of():
    """byte -> +1 for what opens a container, -1 for what closes one (made on first use: numpy is
    loaded by the web process only when an import needs it)."""
    step = np.zeros(256, dtype=np.int8)
    step[list(b"[{")] = 1
    step[list(b"]}")] = -1
    return step


def _depth_within(text: str) -> bool:
    """Whether the serialised value nests at most MAX_DEPTH containers deep. The brackets left
    are peeled one level per pass (`()` removed); a dialog nests a handful of levels."""
    unescaped = text.replace("\\\\", "").replace('\\"', "")
    shape = _BYTE_STRING.sub(b"", unescaped.encode("utf-8", "surrogatepass").translate(None, _DROP)).translate(_AS_PARENS)
    for _level in range(MAX_DEPTH):
        if not shape:
            return True
        shape = shape.replace(b"()", b"")
    return not shape


def _locate_json_problem(value, where: str, what: str | None) -> None:
    """Walk a value known to hold a problem and raise FormatError naming it and its place.
    Iterative, so that a deep value cannot exhaust the stack while it is checked."""
    stack: list[tuple[Any, tuple]] = [(value, ())]
    while stack:
        current, path = stack.pop()
        if isinstance(current, str):
            problem = _string_problem(current)
        elif isinstance(current, float):
            problem = None if math.isfinite(current) else f"holds {_constant(current)}, which is not a JSON number"
        elif isinstance(current, (dict, list)):
            if len(path) >= MAX_DEPTH:
                raise FormatError(f"{where}: {TOO_DEEP} (at {_show_path(path)})")
            items = current.items() if isinstance(current, dict) else enumerate(current)
            for key, child in items:
                if isinstance(key, str):
                    key_problem = _string_problem(key)
                    if key_problem:
                        raise FormatError(f"{where}: a key {key_problem} (at {_show_path(path) or 'the top'})")
                if isinstance(child, (str, float, dict, list)):
                    stack.append((child, (*path, key)))
            continue
        else:
            continue
        if problem:
            at = f" (at {_show_path(path)})" if path else ""
            subject = what or ("a string" if isinstance(current, str) else "a number")
            raise FormatError(f"{where}: {subject} {problem}{at}")


class JsonStreamGuard:
    """A binary file for ijson that refuses, as the bytes go by, what ijson would let through:
    a lone surrogate escape (\\ud800), which its C backend decodes to "?" without a word; a NUL
    escape (\\u0000), which PostgreSQL cannot store; and nesting deeper than MAX_DEPTH, which ijson
    builds but nothing after it can serialise. (ijson itself refuses NaN, Infinity, raw control
    characters, bytes that are not UTF-8 and integers it cannot hold.) So a streamed dialog needs
    no second pass over its parsed value.

    Each read is scanned with a short tail kept for the next, so that an escape (or the pair of a
    high surrogate) split between reads is still seen; the nesting is counted on the bytes before
    the tail, carrying whether a string is open from one read to the next.
    """

    # Starts with the literal "\\u", which the regex engine finds at memchr speed; the backslashes
    # before it are counted only at a match (an escaped backslash then a "u" is text).
    _ESCAPE = re.compile(rb"\\u(?:([dD][89a-fA-F][0-9a-fA-F]{2})(?:\\u([dD][c-fC-F][0-9a-fA-F]{2}))?|(0000))")

    def __init__(self, f: IO[bytes], name: str):
        self.f, self.name = f, name
        self._tail = b""
        self._lines = 1  # newlines counted before the tail, for the message
        self._depth = 0  # containers open before the tail
        self._in_string = False  # whether the bytes before the tail end inside a string

    def read(self, size: int = -1) -> bytes:
        data = self.f.read(size)
        buffer = self._tail + data
        # Bytes from `cut` on go round again with the next read: the last 11 (an escape, or the
        # pair of a high surrogate, may be cut short there), and every escape that reaches them.
        cut = max(len(buffer) - 11, 0) if data else len(buffer)
        for match in self._ESCAPE.finditer(buffer):
            if _escaped(buffer, match.start()):
                continue  # an escaped backslash followed by the letter u: text, not an escape
            if match.end() > cut:
                cut = min(cut, match.start())
                continue
            line = self._lines + buffer.count(b"\n", 0, match.start())
            if match.group(3):
                raise FormatError(f"{self.name} line {line}: a string holds a NUL character (\\u0000), which cannot be stored")
            high = int(match.group(1), 16)
            if high >= 0xDC00 or match.group(2) is None:
                raise FormatError(
                    f"{self.name} line {line}: a string holds a lone surrogate (\\u{high:04x}), which is not text"
                )
        # Never cut a run of backslashes: its length says whether a "u" (or a quote) after it is escaped.
        while cut > 0 and buffer[cut - 1 : cut] == b"\\":
            cut -= 1
        self._count_nesting(buffer[:cut])
        self._lines += buffer.count(b"\n", 0, cut)
        self._tail = buffer[cut:]
        return data

    def _count_nesting(self, segment: bytes) -> None:
        """Follow the nesting through `segment` (never cut inside a run of backslashes), at C
        speed: escaped backslashes and quotes out, then all but quotes and brackets; a bracket
        counts when an even number of quotes (with the string open before, if any) precedes it."""
        depth, in_string = self._depth, self._in_string
        if b"\\" in segment:
            segment_text = segment.replace(b"\\\\", b"").replace(b'\\"', b"")
        else:
            segment_text = segment
        shape = np.frombuffer(segment_text.translate(None, _DROP), dtype=np.uint8)
        if not shape.size:
            return
        quotes = (shape == _QUOTE).view(np.uint8)
        quotes[0] ^= in_string
        inside = np.bitwise_xor.accumulate(quotes)  # 1 within a string (its closing quote included)
        steps = _step_of()[shape]
        steps[inside.view(bool)] = 0
        levels = np.cumsum(steps, dtype=np.int32)
        if depth + int(levels.max()) > MAX_DEPTH:
            line = self._lines + _newlines_before_too_deep(segment, depth, in_string)
            raise FormatError(f"{self.name} line {line}: {TOO_DEEP}")
        self._depth = depth + int(levels[-1])
        self._in_string = bool(inside[-1])


def _escaped(buffer: bytes, at: int) -> bool:
    """Whether the backslash at `at` is itself escaped: an odd run of backslashes before it."""
    run = 0
    while at - run - 1 >= 0 and buffer[at - run - 1] == 0x5C:
        run += 1
    return run % 2 == 1


def _newlines_before_too_deep(segment: bytes, depth: int, in_string: bool) -> int:
    """Newlines in `segment` before the bracket that opens level MAX_DEPTH + 1: the slow, exact
    walk, run only once a read is known to go too deep, so the message can name the line."""
    newlines, escaped = 0, False
    for byte in segment:
        if byte == 0x0A:
            newlines += 1
        elif in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in b"[{":
            depth += 1
            if depth > MAX_DEPTH:
                break
        elif byte in b"]}":
            depth -= 1
    return newlines


def first_json_char(f: IO[bytes]) -> str:
    """The first non-blank character of a JSON stream, without consuming the stream."""
    start = f.tell()
    try:
        while True:
            chunk = f.read(4096)
            if not chunk:
                return ""
            stripped = chunk.lstrip()
            if stripped:
                return chr(stripped[0])
    finally:
        f.seek(start)


def require_top_level(f: IO[bytes], name: str, expected: str, description: str) -> None:
    """Refuse a file whose top-level JSON value is not `expected` ("{" or "[")."""
    found = first_json_char(f)
    if found == expected:
        return
    kinds = {"{": "an object", "[": "a list", "": "nothing (the file is empty)"}
    got = kinds.get(found, "something that is not a JSON object or list")
    raise FormatError(f"{name}: expected {description}, but the file holds {got}")


def json_error_reason(exc: Exception) -> str:
    """ijson's message, reduced to its reason and the text near the error."""
    if isinstance(exc, RecursionError):
        return TOO_DEEP
    message = str(exc)
    if message[:2] in ("b'", 'b"'):  # the C backend sometimes returns a bytes repr
        message = message[2:-1].replace("\\n", "\n")
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    if not lines:
        return "not valid JSON"
    reason = lines[0].removeprefix("parse error: ").removeprefix("lexical error: ").rstrip(".")
    near = lines[1] if len(lines) > 1 and not lines[1].startswith("(right here)") else ""
    return f"{reason} (near: {near})" if near else reason


def invalid_json(path: Path, exc: Exception, item_name) -> FormatError:
    """The error for a file the streaming parser rejected, with the line and item if they can be found.

    `item_name(index, key)` names a top-level item in words, e.g. 'dialog "SNG0073.json"'.
    """
    located = locate_syntax_error(path, item_name)
    if located:
        return FormatError(f"{path.name} {located}")
    return FormatError(f"{path.name}: not valid JSON ({json_error_reason(exc)})")


# What the streaming parser raises for a file it cannot read: a syntax error, bytes that are not
# UTF-8, nesting deeper than the stack, a number Python will not convert.
JSON_ERRORS = (ijson.JSONError, UnicodeDecodeError, RecursionError, ValueError)


def kind_of(value) -> str:
    """A JSON value's type in words, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def field_problem(key: str, value, what: str) -> str:
    """Why a required field is not acceptable: it is missing (or null), or `value` is not `what`."""
    if value is None:
        return f'"{key}" is missing'
    shown = repr(value) if isinstance(value, str) else kind_of(value)
    return f'"{key}" must be {what}, not {shown}'


def speaker_and_text(turn: dict, where: str, speakers: dict, expected_speakers: str) -> tuple[str, str]:
    """(Quorum speaker, text) of a turn object whose speaker must be a key of `speakers`."""
    speaker = turn.get("speaker")
    if not isinstance(speaker, str) or speaker not in speakers:  # a list or object is not hashable
        raise FormatError(f"{where}: {field_problem('speaker', speaker, expected_speakers)}")
    text = turn.get("text")
    if not isinstance(text, str):
        raise FormatError(f"{where}: {field_problem('text', text, 'a string')}")
    return speakers[speaker], text


# -- slot values -------------------------------------------------------------------------------
# Values that say "no value" rather than name one; a rewrite has nothing to keep for them.
# yes/no are MultiWOZ's boolean slots (parking, internet), not words said in the turn.
NON_VALUES = frozenset(
    {"", "none", "?", "dontcare", "dont care", "don't care", "do n't care", "do nt care", "not mentioned", "yes", "no"}
)


def locate(text: str, lowered: str, value: str) -> str | None:
    """The surface form of `value` in `text` (case-insensitive, whole words), or None if it is not there.

    `lowered` is text.lower() (computed once per turn). An occurrence must start and end at a word
    boundary: "east" is not found in "least", nor "moderate" in "moderately", since a rewrite
    is checked for the stored value as whole words and the source itself must pass that check.
    Where either side of a boundary is written without spaces between words (Chinese, Japanese,
    Thai: "我想订北京饭店"), a word may begin or end between any two characters but a number's
    numerals (`text_units.joins_word`), as the rewrite check (`text_units.contains_value`) takes it.
    """
    needle = value.strip().lower()
    if needle in NON_VALUES:
        return None
    if len(lowered) != len(text):  # lower() changed the length (rare scripts): compare per match
        return _locate_slow(text, needle)
    start = lowered.find(needle)
    check_start, check_end = needle[0].isalnum(), needle[-1].isalnum()
    while start != -1:
        end = start + len(needle)
        if (not check_start or start == 0 or not text_units.joins_word(lowered[start - 1], needle[0])) and (
            not check_end or end == len(lowered) or not text_units.joins_word(needle[-1], lowered[end])
        ):
            return text[start:end]
        start = lowered.find(needle, start + 1)
    return None


def _locate_slow(text: str, needle: str) -> str | None:
    left = r"(?<!\w)" if needle[0].isalnum() else ""
    right = r"(?!\w)" if needle[-1].isalnum() else ""
    match = re.search(left + re.escape(needle) + right, text, re.IGNORECASE)
    return match.group(0) if match else None


# span_info's word indices count words of one of two kinds. ConvLab-2's copy is tokenised, with
# punctuation and clitics as words of their own ("I do n't want it ."), and its words are what the
# spaces separate. Untokenised texts ("I don't want it.") are counted either way in the wild: by
# spaces ("it." one word), or as the tokenised text would be ("it", "."). Both are offered for
# such texts, and the importer keeps the one under which the turn's spans spell their values.
_TOKENISED = re.compile(r"(?:^|\s)(?:[^\w\s]+|n't|'\w+)(?=\s|$)", re.IGNORECASE)
_MULTIWOZ_WORD = re.compile(r"\w+(?=n't\b)|n't\b|'(?:s|d|m|ll|re|ve)\b|[\w@&/:.\-]*\w|[^\w\s]", re.IGNORECASE)


_SPACED_WORD = re.compile(r"\S+")
_PUNCTUATION = re.compile(r"[^\w\s]")


def word_spans(text: str):
    """The ways span_info's indices may count the words of `text`: lists of (start, end) character
    offsets, the likelier first (by spaces), and a second (tokenised) one only where it differs.
    A generator: the caller stops at the first count under which every span agrees."""
    yield [m.span() for m in _SPACED_WORD.finditer(text)]
    if not _TOKENISED.search(text) and _PUNCTUATION.search(text):
        yield [m.span() for m in _MULTIWOZ_WORD.finditer(text)]


def span_surface(text: str, words: list, first: int, last: int, value: str) -> tuple[str | None, bool]:
    """The text of words `first`..`last` (inclusive, as span_info counts), and whether the value
    stands there as whole words; (None, False) if the indices are outside the turn. Where the value
    stands inside those words (a glued token like "16:15.get"), just that part; otherwise the words
    as written ("one" for "1", "9:15" for "09:15"), without punctuation at their edges."""
    if last < first or last >= len(words):
        return None, False
    start, end = words[first][0], words[last][1]
    segment = text[start:end]
    # `locate` (str.find with boundary checks), not a regular expression per value: this runs for
    # every span of every turn of an import, and compiling one pattern per value made imports slow.
    inner = locate(segment, segment.lower(), value) if value.strip() else None
    if inner is not None:
        return inner, True
    while start < end and _is_punctuation(text[start]):
        start += 1
    while end > start and _is_punctuation(text[end - 1]):
        end -= 1
    return text[start:end] or None, False


def _is_punctuation(char: str) -> bool:
    return unicodedata.category(char).startswith("P")
