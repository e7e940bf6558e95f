"""Quorum JSONL: one dialog per line, {"dialog_id", "turns": [{speaker, text, slot_values}], "meta"}.

A turn's other imported fields (`Turn.raw`) follow its three standard ones unchanged. An inserted
out-of-scope user turn carries `"oos": true` (which the JSONL importer reads back).
"""
from .base import OOS_TURN, DialogRecord, VariantWriter, dumps, without

ID_KEY = "dialog_id"


class JsonlWriter(VariantWriter):
    source_format = "jsonl"

    def __init__(self, directory, corpus_meta):
        super().__init__(directory, corpus_meta)
        self._fh = open(self.directory / "dialogs.jsonl", "x", encoding="utf-8")  # noqa: SIM115 - see finish/close

    def add(self, dialog: DialogRecord) -> None:
        turns = [
            {
                "speaker": t.speaker,
                "text": t.text,
                "slot_values": t.slot_values,
                **without(t.raw, "speaker", "text", "slot_values"),
                **({"oos": True} if t.inserted == OOS_TURN else {}),
            }
            for t in dialog.turns
        ]
        self._fh.write(dumps({ID_KEY: dialog.external_id, "turns": turns, "meta": dict(dialog.meta)}))
        self._fh.write("\n")

    def finish(self) -> list[str]:
        self._fh.close()
        return ["dialogs.jsonl"]

    def close(self) -> None:
        self._fh.close()
