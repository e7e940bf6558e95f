"""Shared pieces of the test-set writers. Pure: no Django import.

A writer receives one dialog at a time as plain records (the service has already put each
rewrite in place of its source text) and appends it to files it keeps open, so an export of a
whole corpus never holds more than one dialog in memory.
"""
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path


class ExportError(Exception):
    """The export cannot be written as asked; the message says what to fix, and `field` names the
    option at fault where one is (the API keys the refusal by it; else by "job")."""

    def __init__(self, message: str, field: str = "job"):
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class TurnRecord:
    index: int
    speaker: str  # "user" | "system"
    text: str  # the rewrite where there is one, else the source text
    slot_values: list
    raw: Mapping  # other source fields of the turn, as imported; never mutated
    #: "" for a turn of the source; OOS_TURN for an inserted out-of-scope user turn, OOS_REPLY for
    #: the system's default answer after it. Each writer labels them in its format (docs/formats.md).
    inserted: str = ""
    #: The text `raw`'s positions (MultiWOZ `span_info`) were counted in, where `text` took its place
    #: (a rewrite); None where `text` is that text. A writer whose format has positions moves them.
    source_text: str | None = None
    #: Values as written in `source_text` -> the values that replaced them (unseen entities).
    renamed: Mapping[str, str] = field(default_factory=dict)


OOS_TURN, OOS_REPLY = "oos", "oos_reply"


@dataclass(frozen=True)
class DialogRecord:
    external_id: str
    meta: Mapping  # dialog-level source fields, as imported; never mutated
    turns: Sequence[TurnRecord]


def dumps(value) -> str:
    # ensure_ascii=False keeps non-English text readable; the files are UTF-8.
    return json.dumps(value, ensure_ascii=False)


def without(mapping: Mapping, *keys: str) -> dict:
    """The mapping's other fields, in their original order (kept so the output matches the source)."""
    return {k: v for k, v in mapping.items() if k not in keys}


class _JsonContainerFile:
    opening, closing = "", ""

    def __init__(self, path: Path):
        self._fh = open(path, "x", encoding="utf-8")  # noqa: SIM115 - closed by finish()/close()
        self._fh.write(self.opening)
        self._count = 0

    def _separator(self):
        self._fh.write(",\n" if self._count else "\n")
        self._count += 1

    def finish(self):
        self._fh.write(("\n" if self._count else "") + self.closing + "\n")
        self._fh.close()

    def close(self):
        if not self._fh.closed:
            self._fh.close()


class JsonArrayFile(_JsonContainerFile):
    """A JSON list written one element per line."""

    opening, closing = "[", "]"

    def add(self, value):
        self._separator()
        self._fh.write(dumps(value))


class JsonObjectFile(_JsonContainerFile):
    """A JSON object written one member per line; the caller guarantees unique keys."""

    opening, closing = "{", "}"

    def add(self, key: str, value):
        self._separator()
        self._fh.write(f"{dumps(key)}: {dumps(value)}")


def write_json(path: Path, value):
    with open(path, "x", encoding="utf-8") as fh:
        fh.write(dumps(value))
        fh.write("\n")


class VariantWriter:
    """Writes one variant's test set in one source format, a dialog at a time.

    Subclasses open their files in __init__, append in add(), and return the names of the files
    they wrote (relative to `directory`) from finish(). close() releases files after an error.
    """

    source_format = ""

    def __init__(self, directory: Path, corpus_meta: Mapping):
        self.directory = Path(directory)
        self.directory.mkdir()
        self.corpus_meta = corpus_meta or {}
        self._open: list[_JsonContainerFile] = []

    def _file(self, cls, name):
        handle = cls(self.directory / name)
        self._open.append(handle)
        return handle

    def add(self, dialog: DialogRecord) -> None:
        raise NotImplementedError

    def finish(self) -> list[str]:
        raise NotImplementedError

    def counts(self) -> dict:
        """What the writer counted for the manifest's counts of its set (MultiWOZ: spans moved and left out)."""
        return {}

    def close(self) -> None:
        for handle in self._open:
            handle.close()
