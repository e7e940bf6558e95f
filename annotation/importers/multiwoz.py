"""MultiWOZ 2.x `data.json`: a JSON object from dialog id to `{"goal": ..., "log": [turn, ...]}`.

Log entries alternate user (even index) and system (odd index). Every entry has `text` and
`metadata` (`{}` on user turns, the belief state on system turns) and, from MultiWOZ 2.1 on,
`dialog_act` (`{"Domain-Act": [[slot, value], ...]}`) and `span_info`
(`[[act, slot, value, start, end], ...]`).

Slot values of a user turn come from span_info's word indices (the words there, as written), then
from the dialog_act mentions span_info lacks, looked up as whole words and stored in the form found
there ("thai" -> "Thai"); see docs/formats.md. Values that are not in the text, and "none"/"?"/"dontcare"-like
values, are left out. Slot names are "<domain>-<slot>" in lower case ("restaurant-food").

Kept for export: dialog.meta holds every dialog key but `log` (the goal), turn.raw every turn
key but `text` (metadata, dialog_act, span_info).
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any, cast

import ijson

from .base import (
    END,
    JSON_ERRORS,
    NON_VALUES,
    SYSTEM,
    USER,
    CorpusReader,
    DialogRecord,
    FormatError,
    JsonStreamGuard,
    TurnRecord,
    field_problem,
    invalid_json,
    kind_of,
    locate,
    numbered,
    require_top_level,
    span_surface,
    word_spans,
)


class MultiWOZReader(CorpusReader):
    label = "MultiWOZ data.json"

    def dialogs(self) -> Iterator[DialogRecord]:
        name = self.data_name
        require_top_level(
            self._open_data(), name, "{", "a MultiWOZ data.json: a JSON object from dialog id to {goal, log}"
        )
        stream = ijson.kvitems(JsonStreamGuard(self._open_data(), name), "", use_float=True)
        while True:
            try:
                item = next(stream, END)
            except JSON_ERRORS as exc:
                raise invalid_json(self.data_path, exc, lambda index, key: f'dialog "{key}"') from None
            if item is END:
                return
            dialog_id, dialog = cast(tuple[str, Any], item)  # a (key, value) pair of ijson.kvitems
            yield self._dialog(dialog_id, dialog)

    def _dialog(self, dialog_id: str, dialog) -> DialogRecord:
        where = f'{self.data_name}: dialog "{dialog_id}"'
        self._claim_id(dialog_id, where)
        if not isinstance(dialog, dict):
            raise FormatError(f"{where}: expected an object with goal and log, not {kind_of(dialog)}")
        log = dialog.get("log")
        if not isinstance(log, list):
            raise FormatError(f"{where}: {field_problem('log', log, 'a list')}")
        if not log:
            raise FormatError(f'{where}: "log" has no turns')
        goal = dialog.get("goal", {})
        if not isinstance(goal, dict):
            raise FormatError(f'{where}: "goal" must be an object, not {kind_of(goal)}')
        meta = {key: value for key, value in dialog.items() if key != "log"}
        turns = [self._turn(entry, index, where) for index, entry in enumerate(log)]
        return DialogRecord(dialog_id, meta, turns)

    def _turn(self, entry, index: int, where: str) -> TurnRecord:
        at = _Place(where, index)
        if not isinstance(entry, dict):
            raise FormatError(f"{at}: expected an object with text and metadata, not {kind_of(entry)}")
        text = entry.get("text")
        if not isinstance(text, str):
            reason = field_problem("text", text, "a string")
            raise FormatError(f"{at}: {reason}")
        metadata = entry.get("metadata")
        if not isinstance(metadata, dict):
            reason = field_problem("metadata", metadata, "an object")
            raise FormatError(f"{at}: {reason}")
        is_user = index % 2 == 0
        if is_user and metadata:
            # A belief state on an even turn means the log lost its user/system alternation.
            raise FormatError(
                f"{at}: turns at even places of the log (log[0], log[2], ...) are user turns, but this one carries a belief state "
                "(metadata); the log does not alternate user and system"
            )
        span_info = entry.get("span_info", [])
        if not isinstance(span_info, list):
            raise FormatError(f'{at}: "span_info" must be a list, not {kind_of(span_info)}')
        dialog_act = entry.get("dialog_act", {})
        if isinstance(dialog_act, str):  # MultiWOZ writes "No Annotation" for unannotated turns
            dialog_act = {}
        elif not isinstance(dialog_act, dict):
            raise FormatError(f'{at}: "dialog_act" must be an object, not {kind_of(dialog_act)}')
        slot_values = _slot_values(text, span_info, dialog_act, where, index) if is_user else []
        raw = dict(entry)  # every key but text: metadata, dialog_act, span_info (a C-level copy)
        del raw["text"]
        return TurnRecord(USER if is_user else SYSTEM, text, slot_values, raw)


class _Place:
    """Where a turn is ('data.json: dialog "X", turn 3 (log[2])'), formatted only if a message needs it."""

    __slots__ = ("dialog", "index")

    def __init__(self, dialog: str, index: int):
        self.dialog, self.index = dialog, index

    def __str__(self):
        return f"{self.dialog}, {numbered('turn', 'log', self.index)}"


# "Restaurant-Inform", "Food" -> "restaurant-food"; a corpus has few distinct pairs. Bounded, as
# the pairs come from uploaded files and the cache lives as long as the worker.
_slot_names: dict[tuple, str] = {}
_SLOT_NAMES_CACHED = 10_000


def _slot_name(act, slot, where) -> str:
    if type(act) is not str or type(slot) is not str:
        raise FormatError(f"{where}: act and slot names must be strings, not {act!r} and {slot!r}")
    name = _slot_names.get((act, slot))
    if name is None:
        name = f"{act.split('-', 1)[0].lower()}-{slot.lower()}"
        if len(_slot_names) < _SLOT_NAMES_CACHED:
            _slot_names[(act, slot)] = name
    return name


def _slot_values(text: str, span_info: list, dialog_act: dict, dialog_where: str, index: int) -> list:
    """The slot values mentioned in a user turn, each the exact substring of `text` (whole words).

    span_info's word indices say where a value is, so the text there is stored as written ("one"
    for the value "1", "9:15" for "09:15", "moderately" for "moderate"); dialog_act adds only the
    (act, slot, value) mentions span_info does not have, found in the text as whole words.
    """
    where = _Place(dialog_where, index)
    spans, acts = _mentions(span_info, dialog_act, where)
    if not spans and not acts:
        return []
    lowered = text.lower()
    surfaces = _span_surfaces(text, spans)
    found: list[dict] = []
    seen: set[tuple[str, str]] = set()
    covered: set[tuple] = set()
    for span, surface in zip(spans, surfaces, strict=True):
        value = _value_text(span[2], where)
        if value.strip().lower() in NON_VALUES:
            continue
        if surface is None:  # no usable indices: look the value up as whole words
            surface = locate(text, lowered, value)
        # span_info has this mention, so dialog_act's copy of it is not looked for again.
        covered.add((span[0], span[1], value.strip().lower()))
        if surface is not None:
            _add(found, seen, _slot_name(span[0], span[1], where), surface)
    for act, slot, raw in acts:
        value = _value_text(raw, where)
        if (act, slot, value.strip().lower()) in covered:
            continue
        surface = locate(text, lowered, value)
        if surface is not None:
            _add(found, seen, _slot_name(act, slot, where), surface)
    return found


def _mentions(span_info: list, dialog_act: dict, where) -> tuple[list, list]:
    """(span_info's entries, dialog_act's (act, slot, value) triples), checked for shape."""
    spans, acts = [], []
    for span in span_info:
        if type(span) is not list or len(span) < 3:
            raise FormatError(f'{where}: a "span_info" entry must be [act, slot, value, start, end], not {span!r}')
        spans.append(span)
    for act, pairs in dialog_act.items():
        if type(pairs) is not list:
            raise FormatError(f'{where}: "dialog_act" of {act!r} must be a list of [slot, value] pairs')
        for pair in pairs:
            if type(pair) is not list or len(pair) != 2:
                raise FormatError(f'{where}: "dialog_act" of {act!r} must hold [slot, value] pairs, not {pair!r}')
            acts.append((act, pair[0], pair[1]))
    return spans, acts


def _span_surfaces(text: str, spans: list) -> list:
    """Per span, the text its word indices cover (None without usable indices), counting words in
    the way (base.word_spans) under which most of the turn's spans spell their own values."""
    indexed = [
        (i, span) for i, span in enumerate(spans)
        if len(span) >= 5 and _is_index(span[3]) and _is_index(span[4]) and type(span[2]) in (str, int, float)
    ]
    best: list[str | None] = [None] * len(spans)
    best_agreeing = -1
    if not indexed:
        return best
    for words in word_spans(text):
        surfaces: list[str | None] = [None] * len(spans)
        agreeing = 0
        for i, span in indexed:
            surfaces[i], agrees = span_surface(text, words, span[3], span[4], str(span[2]))
            agreeing += agrees
        if agreeing > best_agreeing:  # ties keep the likelier count (by spaces)
            best, best_agreeing = surfaces, agreeing
        if best_agreeing == len(indexed):
            break  # every span spells its value under this count: the other cannot do better
    return best


def _value_text(value, where) -> str:
    if type(value) is str:
        return value
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise FormatError(f"{where}: slot value {value!r} must be a string")
    return str(value)


def _is_index(value) -> bool:
    return type(value) is int and value >= 0


def _add(found: list, seen: set, slot: str, surface: str) -> None:
    if (slot, surface) not in seen:
        seen.add((slot, surface))
        found.append({"slot": slot, "value": surface})
