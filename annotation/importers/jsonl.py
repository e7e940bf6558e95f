"""Quorum JSONL: one dialog per line, UTF-8, blank lines ignored.

    {"dialog_id": "d1",
     "turns": [{"speaker": "user", "text": "A cheap Thai place, please.",
                "slot_values": [{"slot": "restaurant-food", "value": "Thai"}]},
               {"speaker": "system", "text": "Lotus Corner is cheap."}],
     "meta": {"anything": "kept for export"}}

- `dialog_id` (string, required, unique in the file, at most 200 characters);
- `turns` (non-empty list, required): `speaker` is "user" or "system", `text` a string, and
  `slot_values` (optional, default []) a list of `{"slot": str, "value": str}` where `value` is
  the surface form exactly as it appears in `text` (case included): rewrites are checked for it
  verbatim, so an import refuses a value that is not in its turn's text;
- `meta` (object, optional): kept on the dialog and written back on export.

Other keys are refused, so that a misspelt key ("slot_value") is not silently dropped.
The same description, with examples, is in docs/formats.md.
"""
from __future__ import annotations

import json
from collections.abc import Iterator

from .base import (
    SYSTEM,
    TOO_DEEP,
    USER,
    CorpusReader,
    DialogRecord,
    FormatError,
    TurnRecord,
    check_json_value,
    field_problem,
    huge_integer_message,
    kind_of,
    numbered,
    speaker_and_text,
)

DIALOG_KEYS = frozenset({"dialog_id", "turns", "meta"})
TURN_KEYS = frozenset({"speaker", "text", "slot_values", "oos"})
SLOT_KEYS = frozenset({"slot", "value"})
SPEAKERS = {USER: USER, SYSTEM: SYSTEM}  # already Quorum's own speaker names


class JSONLReader(CorpusReader):
    label = "Quorum JSONL"

    def dialogs(self) -> Iterator[DialogRecord]:
        name = self.data_name
        for number, line in enumerate(self._open_data(), start=1):
            where = f"{name} line {number}"
            if not line.strip():
                continue
            try:
                dialog = json.loads(line)
            except UnicodeDecodeError:
                raise FormatError(f"{where}: not UTF-8 text") from None
            except json.JSONDecodeError as exc:
                hint = "; Quorum JSONL has one whole dialog per line" if number == 1 and line.strip() in (b"[", b"{") else ""
                raise FormatError(f"{where}: not valid JSON ({exc.msg}){hint}") from None
            except RecursionError:
                raise FormatError(f"{where}: {TOO_DEEP}") from None
            except ValueError:  # int() refused a number with too many digits
                raise FormatError(f"{where}: {huge_integer_message()}") from None
            check_json_value(dialog, where)
            yield self._dialog(dialog, where)

    def _dialog(self, dialog, where: str) -> DialogRecord:
        if not isinstance(dialog, dict):
            raise FormatError(
                f"{where}: expected a dialog object, not {kind_of(dialog)}; Quorum JSONL has one dialog object per line"
            )
        _refuse_unknown(dialog, DIALOG_KEYS, where)
        dialog_id = dialog.get("dialog_id")
        if not isinstance(dialog_id, str):
            reason = field_problem("dialog_id", dialog_id, "a string")
            raise FormatError(f"{where}: {reason}")
        self._claim_id(dialog_id, where)
        meta = dialog.get("meta", {})
        if not isinstance(meta, dict):
            raise FormatError(f'{where}: "meta" must be an object, not {kind_of(meta)}')
        turns = dialog.get("turns")
        if not isinstance(turns, list):
            reason = field_problem("turns", turns, "a list")
            raise FormatError(f"{where}: {reason}")
        if not turns:
            raise FormatError(f'{where}: "turns" is empty')
        records = [_turn(turn, f"{where}, {numbered('turn', 'turns', index)}") for index, turn in enumerate(turns)]
        return DialogRecord(dialog_id, meta, records)


def _turn(turn, where: str) -> TurnRecord:
    if not isinstance(turn, dict):
        raise FormatError(f"{where}: expected an object with speaker and text, not {kind_of(turn)}")
    _refuse_unknown(turn, TURN_KEYS, where)
    speaker, text = speaker_and_text(turn, where, SPEAKERS, '"user" or "system"')
    slot_values = turn.get("slot_values", [])
    if not isinstance(slot_values, list):
        raise FormatError(f'{where}: "slot_values" must be a list, not {kind_of(slot_values)}')
    kept = []
    seen = set()
    for entry in slot_values:
        if not isinstance(entry, dict):
            raise FormatError(f'{where}: a slot value must be {{"slot": ..., "value": ...}}, not {kind_of(entry)}')
        _refuse_unknown(entry, SLOT_KEYS, f"{where}, slot value")
        slot, value = entry.get("slot"), entry.get("value")
        if not isinstance(slot, str) or not slot:
            raise FormatError(f'{where}: a slot value needs "slot", a non-empty string')
        if not isinstance(value, str) or not value:
            raise FormatError(f'{where}: slot "{slot}" needs "value", a non-empty string')
        if value not in text:
            raise FormatError(
                f'{where}: the value "{value}" of slot "{slot}" does not occur in the text '
                "(values must be written exactly as in the text, case included)"
            )
        if (slot, value) not in seen:
            seen.add((slot, value))
            kept.append({"slot": slot, "value": value})
    oos = turn.get("oos", False)
    if not isinstance(oos, bool):
        raise FormatError(f'{where}: "oos" must be true or false, not {kind_of(oos)}')
    # An out-of-scope label (written by out-of-scope insertion jobs) is kept for export.
    return TurnRecord(speaker, text, kept, {"oos": True} if oos else {})


def _refuse_unknown(obj: dict, allowed: frozenset, where: str):
    unknown = obj.keys() - allowed
    if unknown:
        names = ", ".join(f'"{key}"' for key in sorted(unknown))
        known = ", ".join(f'"{key}"' for key in sorted(allowed))
        raise FormatError(f"{where}: unknown key {names} (allowed: {known})")
