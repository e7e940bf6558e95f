"""Typing-process features and flags: how a text came to be, from its field's log
(`annotation/text/typing_log.py`). Pure: no Django.

`features(record, text)` measures one field; `field_flags(features, thresholds)` says which flags
it raises, each with its evidence in words and numbers. Flags are evidence for a reviewer, never
verdicts (see `flags.py`). The thresholds are per job (`QualityPolicy`, read through
`flags.FlagThresholds`); their defaults and where they come from:

- pauses are inter-key intervals of at least `PAUSE_MS` (2 s), the threshold most writing-process
  studies use for a pause above typing (Conijn, Roeser & van Zaanen 2019, "Understanding the
  keystroke log: the effect of writing task on keystroke features", Reading and Writing 32);
  composing lengthens the intervals between words and puts such pauses before content, typing out
  a text one reads leaves few. A text that follows its source on the page (the "typos" variant,
  `SOURCE_COPY_SIMILARITY`) is typed out from what one reads by design, so its rhythm says nothing. A crowd answer is a sentence, too short to count 2 s pauses, so the
  rhythm flag counts hesitations of at least `HESITATION_MS` (1 s): `transcription_pause_share`
  (default 0.015 of intervals, with at least `transcription_min_chars`, default 40, typed; set on
  the harness's profiles, perf/bench_typing.py, figures in docs/measurements.md);
- `implausible_iki_ms` (default 60): the median inter-key interval of the fastest run of
  `SPEED_WINDOW` keys. 60 ms a key is 200 words a minute; in 136 million keystrokes of 168,000
  typists the fastest averaged about 120 (Dhakal, Feit, Kristensson & Oulasvirta 2018,
  "Observations on typing from 136 million keystrokes", CHI), and Feit, Weir & Oulasvirta 2016
  ("How we type", CHI) measured their fastest touch typists near the same rate;
- `paste_share` (default 0.5, the existing `pasted` flag's): pasted or dropped characters over all
  characters entered;
- `offscreen_min_chars` (default 20, about four words): an insertion without typing that large,
  after the page, window or field was left for at least `AWAY_MS`, is text composed elsewhere
  (Potato's "off-screen composition");
- `synthetic_min_chars` (default 10): characters that arrived with no key pressed (autofill, a
  script dispatching input, a value set by script, which the log shows as text it cannot account
  for); Potato's "synthetic input" and "silent insertion";
- `revision_free_min_chars` (default 200): a text that long typed without one deletion, undo or
  cut. Everyday typists correct as they go (Dhakal et al. 2018 report backspace in most sentences
  typed), so a long answer without any revision is unusual; off for short answers.

Text an input method composed (`m` events: pinyin, kana, Hangul, a phone keyboard's words; `i`:
voice dictation, handwriting, composed with no key) is the worker's own: `keyed` counts what its
compositions committed, so the paste share compares like with like, and dictation is not "text
that arrived without key presses" (a page script cannot compose; see typing_log.py). A composition's keys and
its corrections happen inside the input method, out of the log's sight, so the rhythm, speed and
revision flags read only the characters typed key by key (`keyed` less `composed`).
"""
from dataclasses import dataclass
from statistics import median, pstdev

from ..text import typing_log

PAUSE_MS = 2000
HESITATION_MS = 1000
AWAY_MS = 2000
SPEED_WINDOW = 20
#: A text at least this similar to its source (`flags.similarity`, 0-1) reproduces what the page
#: shows: "typos" is the source retyped with mistakes (0.95 for "I ned a cheap tabel ..."), and an
#: honest worker types it as one types out a text one reads. Its rhythm is no evidence; a
#: paraphrase or a verbose rewrite stays below (0.55 and 0.66 in the demo's kind of job).
SOURCE_COPY_SIMILARITY = 0.8
INSERT_LETTERS = "prxs"  # text that came without typing
AWAY_PAIRS = {"h": "v", "w": "g", "b": "f"}  # left -> came back

CODES = {
    "paste_dominant": "text mostly pasted or dropped in",
    "transcription_rhythm": "typed at a steady rhythm with no pauses, as one types out a text one reads",
    "composed_offscreen": "text inserted after the page was left, composed elsewhere",
    "synthetic_input": "text that arrived without key presses",
    "implausible_speed": "typed faster than people type",
    "revision_free": "a long text typed without a single correction",
    "malformed_log": "a typing log that could not be read",
}

#: The same flags as a count of responses reads them ("2 of 2 responses typed faster than people type").
AS_COUNT = {
    "paste_dominant": "responses whose text was mostly pasted or dropped in",
    "transcription_rhythm": "responses typed at a steady rhythm with no pauses, as one types out a text one reads",
    "composed_offscreen": "responses whose text was inserted after the page was left, composed elsewhere",
    "synthetic_input": "responses whose text arrived without key presses",
    "implausible_speed": "responses typed faster than people type",
    "revision_free": "responses with a long text typed without a single correction",
    "malformed_log": "responses with a typing log that could not be read",
}


@dataclass(frozen=True)
class TypingThresholds:
    paste_share: float = 0.5
    transcription_pause_share: float = 0.015
    transcription_min_chars: int = 40
    offscreen_min_chars: int = 20
    synthetic_min_chars: int = 10
    implausible_iki_ms: int = 60
    revision_free_min_chars: int = 200


def features(record: dict, text: str) -> dict:
    """What one field's log says, as numbers (all JSON-safe); {"malformed": why} for a bad log."""
    if "malformed" in record:
        return {"malformed": str(record["malformed"])}
    try:
        events = typing_log.checked_events(record)
    except typing_log.MalformedLog as exc:
        return {"malformed": str(exc)}
    counts, chars = record.get("c", {}), record.get("z", {})
    positive = _positive_sizes(events)
    f = {
        "events": sum(counts.values()),
        "capped": bool(record.get("t")),
        "keyed": sum(_entered(positive, chars, record, letter) for letter in "kmi"),
        "composed": sum(_entered(positive, chars, record, letter) for letter in "mi"),
        "dictated": _entered(positive, chars, record, "i"),
        "pasted": positive.get("p", 0),
        "dropped": positive.get("r", 0),
        "unkeyed": positive.get("x", 0) + positive.get("s", 0),
        "revisions": counts.get("d", 0) + counts.get("u", 0) + counts.get("c", 0),
        "length": len(text),
        "unexplained": len(text) - (record.get("l", 0) + sum(chars.get(letter, 0) for letter in typing_log.TEXT_LETTERS)),
    }
    f.update(_rhythm(events))
    f.update(_away(events))
    return f


def _entered(positive: dict, chars: dict, record: dict, letter: str) -> int:
    """Characters `letter` events added: from the events, or from the counts when the log was capped."""
    return positive.get(letter, 0) if not record.get("t") else max(chars.get(letter, 0), 0)


def _positive_sizes(events) -> dict:
    out: dict[str, int] = {}
    for e in events:
        if e.size > 0:
            out[e.letter] = out.get(e.letter, 0) + e.size
    return out


def _rhythm(events) -> dict:
    """Inter-key intervals (a key after a key), pauses among them, the fastest run's median."""
    ikis = [e.dt_ms for prev, e in zip(events, events[1:], strict=False) if e.letter in "kd" and prev.letter in "kd"]
    typing = [i for i in ikis if i < PAUSE_MS]
    pauses = len(ikis) - len(typing)
    hesitations = sum(1 for i in ikis if i >= HESITATION_MS)
    fastest = None
    if len(typing) >= SPEED_WINDOW:
        fastest = min(median(typing[i:i + SPEED_WINDOW]) for i in range(0, len(typing) - SPEED_WINDOW + 1))
    mean = sum(typing) / len(typing) if typing else None
    return {
        "intervals": len(ikis),
        "pauses": pauses,
        "hesitations": hesitations,
        "hesitation_share": hesitations / len(ikis) if ikis else None,
        "median_iki_ms": median(typing) if typing else None,
        "iki_cv": (pstdev(typing) / mean) if typing and mean else None,
        "fastest_run_iki_ms": fastest,
    }


def _away(events) -> dict:
    """Time away (page hidden, window or field left) and the largest insertion without typing made
    soon after coming back, before any key: (characters, seconds away before it)."""
    away_ms, gone, largest, largest_away = 0, 0.0, 0, 0.0
    left_at: dict[str, int] = {}
    typed_since_back = True
    keyed_while_hidden = 0
    for e in events:
        if e.letter in AWAY_PAIRS:
            left_at.setdefault(e.letter, e.at_ms)
        back = next((k for k, v in AWAY_PAIRS.items() if v == e.letter), None)
        if back and back in left_at:
            span = e.at_ms - left_at.pop(back)
            if back != "b":
                away_ms += span
            if span >= AWAY_MS:
                gone, typed_since_back = span / 1000, False
        if e.letter == "k" and "h" in left_at:
            keyed_while_hidden += 1
        if e.letter in "kmi":
            typed_since_back = True
        elif e.letter in INSERT_LETTERS and e.size > 0 and not typed_since_back and e.size > largest:
            largest, largest_away = e.size, gone
    return {"away_s": away_ms / 1000, "offscreen_insert": largest, "offscreen_away_s": largest_away,
            "keyed_while_hidden": keyed_while_hidden}


def field_flags(f: dict, t: TypingThresholds = TypingThresholds()) -> dict:
    """{code: evidence} for one field's features."""
    if "malformed" in f:
        return {"malformed_log": f"the typing log could not be read: {f['malformed']}"}
    found = ((code, rule(f, t)) for code, rule in FIELD_RULES)
    return {code: evidence for code, evidence in found if evidence}


def _paste_dominant(f: dict, t: TypingThresholds) -> str | None:
    entered = f["keyed"] + f["pasted"] + f["dropped"] + f["unkeyed"]
    brought = f["pasted"] + f["dropped"]
    if not (brought and entered and brought / entered >= t.paste_share):
        return None
    return f"{brought} of {entered} characters entered were pasted or dropped ({brought / entered:.0%}; flagged from {t.paste_share:.0%})"


def _by_keys(f: dict) -> int:
    """Characters typed key by key, whose intervals the log has (not through an input method)."""
    return f["keyed"] - f.get("composed", 0)


def _composed_note(f: dict) -> str:
    composed = f.get("composed", 0)
    return f"; {composed} more composed with an input method, not timed" if composed else ""


def _transcription_rhythm(f: dict, t: TypingThresholds) -> str | None:
    if f.get("source_similarity", 0) >= SOURCE_COPY_SIMILARITY:
        return None  # the text follows the source shown on the page: typing it is transcribing by design
    human_speed = f["median_iki_ms"] is not None and f["median_iki_ms"] >= t.implausible_iki_ms  # else implausible_speed says it
    share = f["hesitation_share"]
    if not (human_speed and _by_keys(f) >= t.transcription_min_chars and share is not None and share < t.transcription_pause_share):
        return None
    return (
        f"{_by_keys(f)} characters typed with {f['hesitations']} hesitations of 1 s or more in {f['intervals']} intervals "
        f"({share:.1%}; flagged below {t.transcription_pause_share:.1%}), median {f['median_iki_ms']:.0f} ms a key, "
        f"{f['revisions']} corrections{_composed_note(f)}"
    )


def unless_all_retyped(fields: list[dict]) -> None:
    """One response's fields: when two or more have a text and every one follows its source, none is
    excused from the rhythm flag (their `source_similarity` is dropped). A "typos" field is retyped
    by design beside rewrites that are not (and alone, in a job that asks only for typos); a
    response whose every rewrite is the source retyped with small edits is the copying the rhythm
    flag is for."""
    texts = [f for f in fields if "source_similarity" in f]
    if len(texts) > 1 and all(f["source_similarity"] >= SOURCE_COPY_SIMILARITY for f in texts):
        for f in texts:
            del f["source_similarity"]


def _rhythm_judged(f: dict, t: TypingThresholds) -> bool:
    """Whether a field's rhythm is read at all: typed key by key at a human speed, not a retyping of its source."""
    return ("malformed" not in f and f.get("source_similarity", 0) < SOURCE_COPY_SIMILARITY and f["intervals"] > 0
            and f["median_iki_ms"] is not None and f["median_iki_ms"] >= t.implausible_iki_ms)


def response_hesitations(fields: list[dict], t: TypingThresholds = TypingThresholds()) -> tuple[int, int] | None:
    """(hesitations, key intervals) over all of one response's fields whose rhythm is read; None
    when none is. `transcription_rhythm` flags a field only when the response as a whole also
    hesitates under the threshold: a 12-word paraphrase typed without a 1 s pause happens to people
    who compose (about one in three of them, at a 1 s pause before one word in ten), and one even
    field beside three that were composed is no evidence of typing out a text read elsewhere."""
    read = [f for f in fields if _rhythm_judged(f, t)]
    intervals = sum(f["intervals"] for f in read)
    return (sum(f["hesitations"] for f in read), intervals) if intervals else None


def _composed_offscreen(f: dict, t: TypingThresholds) -> str | None:
    if f["offscreen_insert"] < max(t.offscreen_min_chars, 1):  # 0 characters is no evidence (a stored 0)
        return None
    return (
        f"{f['offscreen_insert']} characters inserted without typing after {f['offscreen_away_s']:.0f} s away from the page"
        f" (flagged from {t.offscreen_min_chars})"
    )


def _synthetic_input(f: dict, t: TypingThresholds) -> str | None:
    unaccounted = max(f["unexplained"], 0)
    if f["unkeyed"] + unaccounted < max(t.synthetic_min_chars, 1) and not f["keyed_while_hidden"]:
        return None
    parts = []
    if f["unkeyed"]:
        parts.append(f"{f['unkeyed']} characters inserted with no key pressed")
    if unaccounted:
        parts.append(f"{unaccounted} characters of the text no recorded edit made")
    if f["keyed_while_hidden"]:
        parts.append(f"{f['keyed_while_hidden']} keys typed while the page was hidden")
    return "; ".join(parts) + f" (flagged from {t.synthetic_min_chars} characters)"


def _implausible_speed(f: dict, t: TypingThresholds) -> str | None:
    if f["fastest_run_iki_ms"] is None or f["fastest_run_iki_ms"] >= t.implausible_iki_ms:
        return None
    wpm = 12000 / max(f["fastest_run_iki_ms"], 1)
    return (
        f"{SPEED_WINDOW} keys in a row at a median {f['fastest_run_iki_ms']:.0f} ms a key (about {wpm:.0f} words a minute;"
        f" flagged below {t.implausible_iki_ms} ms)"
    )


def _revision_free(f: dict, t: TypingThresholds) -> str | None:
    least = max(t.revision_free_min_chars, 1)
    if not (_by_keys(f) >= least and f["revisions"] == 0 and f["length"] >= least):
        return None
    if f.get("composed"):
        return (
            f"{_by_keys(f)} characters typed key by key without one deletion, undo or cut "
            f"(flagged from {t.revision_free_min_chars}{_composed_note(f)})"
        )
    return f"{f['length']} characters typed without one deletion, undo or cut (flagged from {t.revision_free_min_chars})"


#: The field flags in the order a reviewer reads them, each a rule over the features: evidence or None.
FIELD_RULES = (
    ("paste_dominant", _paste_dominant),
    ("transcription_rhythm", _transcription_rhythm),
    ("composed_offscreen", _composed_offscreen),
    ("synthetic_input", _synthetic_input),
    ("implausible_speed", _implausible_speed),
    ("revision_free", _revision_free),
)


def summary(f: dict) -> str:
    """One line a reviewer reads beside a field's timeline."""
    if "malformed" in f:
        return f"typing log unreadable: {f['malformed']}"
    parts = [f"{f['keyed']} typed", f"{f['pasted'] + f['dropped']} pasted or dropped"]
    if f.get("composed"):
        dictated = f.get("dictated", 0)
        keys = f["composed"] - dictated
        how = [f"{keys} with an input method"] * bool(keys) + [f"{dictated} dictated or handwritten"] * bool(dictated)
        parts[0] += f" ({', '.join(how)})"
    if f["unkeyed"]:
        parts.append(f"{f['unkeyed']} inserted without keys")
    parts.append(f"{f['revisions']} corrections")
    if f["median_iki_ms"] is not None:
        parts.append(f"median {f['median_iki_ms']:.0f} ms a key, {f['pauses']} pauses")
    if f["away_s"]:
        parts.append(f"{f['away_s']:.0f} s away")
    return ", ".join(parts)


def _spans(prev, e) -> list[tuple[int, int, str]]:
    """What an edit event puts on the timeline: (from ms, to ms, activity)."""
    if e.letter in "kd":
        if e.dt_ms >= PAUSE_MS and prev is not None and prev.letter in "kd":
            return [(e.at_ms - e.dt_ms, e.at_ms, "pause"), (e.at_ms, e.at_ms, "typing")]
        return [(e.at_ms, e.at_ms, "typing")]
    if e.letter in "mi":
        return [(e.at_ms, e.at_ms, "typing")]
    if e.letter in "pr":
        return [(e.at_ms, e.at_ms, "paste")]
    if e.letter in "xs":
        return [(e.at_ms, e.at_ms, "insert")]
    return []


def timeline(record: dict, width: int = 60) -> list[dict]:
    """A compact timeline for a reviewer: the field's session cut into `width` equal spans, each
    the dominant activity ("typing", "pause", "paste", "insert", "away", "" for nothing)."""
    if "malformed" in record:
        return []
    try:
        events = typing_log.parse_events(record.get("e", ""))
    except typing_log.MalformedLog:
        return []
    if not events:
        return []
    start, end = events[0].at_ms, events[-1].at_ms
    span = max(end - start, 1) / width
    cells = [""] * width
    rank = {"": 0, "pause": 1, "away": 2, "typing": 3, "insert": 4, "paste": 5}
    away_from = None

    def mark(a, b, what):
        for i in range(min(int((a - start) / span), width - 1), min(int((b - start) / span), width - 1) + 1):
            if rank[what] > rank[cells[i]]:
                cells[i] = what

    for prev, e in zip([None, *events], events, strict=False):
        if e.letter in "hw" and away_from is None:
            away_from = e.at_ms
        elif e.letter in "vg" and away_from is not None:
            mark(away_from, e.at_ms, "away")
            away_from = None
        else:
            for a, b, what in _spans(prev, e):
                mark(a, b, what)
    return [{"what": c} for c in cells]
