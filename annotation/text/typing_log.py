"""The typing-process log a work page keeps per free-text answer field: its format and its check.
Pure: no Django. The page's side is `static/typing.js`; the features and flags read from it are in
`annotation/quality/typing.py`.

What is recorded is timing only, never which keys: each change of a field's text (how it came, by
how many characters its length changed) and each focus change of the field and of the page, with
the time since the field's previous event quantised to `QUANTUM_MS`.

The page posts one hidden field, `typing_log`: JSON {field name: record}, a record being

    {"v": 1, "l": <length of the text when recording began>, "e": "<events>",
     "c": {letter: count}, "z": {letter: net characters}, "t": <true when events were capped>}

`e` is events one after another, each `<LETTER><dt>[.<size>]` (the letter in capitals, so it
ends the digits before it): dt is lower-case base 36 in units of
`QUANTUM_MS` since the field's previous event (the first since the page opened); size is the signed
change in the text's length in base 36 (left out: +1 for `k`, -1 for `d`, 0 for the rest). Letters:

    k  text typed with a key pressed just before      d  text deleted with a key
    m  text an input method composed with keys (pinyin, kana, Hangul, a phone keyboard's words):
       one event per composition
    i  text an input method composed with no key pressed (voice dictation, handwriting)
    p  pasted                                          r  dropped in (drag and drop)
    x  inserted with no key pressed (autofill, an input or key event a script dispatched)
    u  undo or redo                                    c  cut (or dragged out)
    s  the text changed without any input event (a script set the value)
    f  the field gained focus                          b  the field lost focus
    h  the page was hidden (another tab)               v  the page was visible again
    w  the window lost focus (another window)          g  the window had focus again

A composition is recorded once, when it ends, with the change its commit made to the length (the
pinyin "nihao" committed as "你好" is `M<dt>.2`; a cancelled one has size 0): its updates on the
way are not events, nor are the keys the input method takes, so `m` events have no inter-key
intervals. One composed without a key (dictation, handwriting) is an `i`: a person's own input,
which a page script cannot make (the page ignores composition, key and input events a script
dispatched; an input event a script dispatched is an `x`, whatever kind it claims). Logs from
before `m` and `i` (version 1 all the same; a dictation there was an `x`) are read as they always were.

After `MAX_EVENTS` events the page stops appending and only counts (`t` true); `c` and `z` always
cover the whole session, so a capped log still says how much was typed, pasted and inserted.
"""
import json
import re
from dataclasses import dataclass

QUANTUM_MS = 5
MAX_EVENTS = 1500
#: A field's event string: at most MAX_EVENTS events of at most 12 characters each.
MAX_EVENT_CHARS = MAX_EVENTS * 12
#: The whole posted value: twenty fields of full logs and their counts.
MAX_POSTED_CHARS = 20 * (MAX_EVENT_CHARS + 600)
MAX_FIELDS = 20
LETTERS = "kdmiprxucsfbhvwg"
TEXT_LETTERS = "kdmiprxucs"
DEFAULT_SIZE = {"k": 1, "d": -1}
_EVENT = re.compile(r"([A-Z])([0-9a-z]{1,4})(?:\.(-?[0-9a-z]{1,6}))?")
_SUMMARY_MAX = 10**7


class MalformedLog(ValueError):
    """What is wrong with a log, in words a worker or reviewer can read."""


@dataclass(frozen=True)
class Event:
    letter: str
    at_ms: int  # since the page opened (the sum of the quantised intervals)
    dt_ms: int  # since the field's previous event
    size: int


def parse_events(text: str) -> list[Event]:
    """The events of a log's `e` string; MalformedLog names the first thing wrong."""
    if not isinstance(text, str):
        raise MalformedLog("the events are not text")
    if len(text) > MAX_EVENT_CHARS:
        raise MalformedLog(f"the events are {len(text)} characters long, more than {MAX_EVENT_CHARS}")
    events, at, pos = [], 0, 0
    for match in _EVENT.finditer(text):
        if match.start() != pos:
            raise MalformedLog(f"unreadable event at character {pos}")
        pos = match.end()
        letter, dt, size = match.group(1).lower(), int(match.group(2), 36) * QUANTUM_MS, match.group(3)
        if letter not in LETTERS:
            raise MalformedLog(f"unknown event {letter!r} at character {match.start()}")
        if size is not None and letter not in TEXT_LETTERS:
            raise MalformedLog(f"event {letter!r} at character {match.start()} cannot change the text")
        at += dt
        events.append(Event(letter, at, dt, int(size, 36) if size is not None else DEFAULT_SIZE.get(letter, 0)))
    if pos != len(text):
        raise MalformedLog(f"unreadable event at character {pos}")
    if len(events) > MAX_EVENTS:
        raise MalformedLog(f"{len(events)} events, more than {MAX_EVENTS}")
    return events


def _counts(value, name: str) -> dict:
    if not isinstance(value, dict):
        raise MalformedLog(f"'{name}' is not an object")
    for letter, n in value.items():
        if letter not in LETTERS:
            raise MalformedLog(f"'{name}' counts an unknown event {letter!r}")
        if isinstance(n, bool) or not isinstance(n, int) or abs(n) > _SUMMARY_MAX:
            raise MalformedLog(f"'{name}' has a count for {letter!r} that is not a whole number")
    return value


def check_record(record) -> dict:
    """One field's record, checked: the same dict when it is well formed, else MalformedLog.

    Checked: the shape, the grammar, the caps, and that the counts agree with the events (equal when
    the log is complete; at least as many when it was capped)."""
    checked_events(record)
    return record


def checked_events(record) -> list[Event]:
    """`check_record`, returning the record's events (parsed once)."""
    if not isinstance(record, dict):
        raise MalformedLog("the record is not an object")
    unknown = set(record) - {"v", "l", "e", "c", "z", "t"}
    if unknown:
        raise MalformedLog(f"unknown keys {sorted(unknown)}")
    if record.get("v") != 1:
        raise MalformedLog("unknown version")
    start = record.get("l", 0)
    if isinstance(start, bool) or not isinstance(start, int) or not 0 <= start <= _SUMMARY_MAX:
        raise MalformedLog("the starting length is not a whole number")
    events = parse_events(record.get("e", ""))
    counts, chars = _counts(record.get("c", {}), "c"), _counts(record.get("z", {}), "z")
    capped = record.get("t", False)
    if not isinstance(capped, bool):
        raise MalformedLog("'t' is not true or false")
    seen: dict[str, int] = {}
    net: dict[str, int] = {}
    for e in events:
        seen[e.letter] = seen.get(e.letter, 0) + 1
        net[e.letter] = net.get(e.letter, 0) + e.size
    for letter in LETTERS:
        n, given = seen.get(letter, 0), counts.get(letter, 0)
        if (given != n) if not capped else (given < n):
            raise MalformedLog(f"the count of {letter!r} events ({given}) does not match the events ({n})")
        if not capped and chars.get(letter, 0) != net.get(letter, 0):
            raise MalformedLog(f"the characters of {letter!r} events ({chars.get(letter, 0)}) do not match the events")
    if capped and len(events) < MAX_EVENTS:
        raise MalformedLog("marked as capped with fewer events than the cap")
    return events


def check_posted(text: str, text_fields) -> tuple[dict, dict]:
    """The posted `typing_log` value: ({field: record} well formed, {field or "": why malformed}).

    Only the given free-text fields are kept; an empty value is no log (a page without JavaScript).
    A field whose record is malformed is left out of the first dict and named in the second; a
    value that is not JSON at all, or too large, is named under "" (every field)."""
    if not text:
        return {}, {}
    if len(text) > MAX_POSTED_CHARS:
        return {}, {"": f"the typing record is {len(text)} characters long, more than {MAX_POSTED_CHARS}"}
    try:
        data = json.loads(text)
    except ValueError:
        return {}, {"": "the typing record is not JSON"}
    if not isinstance(data, dict) or len(data) > MAX_FIELDS:
        return {}, {"": "the typing record is not an object of at most 20 fields"}
    wanted = set(text_fields)
    good, bad = {}, {}
    for name, record in data.items():
        if name not in wanted:
            continue
        try:
            good[name] = check_record(record)
        except MalformedLog as exc:
            bad[name] = str(exc)
    return good, bad


def encoded_size(record: dict) -> int:
    """Bytes of one field's record as posted (compact JSON, UTF-8)."""
    return len(json.dumps(record, separators=(",", ":")).encode())


def _base36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    sign, n = ("-", -n) if n < 0 else ("", n)
    out = ""
    while True:
        n, r = divmod(n, 36)
        out = digits[r] + out
        if n == 0:
            return sign + out


def build_record(events, start: int = 0) -> dict:
    """A record as the page would post it, from (letter, ms since the previous event, size) triples
    (size None: the letter's default). For tests and the harness; the page's own is static/typing.js."""
    parts: list[str] = []
    counts: dict[str, int] = {}
    chars: dict[str, int] = {}
    for letter, dt_ms, size in events:
        size = DEFAULT_SIZE.get(letter, 0) if size is None else size
        dt = min(round(dt_ms / QUANTUM_MS), 36**4 - 1)
        token = letter.upper() + _base36(dt)
        if size != DEFAULT_SIZE.get(letter, 0):
            token += "." + _base36(size)
        counts[letter] = counts.get(letter, 0) + 1
        if size:
            chars[letter] = chars.get(letter, 0) + size
        if len(parts) < MAX_EVENTS:
            parts.append(token)
    record = {"v": 1, "l": start, "e": "".join(parts), "c": counts, "z": chars}
    if sum(counts.values()) > MAX_EVENTS:
        record["t"] = True
    return record
