"""DSTC9 Track 1 (knowledge-grounded): `logs.json`, with optional `labels.json` and `knowledge.json`.

- logs.json: a list of instances, each the conversation up to the target user turn, a list of
  `{"speaker": "U" | "S", "text": str}`.
- labels.json: a list aligned with logs.json, `{"target": bool, "knowledge": [...],
  "response": str}` per instance; it must have exactly one entry per instance.
- knowledge.json: `{domain: {entity_id: {"name": ..., "docs": {doc_id: {"title", "body"}}}}}`.

Instances become dialogs whose external id is the instance index ("0", "1", ...). There are no
slot annotations, so slot_values are empty. Kept for export: dialog.meta = {"label": entry} when
labels.json is given, corpus.meta = {"knowledge": ...} when knowledge.json is given, and any
turn key besides speaker and text in turn.raw.
"""
from __future__ import annotations

import json
from collections.abc import Iterator

import ijson

from .base import (
    END,
    JSON_ERRORS,
    SYSTEM,
    TOO_DEEP,
    USER,
    CorpusReader,
    DialogRecord,
    FormatError,
    JsonStreamGuard,
    TurnRecord,
    check_json_value,
    field_problem,
    huge_integer_message,
    invalid_json,
    kind_of,
    numbered,
    open_skipping_bom,
    require_top_level,
    speaker_and_text,
)

SPEAKERS = {"U": USER, "S": SYSTEM}


class DSTC9Reader(CorpusReader):
    label = "DSTC9 Track 1 logs.json"
    optional_roles = ("labels", "knowledge")

    def _open_extra(self):
        self._labels = None
        knowledge_path = self.paths.get("knowledge")
        if knowledge_path is not None:
            self.corpus_meta = {"knowledge": _load_knowledge(knowledge_path)}
        labels_path = self.paths.get("labels")
        if labels_path is not None:
            self._labels = open_skipping_bom(labels_path)  # closed in _close_extra

    def _close_extra(self):
        if self._labels is not None:
            self._labels.close()

    def dialogs(self) -> Iterator[DialogRecord]:
        name = self.data_name
        require_top_level(self._open_data(), name, "[", "a DSTC9 logs.json: a JSON list of instances")
        labels = self._label_stream()
        stream = ijson.items(JsonStreamGuard(self._open_data(), name), "item", use_float=True)
        index = -1
        while True:
            try:
                instance = next(stream, END)
            except JSON_ERRORS as exc:
                raise self._invalid_logs(exc) from None
            if instance is END:
                break
            index += 1
            label = next(labels, END) if labels is not None else None
            if label is END:
                self._count_mismatch(labels=index, instances=index + 1 + self._count_rest(stream))
            yield self._dialog(index, instance, label)
        if labels is not None:
            extra = sum(1 for _ in labels)
            if extra:
                self._count_mismatch(labels=index + 1 + extra, instances=index + 1)

    def _count_rest(self, stream) -> int:
        try:
            return sum(1 for _ in stream)
        except JSON_ERRORS as exc:
            raise self._invalid_logs(exc) from None

    def _invalid_logs(self, exc):
        return invalid_json(self.data_path, exc, lambda index, key: f"instance {index}")

    def _count_mismatch(self, *, labels: int, instances: int):
        raise FormatError(
            f"{self.paths['labels'].name}: has {labels} entries but {self.data_name} has {instances} instances; "
            "labels.json must have exactly one entry per instance"
        )

    def _label_stream(self):
        if self._labels is None:
            return None
        name = self.paths["labels"].name
        require_top_level(self._labels, name, "[", "a DSTC9 labels.json: a JSON list aligned with logs.json")
        return _checked_labels(self._labels, self.paths["labels"])

    def _dialog(self, index: int, instance, label) -> DialogRecord:
        where = f"{self.data_name}: instance {index}"
        external_id = self._claim_id(str(index), where)
        if not isinstance(instance, list):
            raise FormatError(f"{where}: expected a list of turns, not {kind_of(instance)}")
        if not instance:
            raise FormatError(f"{where}: has no turns")
        turns = []
        for turn_index, turn in enumerate(instance):
            here = f"{where}, {numbered('turn', 'instance', turn_index)}"
            if not isinstance(turn, dict):
                raise FormatError(f"{here}: expected an object with speaker and text, not {kind_of(turn)}")
            speaker, text = speaker_and_text(turn, here, SPEAKERS, '"U" or "S"')
            raw = {key: value for key, value in turn.items() if key not in ("speaker", "text")}
            turns.append(TurnRecord(speaker, text, [], raw))
        meta = {"label": label} if label is not None else {}
        return DialogRecord(external_id, meta, turns)


def _checked_labels(f, path):
    """Stream labels.json entries, each checked to be a label object."""
    name = path.name
    stream = ijson.items(JsonStreamGuard(f, name), "item", use_float=True)
    index = -1
    while True:
        try:
            label = next(stream, END)
        except JSON_ERRORS as exc:
            raise invalid_json(path, exc, lambda position, key: f"entry {position}") from None
        if label is END:
            return
        index += 1
        where = f"{name}: entry {index}"
        if not isinstance(label, dict):
            raise FormatError(f'{where}: expected an object with "target", not {kind_of(label)}')
        target = label.get("target")
        if not isinstance(target, bool):
            reason = field_problem("target", target, "true or false")
            raise FormatError(f"{where}: {reason}")
        if "knowledge" in label and not isinstance(label["knowledge"], list):
            raise FormatError(f'{where}: "knowledge" must be a list, not {kind_of(label["knowledge"])}')
        if "response" in label and not isinstance(label["response"], str):
            raise FormatError(f'{where}: "response" must be a string, not {kind_of(label["response"])}')
        yield label


def _load_knowledge(path) -> dict:
    """knowledge.json is small (a few MB) and stored whole in corpus.meta, so it is loaded at once."""
    name = path.name
    try:
        with open(path, encoding="utf-8-sig") as f:
            knowledge = json.load(f)
    except json.JSONDecodeError as exc:
        raise FormatError(f"{name} line {exc.lineno}: not valid JSON ({exc.msg})") from None
    except UnicodeDecodeError:
        raise FormatError(f"{name}: not UTF-8 text") from None
    except RecursionError:
        raise FormatError(f"{name}: {TOO_DEEP}") from None
    except ValueError:  # int() refused a number with too many digits
        raise FormatError(f"{name}: {huge_integer_message()}") from None
    check_json_value(knowledge, name)
    if not isinstance(knowledge, dict):
        raise FormatError(
            f"{name}: expected a DSTC9 knowledge.json: a JSON object from domain to entities, not {kind_of(knowledge)}"
        )
    for domain, entities in knowledge.items():
        if not isinstance(entities, dict):
            raise FormatError(f'{name}: domain "{domain}" must map entity ids to entities, not {kind_of(entities)}')
        for entity_id, entity in entities.items():
            if not isinstance(entity, dict) or not isinstance(entity.get("docs"), dict):
                raise FormatError(f'{name}: domain "{domain}", entity "{entity_id}": expected an object with "docs"')
    return knowledge
