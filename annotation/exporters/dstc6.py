"""DSTC6 Track 1: a JSON list of {"dialog_id", "utterances": [...], "candidates": [...]}.

Utterances alternate user and system; the dialog's other imported fields (`candidates` and any
others) follow `utterances` unchanged. Utterances are plain strings, so inserted out-of-scope user
turns are listed by their index in `utterances` under the dialog's `oos_turns`.
"""
from .base import OOS_TURN, DialogRecord, JsonArrayFile, VariantWriter, without


class Dstc6Writer(VariantWriter):
    source_format = "dstc6"

    def __init__(self, directory, corpus_meta):
        super().__init__(directory, corpus_meta)
        self._dialogs = self._file(JsonArrayFile, "dialogs.json")

    def add(self, dialog: DialogRecord) -> None:
        self._dialogs.add(
            {
                "dialog_id": dialog.external_id,
                "utterances": [t.text for t in dialog.turns],
                **without(dialog.meta, "dialog_id", "utterances"),
                # Only where turns were inserted: a re-imported set keeps its own labels.
                **({"oos_turns": oos} if (oos := [i for i, t in enumerate(dialog.turns) if t.inserted == OOS_TURN]) else {}),
            }
        )

    def finish(self) -> list[str]:
        self._dialogs.finish()
        return ["dialogs.json"]
