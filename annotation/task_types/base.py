"""The core every task type implements (DESIGN.md, "Task types"); what only some types do is a
capability (`capabilities.py`), declared by inheriting it.

The core says what every kind of work has, so that services, views, selectors and exports ask the
type instead of switching on its key:

- who it is (`key`, `label`, `template`) and its settings (`settings_help`, `clean_settings`);
- how an item's payload is built (`build_payload`), its form (`answer_fields`), the validation of
  a response (`validate`, the same code for the web form and the API) and the page (`page_context`);
- how the responses of one item combine (`combine`), and what agreement is measured on
  (`agreement_level`, `agreement_values`), so every job gets Krippendorff's alpha where it means
  something;
- what a reviewer sees (`review_view`, `subject_of`) and what is free text for near-duplicate
  flags (`texts_of`).

Task types import no services and no views: whatever a response sets off (gold grading, voting)
is done by `annotation.services.responses` from what the type declares.
"""
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..text.problems import Problem  # noqa: F401  (re-exported: one Problem type for every task type)

LEVELS = ("nominal", "ordinal", "interval", "ratio")


class TaskTypeSettingsError(ValueError):
    """A job's settings do not fit its task type; `errors` maps setting name to message."""

    def __init__(self, errors: Mapping[str, str]):
        self.errors = dict(errors)
        super().__init__("; ".join(f"{k}: {v}" for k, v in self.errors.items()))


class PayloadError(ValueError):
    """A payload the task type cannot show; the message says what is wrong."""


@dataclass(frozen=True)
class Upload:
    """A file a response carries, as `validate` accepted it.

    The upload part of the contract: an answer field with an "upload" key (its media type, e.g.
    "audio/wav") is a file field; the page posts it as multipart and the API takes it the same way.
    `validate` receives the file's bytes (or an open file; read it with `upload_bytes`) and, when the
    file is good, returns an Upload in its place. The response stores `meta` (JSON) under the field's
    name, and `content` goes to the store the type names in `TakesUploads.upload_store` (`services.uploads`), in
    the response's transaction. A file the type refuses is a Problem like any other: nothing is stored.
    """

    content: bytes
    media_type: str
    meta: dict = field(default_factory=dict)


#: An upload larger than this is refused before its type reads it (views read at most this + 1 bytes).
MAX_UPLOAD_BYTES = 16 * 1024 * 1024


def upload_bytes(value) -> bytes | None:
    """The bytes of a posted file: `value` as bytes, or read from a file object; None when absent."""
    if isinstance(value, (bytes, bytearray)):
        return bytes(value) or None
    read = getattr(value, "read", None)
    if callable(read):
        if hasattr(value, "seek"):
            value.seek(0)
        return read() or None
    return None


class TaskType:
    """The core of a task type: 15 members (see docs/annotation.md, "The task-type contract")."""

    key: str = ""
    label: str = ""
    template: str = ""
    #: Setting name -> (default, help text). The help text is shown wherever the setting is.
    settings_help: Mapping[str, tuple[Any, str]] = {}
    #: Krippendorff level of measurement of `agreement_values`.
    agreement_level: str = "nominal"

    def clean_settings(self, settings: Mapping | None) -> dict:
        """Fill defaults and validate; raise TaskTypeSettingsError with a message per bad setting."""
        settings = dict(settings or {})
        unknown = sorted(set(settings) - set(self.settings_help))
        if unknown:
            raise TaskTypeSettingsError({name: "unknown setting for this task type" for name in unknown})
        return {**default_settings(self), **settings}

    def build_payload(self, source: Any) -> dict:
        """What an annotator needs to see for one item: from a turn (`FromCorpusTurns`), or the
        caller's payload checked and normalised (`FromPayloads`; `source.payload`, PayloadError
        says what is wrong)."""
        raise NotImplementedError

    def answer_fields(self, settings: Mapping) -> list[dict]:
        """The fields of the response form: [{"name", "label", "help", optional "choices" or "upload"}].
        A field with choices is a choice; with "upload" (a media type) a file (see `Upload`); with
        neither, free text."""
        raise NotImplementedError

    def validate(self, payload: Mapping, settings: Mapping, answers: Mapping) -> tuple[dict, list[Problem]]:
        """Clean a response; return (cleaned answers, problems). No problems means it is stored."""
        raise NotImplementedError

    def page_context(self, item: Any, slot: Any, settings: Mapping) -> dict:
        """Extra template context for the work page of one claimed slot (e.g. a per-worker order of
        what is shown). Must not query more than it needs: it runs on every page view."""
        return {}

    def combine(self, answer_rows: list[Mapping], settings: Mapping) -> dict:
        """What the counted responses of one item say together, as {column: value}, for the
        combined-items export and reviewers. Default: per choice field, the most chosen answer and
        its share; free text is not combined."""
        out: dict[str, Any] = {}
        choice_fields = [f["name"] for f in self.answer_fields(settings) if f.get("choices")]
        for name in choice_fields:
            values = [row[name] for row in answer_rows if row.get(name) not in (None, "")]
            if values:
                top = max(sorted(set(values), key=str), key=values.count)
                out[name] = top
                out[f"{name}_share"] = round(values.count(top) / len(values), 4)
        out["responses"] = len(answer_rows)
        return out

    def agreement_values(self, answers: Mapping, settings: Mapping) -> dict:
        """The values agreement is measured on, {question: value}, at `agreement_level`: one
        Krippendorff table per question, units = items, coders = workers. Default: the choice fields.
        Free text has no agreement here (an empty dict)."""
        return {
            f["name"]: answers[f["name"]]
            for f in self.answer_fields(settings)
            if f.get("choices") and answers.get(f["name"]) not in (None, "")
        }

    def texts_of(self, answers: Mapping, settings: Mapping) -> dict:
        """The free text of a response field by field, {field: text}, for near-duplicate flags,
        which compare one field (a variant) with the same field of other workers' responses: the
        fields without choices. A choice is not text: two workers who agree are not copying each
        other. A type whose answers are no text of the worker's own returns {}."""
        return {
            f["name"]: answers[f["name"]]
            for f in self.answer_fields(settings)
            if not f.get("choices") and not f.get("upload") and isinstance(answers.get(f["name"]), str) and answers[f["name"]]
        }

    def review_view(self, payload: Mapping, answers: Mapping, settings: Mapping) -> dict:
        """What a reviewer or voter sees of one response: {"subject", "slot_values", "shown":
        [{"name", "label", "text"}]}. `subject` is what the work was about (the source utterance,
        the rated response), `shown` every answer under its label, choices by their label."""
        shown = []
        for f in self.answer_fields(settings):
            value = answers.get(f["name"])
            if value in (None, ""):
                continue
            choices = f.get("choices")
            text = choices.get(value, value) if isinstance(choices, Mapping) else value
            shown.append({"name": f["name"], "label": f["label"], "text": str(text)})
        return {"subject": self.subject_of(payload), "slot_values": list(payload.get("slot_values", [])), "shown": shown}

    def subject_of(self, payload: Mapping) -> str:
        """The text the work was about, in one line, for lists and review pages."""
        return str(payload.get("utterance") or payload.get("response") or "")


def default_settings(kind: TaskType) -> dict:
    """Every setting of `kind` at its default."""
    return {name: default for name, (default, _help) in kind.settings_help.items()}


def free_text_fields(kind: TaskType, settings: Mapping) -> list[str]:
    """The names of the answer fields a worker writes in: those with neither `choices` nor an
    `upload` (the ones the work page records the typing process of: `annotation/text/typing_log.py`)."""
    return [f["name"] for f in kind.answer_fields(settings) if not f.get("choices") and not f.get("upload")]


#: The typing-process record of the messages a worker types to a system (`RelaysChat` types): the
#: chat box is not an answer field, its words are the transcript's.
CHAT_MESSAGES = "chat_messages"


def text_of(kind: TaskType, answers: Mapping, settings: Mapping) -> str:
    """The free text of a response in one string (`texts_of`, field after field)."""
    return "\n".join(kind.texts_of(answers, settings).values())


def check_number(cleaned: dict, errors: dict, name: str, low, high, *, whole: bool = False) -> None:
    """Note in `errors` why setting `name` of `cleaned` is not a number from `low` to `high` (a
    whole number if `whole`; True and False are not numbers), for a type's `clean_settings`."""
    value = cleaned[name]
    kinds = (int,) if whole else (int, float)
    if isinstance(value, bool) or not isinstance(value, kinds) or not low <= value <= high:
        errors[name] = f"a {'whole ' if whole else ''}number from {low} to {high}"


def clean_text(value, name: str, label: str, limit: int) -> tuple[str | None, list[Problem]]:
    """A free-text answer (`value`, of field `name`), stripped, and what is wrong with it: not text
    (then None), or longer than `limit` characters. One rule for every task type's text fields."""
    if not isinstance(value, str):
        return None, [Problem(name, "type", f"{label}: must be text.")]
    value = value.strip()
    if len(value) > limit:
        return value, [Problem(name, "too_long", f"{label}: at most {limit} characters.")]
    return value, []
