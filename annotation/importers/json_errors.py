"""Say where a JSON file stops being valid JSON: line, column and the item it is in.

The streaming parser (ijson's C backend) parses a buffer at a time and reports neither the line
nor the item of a syntax error. When it fails, `locate_syntax_error` reads the file again with the
standard library's decoder, one top-level item at a time (so memory stays at about one item),
and describes the first error it finds. This runs only for a file that has already failed.
"""
from __future__ import annotations

import codecs
import json
import sys
from collections.abc import Callable
from pathlib import Path

_CHUNK = 1 << 20
_WHITESPACE = " \t\n\r"

# Deeper than any real corpus (MultiWOZ's belief states are 5 levels) and far below what the
# JSON encoder and PostgreSQL's jsonb accept, so a deeper value is refused while it is read.
MAX_DEPTH = 64
TOO_DEEP = f"a value is nested more than {MAX_DEPTH} levels deep"


class _NotJSONConstant(ValueError):
    """NaN, Infinity or -Infinity: Python's decoder takes them, JSON (and the importers) do not."""


def _refuse_constant(name: str):
    raise _NotJSONConstant(f"{name} is not a JSON number")


_decoder = json.JSONDecoder(parse_constant=_refuse_constant)
_CUT_SHORT = "the file ends in the middle of a value: is it complete?"

# Names the top-level item an error is in: (index, key of an object's member or None) -> words.
ItemName = Callable[[int, "str | None"], str]


class _Found(Exception):
    """The first syntax error, with its position in the current buffer."""

    def __init__(self, pos: int, reason: str, context: str = ""):
        super().__init__(reason)
        self.pos, self.reason, self.context = pos, reason, context


class _NotUTF8(Exception):
    def __init__(self, line: int):
        super().__init__(line)
        self.line = line


class _Text:
    """The file as text, read on demand; remembers the line and column where the buffer starts."""

    def __init__(self, f):
        self.f = f
        self.decode_bytes = codecs.getincrementaldecoder("utf-8-sig")()
        self.buf = ""
        self.eof = False
        self.line, self.column = 1, 1  # of buf[0]

    def more(self) -> bool:
        if self.eof:
            return False
        data = self.f.read(_CHUNK)
        self.eof = not data
        try:
            self.buf += self.decode_bytes.decode(data, final=self.eof)
        except UnicodeDecodeError as exc:
            raise _NotUTF8(self.line + self.buf.count("\n") + data[: max(exc.start, 0)].count(b"\n")) from None
        return not self.eof

    def skip_whitespace(self, i: int) -> int | None:
        while True:
            while i < len(self.buf) and self.buf[i] in _WHITESPACE:
                i += 1
            if i < len(self.buf):
                return i
            if not self.more():
                return None

    def value(self, i: int):
        """Decode the JSON value at i; returns (value, end). Raises _Found if it is invalid."""
        while True:
            try:
                value, end = _decoder.raw_decode(self.buf, i)
            except _NotJSONConstant as exc:
                raise _Found(i, str(exc)) from None
            except RecursionError:
                raise _Found(i, TOO_DEEP) from None
            except json.JSONDecodeError as exc:
                if self.eof and (not self.buf[exc.pos :].strip() or exc.msg.startswith("Unterminated")):
                    raise _Found(len(self.buf), _CUT_SHORT) from None
                # Near the end of the buffer the error may only mean "read more".
                if self.eof or len(self.buf) - exc.pos > _CHUNK:
                    raise _Found(exc.pos, exc.msg) from None
                self.more()
                continue
            except ValueError:  # int() refused a number: Python reads at most so many digits
                if not self.eof and len(self.buf) - i <= _CHUNK:
                    self.more()  # the number may only look long because the buffer cuts it
                    continue
                limit = sys.get_int_max_str_digits()
                raise _Found(i, f"an integer with more than {limit:,} digits (the most Python reads)") from None
            if end < len(self.buf) or self.eof:  # a number cut at the buffer's end would decode short
                return value, end
            self.more()

    def forget_before(self, i: int) -> int:
        """Drop what is read before i (keeping count of lines); returns i's new index."""
        if i < _CHUNK:
            return i
        newlines = self.buf.count("\n", 0, i)
        if newlines:
            self.line += newlines
            self.column = i - self.buf.rfind("\n", 0, i)
        else:
            self.column += i
        self.buf = self.buf[i:]
        return 0

    def where(self, pos: int) -> tuple[int, int]:
        newlines = self.buf.count("\n", 0, pos)
        if not newlines:
            return self.line, self.column + pos
        return self.line + newlines, pos - self.buf.rfind("\n", 0, pos)


def locate_syntax_error(path: Path, item_name: ItemName) -> str | None:
    """`line L, column C (in <item>): not valid JSON (<reason>)`, or None if the decoder finds no error."""
    with open(path, "rb") as f:
        text = _Text(f)
        try:
            _scan(text, item_name)
        except _Found as found:
            line, column = text.where(found.pos)
            context = f" ({found.context})" if found.context else ""
            return f"line {line}, column {column}{context}: not valid JSON ({found.reason})"
        except _NotUTF8 as bad:
            return f"line {bad.line}: not UTF-8 text"
    return None


def _scan(text: _Text, item_name: ItemName) -> None:
    i = text.skip_whitespace(0)
    if i is None:
        raise _Found(0, "the file is empty")
    opener = text.buf[i]
    if opener not in "{[":
        text.value(i)  # a scalar at the top level: valid or not, nothing to point at inside
        return
    closer = "}" if opener == "{" else "]"
    i += 1
    index = 0
    last = ""
    while True:
        i = text.skip_whitespace(i)
        if i is None:
            raise _Found(len(text.buf), f"the file ends before the closing {closer!r}: is it complete?", last)
        if text.buf[i] == closer:
            break
        if index:
            if text.buf[i] != ",":
                raise _Found(i, f"Expecting ',' delimiter or {closer!r}", last)
            i = text.skip_whitespace(i + 1)
            if i is None:
                raise _Found(len(text.buf), _CUT_SHORT, last)
        key = None
        if opener == "{":
            key, i = _key(text, i, item_name, index, last)
        _, i = _value(text, i, f"in {item_name(index, key)}")
        last = f"after {item_name(index, key)}"
        index += 1
        i = text.forget_before(i)
    end = text.skip_whitespace(i + 1)
    if end is not None:
        raise _Found(end, "Extra data after the end of the top-level value")


def _key(text: _Text, i: int, item_name: ItemName, index: int, last: str) -> tuple[str, int]:
    """An object member's key and its ':' from `i`: (the key, where its value starts)."""
    if text.buf[i] != '"':
        raise _Found(i, "Expecting property name enclosed in double quotes", last)
    key, after = _value(text, i, "")
    colon = text.skip_whitespace(after)
    if colon is None or text.buf[colon] != ":":
        raise _Found(colon if colon is not None else len(text.buf), "Expecting ':' delimiter", f"in {item_name(index, key)}")
    start = text.skip_whitespace(colon + 1)
    if start is None:
        raise _Found(len(text.buf), _CUT_SHORT, f"in {item_name(index, key)}")
    return key, start


def _value(text: _Text, i: int, context: str):
    try:
        return text.value(i)
    except _Found as found:
        found.context = found.context or context
        raise
