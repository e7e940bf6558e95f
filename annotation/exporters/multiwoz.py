"""MultiWOZ 2.x `data.json`: {dialog id: {"goal": ..., "log": [{text, metadata, dialog_act, span_info}]}}.

Each log entry is the turn's imported fields (`Turn.raw`) with `text` replaced. `span_info` word
positions refer to the source text and may not match a rewrite; the export README says so.

An inserted out-of-scope user turn is `{"text", "metadata": {}, "dialog_act": {"general-oos":
[["none", "none"]]}, "span_info": [], "oos": true}`; the system's default answer after it keeps the
belief state of the system turn before it (an out-of-scope turn changes no slot), with no acts. So
the log still alternates user and system and imports again.
"""
from .base import OOS_REPLY, OOS_TURN, DialogRecord, JsonObjectFile, VariantWriter, without

OOS_ACT = {"general-oos": [["none", "none"]]}


class MultiwozWriter(VariantWriter):
    source_format = "multiwoz"

    def __init__(self, directory, corpus_meta):
        super().__init__(directory, corpus_meta)
        self._data = self._file(JsonObjectFile, "data.json")

    def add(self, dialog: DialogRecord) -> None:
        log: list[dict] = []
        belief: dict = {}
        for turn in dialog.turns:
            if turn.inserted == OOS_TURN:
                log.append({"text": turn.text, "metadata": {}, "dialog_act": OOS_ACT, "span_info": [], "oos": True})
            elif turn.inserted == OOS_REPLY:
                log.append({"text": turn.text, "metadata": belief, "dialog_act": {}, "span_info": []})
            else:
                log.append({"text": turn.text, **without(turn.raw, "text")})
                if turn.speaker == "system":
                    belief = turn.raw.get("metadata", {})
        self._data.add(
            dialog.external_id,
            {"goal": dialog.meta.get("goal", {}), "log": log, **without(dialog.meta, "goal", "log")},
        )

    def finish(self) -> list[str]:
        self._data.finish()
        return ["data.json"]
