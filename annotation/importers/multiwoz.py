"""MultiWOZ 2.x `data.json`: a JSON object from dialog id to `{"goal": ..., "log": [turn, ...]}`.

Log entries alternate user (even index) and system (odd index). Every entry has `text` and
`metadata` (`{}` on user turns, the belief state on system turns) and, from MultiWOZ 2.1 on,
`dialog_act` (`{"Domain-Act": [[slot, value], ...]}`) and `span_info`
(`[[act, slot, value, start, end], ...]`).

Slot values of a user turn come from span_info, then dialog_act; each value is looked up in the
text case-insensitively and stored in the form found there ("thai" -> "Thai"), so a rewrite can
be checked for it verbatim. Values that are not in the text, and "none"/"?"/"dontcare"-like
values, are left out. Slot names are "<domain>-<slot>" in lower case ("restaurant-food").

Kept for export: dialog.meta holds every dialog key but `log` (the goal), turn.raw every turn
key but `text` (metadata, dialog_act, span_info).
"""
from __future__ import annotations

from collections.abc import Iterator

import ijson

from .base import (
    END,
    JSON_ERRORS,
    SYSTEM,
    USER,
    CorpusReader,
    DialogRecord,
    FormatError,
    TurnRecord,
    field_problem,
    invalid_json,
    kind_of,
    locate,
    require_top_level,
)


class MultiWOZReader(CorpusReader):
    label = "MultiWOZ data.json"

    def dialogs(self) -> Iterator[DialogRecord]:
        name = self.data_name
        require_top_level(
            self._data, name, "{", "a MultiWOZ data.json: a JSON object from dialog id to {goal, log}"
        )
        stream = ijson.kvitems(self._data, "", use_float=True)
        while True:
            try:
                item = next(stream, END)
            except JSON_ERRORS as exc:
                raise invalid_json(self.data_path, exc, lambda index, key: f'dialog "{key}"') from None
            if item is END:
                return
            dialog_id, dialog = item
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
        if not isinstance(entry, dict):
            raise FormatError(f"{where}, turn {index}: expected an object with text and metadata, not {kind_of(entry)}")
        text = entry.get("text")
        if not isinstance(text, str):
            reason = field_problem("text", text, "a string")
            raise FormatError(f"{where}, turn {index}: {reason}")
        metadata = entry.get("metadata")
        if not isinstance(metadata, dict):
            reason = field_problem("metadata", metadata, "an object")
            raise FormatError(f"{where}, turn {index}: {reason}")
        is_user = index % 2 == 0
        if is_user and metadata:
            # A belief state on an even turn means the log lost its user/system alternation.
            raise FormatError(
                f"{where}, turn {index}: even turns are user turns, but this one carries a belief state "
                "(metadata); the log does not alternate user and system"
            )
        span_info = entry.get("span_info", [])
        if not isinstance(span_info, list):
            raise FormatError(f'{where}, turn {index}: "span_info" must be a list, not {kind_of(span_info)}')
        dialog_act = entry.get("dialog_act", {})
        if isinstance(dialog_act, str):  # MultiWOZ writes "No Annotation" for unannotated turns
            dialog_act = {}
        elif not isinstance(dialog_act, dict):
            raise FormatError(f'{where}, turn {index}: "dialog_act" must be an object, not {kind_of(dialog_act)}')
        slot_values = _slot_values(text, span_info, dialog_act, where, index) if is_user else []
        raw = dict(entry)  # every key but text: metadata, dialog_act, span_info (a C-level copy)
        del raw["text"]
        return TurnRecord(USER if is_user else SYSTEM, text, slot_values, raw)


class _Place:
    """Where a turn is ('data.json: dialog "X", turn 3'), formatted only if a message needs it."""

    __slots__ = ("dialog", "index")

    def __init__(self, dialog: str, index: int):
        self.dialog, self.index = dialog, index

    def __str__(self):
        return f"{self.dialog}, turn {self.index}"


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
    """The slot values mentioned in a user turn, in their surface form; span_info first."""
    where = _Place(dialog_where, index)
    mentions = []
    for span in span_info:
        if type(span) is not list or len(span) < 3:
            raise FormatError(f'{where}: a "span_info" entry must be [act, slot, value, start, end], not {span!r}')
        mentions.append(span)
    for act, pairs in dialog_act.items():
        if type(pairs) is not list:
            raise FormatError(f'{where}: "dialog_act" of {act!r} must be a list of [slot, value] pairs')
        for pair in pairs:
            if type(pair) is not list or len(pair) != 2:
                raise FormatError(f'{where}: "dialog_act" of {act!r} must hold [slot, value] pairs, not {pair!r}')
            mentions.append((act, pair[0], pair[1]))
    if not mentions:
        return []
    lowered = text.lower()
    found = []
    seen = set()
    for mention in mentions:
        value = mention[2]
        if type(value) is not str:
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                raise FormatError(f"{where}: slot value {value!r} must be a string")
            value = str(value)
        surface = locate(text, lowered, value)
        if surface is None:
            continue
        key = (_slot_name(mention[0], mention[1], where), surface)
        if key not in seen:
            seen.add(key)
            found.append({"slot": key[0], "value": surface})
    return found
