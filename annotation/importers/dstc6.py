"""DSTC6 Track 1 (end-to-end restaurant reservation): a JSON list of dialogs

    {"dialog_id": "...", "utterances": ["...", ...],
     "candidates": [{"candidate_id": "...", "utterance": "..."}, ...]}

Utterances alternate user and system, starting with the user; "<SILENCE>" is a user turn in
which the user said nothing. There are no slot annotations, so slot_values are empty. Kept for
export: dialog.meta holds "candidates" and every other key of the dialog (e.g. the answer of a
training file) except "dialog_id" and "utterances".
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
    JsonStreamGuard,
    TurnRecord,
    field_problem,
    invalid_json,
    kind_of,
    numbered,
    require_top_level,
)


class DSTC6Reader(CorpusReader):
    label = "DSTC6 Track 1 JSON"

    def dialogs(self) -> Iterator[DialogRecord]:
        name = self.data_name
        require_top_level(self._open_data(), name, "[", "a DSTC6 Track 1 file: a JSON list of dialogs")
        stream = ijson.items(JsonStreamGuard(self._open_data(), name), "item", use_float=True)
        index = -1
        while True:
            try:
                dialog = next(stream, END)
            except JSON_ERRORS as exc:
                raise invalid_json(self.data_path, exc, lambda position, key: f"dialog {position}") from None
            if dialog is END:
                return
            index += 1
            yield self._dialog(index, dialog)

    def _dialog(self, index: int, dialog) -> DialogRecord:
        where = f"{self.data_name}: dialog {index}"
        if not isinstance(dialog, dict):
            raise FormatError(f"{where}: expected an object with dialog_id, utterances and candidates, not {kind_of(dialog)}")
        dialog_id = dialog.get("dialog_id")
        if isinstance(dialog_id, int) and not isinstance(dialog_id, bool):
            dialog_id = str(dialog_id)
        if not isinstance(dialog_id, str):
            reason = field_problem("dialog_id", dialog_id, "a string")
            raise FormatError(f"{where}: {reason}")
        where = f'{self.data_name}: dialog "{dialog_id}" (index {index})'
        self._claim_id(dialog_id, where)
        utterances = dialog.get("utterances")
        if not isinstance(utterances, list):
            reason = field_problem("utterances", utterances, "a list")
            raise FormatError(f"{where}: {reason}")
        if not utterances:
            raise FormatError(f'{where}: "utterances" is empty')
        candidates = dialog.get("candidates")
        if not isinstance(candidates, list):
            reason = field_problem("candidates", candidates, "a list")
            raise FormatError(f"{where}: {reason}")
        for position, candidate in enumerate(candidates):
            well_formed = isinstance(candidate, dict) and "candidate_id" in candidate
            if not well_formed or not isinstance(candidate.get("utterance"), str):
                raise FormatError(f'{where}, {numbered("candidate", "candidates", position)}: expected {{"candidate_id": ..., "utterance": "..."}}')
        turns = []
        for turn_index, text in enumerate(utterances):
            if not isinstance(text, str):
                raise FormatError(f"{where}, {numbered('utterance', 'utterances', turn_index)}: must be a string, not {kind_of(text)}")
            turns.append(TurnRecord(USER if turn_index % 2 == 0 else SYSTEM, text, [], {}))
        meta = {key: value for key, value in dialog.items() if key not in ("dialog_id", "utterances")}
        return DialogRecord(dialog_id, meta, turns)
