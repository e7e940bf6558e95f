"""DSTC9 Track 1: `logs.json` (a list of instances, each a list of {speaker: U|S, text}), with
`labels.json` aligned to it and `knowledge.json` copied from the corpus when it had them.

An inserted out-of-scope user turn carries `"oos": true` beside speaker and text (the importer keeps
it in the turn's raw fields). Labels are written for the exported instances only, in the same order as `logs.json`, so the
pair stays aligned as the DSTC9 tools expect.
"""
from .base import OOS_TURN, DialogRecord, ExportError, JsonArrayFile, VariantWriter, without, write_json

SPEAKER_CODES = {"user": "U", "system": "S"}


class Dstc9Writer(VariantWriter):
    source_format = "dstc9"

    def __init__(self, directory, corpus_meta):
        super().__init__(directory, corpus_meta)
        self._logs = self._file(JsonArrayFile, "logs.json")
        self._labels = None
        self._labelled = None  # decided by the first instance: all or none must carry a label

    def add(self, dialog: DialogRecord) -> None:
        self._logs.add(
            [
                {
                    "speaker": SPEAKER_CODES.get(t.speaker, t.speaker),
                    "text": t.text,
                    **without(t.raw, "speaker", "text"),
                    **({"oos": True} if t.inserted == OOS_TURN else {}),
                }
                for t in dialog.turns
            ]
        )
        has_label = dialog.meta.get("label") is not None
        if self._labelled is None:
            self._labelled = has_label
            if has_label:
                self._labels = self._file(JsonArrayFile, "labels.json")
        elif has_label != self._labelled:
            raise ExportError(
                f"Instance {dialog.external_id!r} {'has' if has_label else 'has no'} label while earlier "
                f"instances {'have none' if has_label else 'have one'}; labels.json must cover every instance. "
                "Re-import the corpus with a labels.json aligned with its logs.json."
            )
        if has_label:
            self._labels.add(dialog.meta["label"])

    def finish(self) -> list[str]:
        self._logs.finish()
        files = ["logs.json"]
        if self._labels is not None:
            self._labels.finish()
            files.append("labels.json")
        if self.corpus_meta.get("knowledge") is not None:
            write_json(self.directory / "knowledge.json", self.corpus_meta["knowledge"])
            files.append("knowledge.json")
        return files
