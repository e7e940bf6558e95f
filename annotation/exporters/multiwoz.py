"""MultiWOZ 2.x `data.json`: {dialog id: {"goal": ..., "log": [{text, metadata, dialog_act, span_info}]}}.

Each log entry is the turn's imported fields (`Turn.raw`) with `text` replaced. Where the text is
not the one `span_info` was counted in (a rewrite), each span is moved to its value's place in the
new text, in the corpus's unit, or left out where the value is not there (`spans.move_spans`);
`counts()` gives the manifest how many were moved and left out. `dialog_act` has no positions.

An inserted out-of-scope user turn is `{"text", "metadata": {}, "dialog_act": {"general-oos":
[["none", "none"]]}, "span_info": [], "oos": true}`; the system's default answer after it keeps the
belief state of the system turn before it (an out-of-scope turn changes no slot), with no acts. So
the log still alternates user and system and imports again.
"""
from .base import OOS_REPLY, OOS_TURN, DialogRecord, JsonObjectFile, TurnRecord, VariantWriter, without
from .spans import move_spans

OOS_ACT = {"general-oos": [["none", "none"]]}


class MultiwozWriter(VariantWriter):
    source_format = "multiwoz"

    def __init__(self, directory, corpus_meta):
        super().__init__(directory, corpus_meta)
        self._data = self._file(JsonObjectFile, "data.json")
        self._moved = self._dropped = 0

    def add(self, dialog: DialogRecord) -> None:
        log: list[dict] = []
        belief: dict = {}
        for turn in dialog.turns:
            if turn.inserted == OOS_TURN:
                log.append({"text": turn.text, "metadata": {}, "dialog_act": OOS_ACT, "span_info": [], "oos": True})
            elif turn.inserted == OOS_REPLY:
                log.append({"text": turn.text, "metadata": belief, "dialog_act": {}, "span_info": []})
            else:
                log.append({"text": turn.text, **without(turn.raw, "text"), **self._spans(turn)})
                if turn.speaker == "system":
                    belief = turn.raw.get("metadata", {})
        self._data.add(
            dialog.external_id,
            {"goal": dialog.meta.get("goal", {}), "log": log, **without(dialog.meta, "goal", "log")},
        )

    def _spans(self, turn: TurnRecord) -> dict:
        """span_info true of the turn's text, where it replaced the one the spans were counted in."""
        span_info = turn.raw.get("span_info")
        if turn.source_text is None or not isinstance(span_info, list) or not span_info:
            return {}
        if turn.source_text == turn.text and not turn.renamed:
            return {}
        moved = move_spans(span_info, turn.source_text, turn.text, turn.renamed)
        self._moved += len(span_info) - moved.dropped
        self._dropped += moved.dropped
        return {"span_info": moved.spans}

    def counts(self) -> dict:
        return {"span_info_moved": self._moved, "span_info_dropped": self._dropped}

    def finish(self) -> list[str]:
        self._data.finish()
        return ["data.json"]
