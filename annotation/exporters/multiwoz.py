"""MultiWOZ 2.x `data.json`: {dialog id: {"goal": ..., "log": [{text, metadata, dialog_act, span_info}]}}.

Each log entry is the turn's imported fields (`Turn.raw`) with `text` replaced. `span_info` word
positions refer to the source text and may not match a rewrite; the export README says so.
"""
from .base import DialogRecord, JsonObjectFile, VariantWriter, without


class MultiwozWriter(VariantWriter):
    source_format = "multiwoz"

    def __init__(self, directory, corpus_meta):
        super().__init__(directory, corpus_meta)
        self._data = self._file(JsonObjectFile, "data.json")

    def add(self, dialog: DialogRecord) -> None:
        log = [{"text": turn.text, **without(turn.raw, "text")} for turn in dialog.turns]
        self._data.add(
            dialog.external_id,
            {"goal": dialog.meta.get("goal", {}), "log": log, **without(dialog.meta, "goal", "log")},
        )

    def finish(self) -> list[str]:
        self._data.finish()
        return ["data.json"]
