"""The contract every task type implements, and the registry (DESIGN.md, "Task types").

A task type says everything about one kind of work, so that services, views, selectors and exports
ask it instead of switching on its key:

- where its items come from (`builds_from`: corpus turns, payloads given by the caller, or the
  responses of another job) and how an item's payload is built (`build_payload`);
- its settings (`settings_help`, `clean_settings`), its form (`answer_fields`) and the validation
  of a response (`validate`, the same code for the web form and the API);
- what a gold answer is graded by (`grade_gold`), whether its responses are voted on
  (`supports_voting`), and whether they feed evaluation (`feeds_evaluation`);
- how the responses of one item combine (`combine`), and what agreement is measured on
  (`agreement_level`, `agreement_values`), so every job gets Krippendorff's alpha where it means
  something;
- what a reviewer sees (`review_view`), what is free text for near-duplicate flags (`text_of`);
- the files a response carries (`upload_store`, and fields with an "upload" media type): see
  `Upload` below;
- what it exports (`exports_test_sets`: the rewrite test sets; every type exports its responses
  and its combined items), and what it feeds to evaluation (`feeds_evaluation` for ratings,
  `comparison` for pairwise judgements).

Task types import no services and no views: whatever a response sets off (gold grading, voting)
is done by `annotation.services.responses` from what the type declares.
"""
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..rewrite_checks import Problem  # noqa: F401  (re-exported: one Problem type for every task type)

_registry: dict[str, "TaskType"] = {}

CORPUS, PAYLOADS, RESPONSES = "corpus", "payloads", "responses"
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
    name, and `content` goes to the store the type names in `upload_store` (`services.uploads`), in
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
    key: str = ""
    label: str = ""
    template: str = ""
    #: Where items come from: CORPUS (one item per source turn), PAYLOADS (one per payload the caller
    #: gives, e.g. an evaluation campaign) or RESPONSES (one per response of another job: votes).
    builds_from: str = CORPUS
    #: Only turns of this speaker become items ("user" for rewrites); None: every turn. Applied in
    #: the database query, so a job over a large corpus does not read the turns it would drop.
    source_speaker: str | None = None
    #: Krippendorff level of measurement of `agreement_values`.
    agreement_level: str = "nominal"
    #: Setting name -> (default, help text). The help text is shown wherever the setting is.
    settings_help: Mapping[str, tuple[Any, str]] = {}
    #: Whether this type's responses are put to a vote (CGoDial voting) when the job votes.
    supports_voting: bool = False
    #: The question voters answer about this type's responses; empty: the vote type's default (rewrites).
    vote_question: str = ""
    #: Whether a counted response becomes evaluation ratings (the evaluation app follows the
    #: response's life for these types only).
    feeds_evaluation: bool = False
    #: Whether the job exports test sets in the corpus's own format (rewrites replace user turns).
    exports_test_sets: bool = False
    #: Whether the page relays a conversation (`/work/<token>/chat/`, annotation.chat_relay).
    relays_chat: bool = False
    #: Whether the review queue shows each free-text answer as a word diff against the subject:
    #: true where an answer rewrites the subject (rewrites), so the reviewer sees what changed.
    diffs_against_subject: bool = False
    #: Where the files of this type's responses are stored (a key of `services.uploads.KEEPERS`);
    #: empty: the type takes no files. Needed by any type with an "upload" field (see `Upload`).
    upload_store: str = ""

    # --- Settings ---------------------------------------------------------------------------------

    def default_settings(self) -> dict:
        return {name: default for name, (default, _help) in self.settings_help.items()}

    def clean_settings(self, settings: Mapping | None) -> dict:
        """Fill defaults and validate; raise TaskTypeSettingsError with a message per bad setting."""
        settings = dict(settings or {})
        unknown = sorted(set(settings) - set(self.settings_help))
        if unknown:
            raise TaskTypeSettingsError({name: "unknown setting for this task type" for name in unknown})
        return {**self.default_settings(), **settings}

    def settings_for_corpus(self, settings: Mapping, corpus_meta: Mapping) -> dict:
        """Cleaned settings completed from the job's corpus (its `Corpus.meta`), for a job built
        from corpus turns: e.g. the out-of-scope type takes the knowledge QA pairs of a DSTC9
        corpus when none are given. Default: unchanged."""
        return dict(settings)

    #: Settings whose value an organizer gives as a file (the job page's upload, a command's
    #: option): setting name -> what the file is. `read_setting_file` turns its text into the value.
    setting_files: Mapping[str, str] = {}

    def read_setting_file(self, setting: str, text: str, name: str):
        """The value of a `setting_files` setting from the file's text (`name`: the file's name, for
        messages); TaskTypeSettingsError names the setting and the line."""
        raise TaskTypeSettingsError({setting: "this setting is not read from a file"})

    # --- Items ------------------------------------------------------------------------------------

    def source_turns(self, turns: Iterable, settings: Mapping) -> Iterable:
        """The source turns that become items, from turns already limited to `source_speaker`, in
        corpus order (rows with id, dialog_id, index, speaker, text, slot_values), under the job's
        cleaned `settings`. A type may return its own rows (with at least `id`, the item's turn)
        for `build_payload`: the out-of-scope type picks insertion points per dialog."""
        return list(turns)

    #: For a PAYLOADS type an organizer may give a file of: what the file is (shown on the job page
    #: and in the command's help); empty: its payloads come from elsewhere (a campaign).
    payload_file: str = ""

    def read_payloads(self, text: str, name: str) -> list:
        """The payloads of a `payload_file` (`name`: the file's name, for messages): by default one
        JSON object a line, blank lines skipped. PayloadError names the line."""
        payloads = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                payload = json.loads(line)
            except json.JSONDecodeError as exc:
                raise PayloadError(f"{name} line {number}: not valid JSON ({exc.msg})") from None
            if not isinstance(payload, dict):
                raise PayloadError(f"{name} line {number}: expected a JSON object")
            payloads.append(payload)
        if not payloads:
            raise PayloadError(f"{name}: no payloads; write one JSON object a line")
        return payloads

    def payloads_from_corpus(self, corpus_meta: Mapping) -> list:
        """Payloads a PAYLOADS type can take from a corpus's own data (`Corpus.meta`, e.g. the FAQ
        documents of a DSTC9 knowledge base); empty: none."""
        return []

    def build_payload(self, source) -> dict:
        """What an annotator needs to see for one item: from a turn (CORPUS), or the caller's payload
        checked and normalised (PAYLOADS; `source.payload`, PayloadError says what is wrong)."""
        raise NotImplementedError

    # --- Test sets ---------------------------------------------------------------------------------

    def test_set_names(self, settings: Mapping) -> list[str]:
        """The test sets a job of this type exports in its corpus's format (when `exports_test_sets`):
        one directory each (rewrites: one per variant)."""
        return []

    def test_set_turns(self, turn, payload: Mapping, accepted_responses: list, settings: Mapping) -> dict:
        """What one source turn with an item becomes in each test set: {set name: [TurnRecord, ...]}
        (`annotation.exporters.TurnRecord`); a set left out keeps the source turn. `accepted_responses`
        are the item's counted responses (.answers, .submitted_at, .id), earliest first."""
        return {}

    def manifest_of(self, payload: Mapping) -> dict:
        """What an item's payload records for the export manifest (e.g. the entity mapping of an
        unseen-entities rewrite); empty: nothing."""
        return {}

    def manifest_extra(self, settings: Mapping) -> dict:
        """Job-level entries of a test-set export's manifest (e.g. the out-of-scope default answer)."""
        return {}

    def answer_files(self, items: Iterable, settings: Mapping) -> dict:
        """Extra files of the export of a job without test sets, {file name: [JSON records]} written
        one record a line, from `items`: (payload, [(worker, answers), ...] of the counted responses,
        earliest first) in item order. Default: none."""
        return {}

    # --- Responses --------------------------------------------------------------------------------

    def answer_fields(self, settings: Mapping) -> list[dict]:
        """The fields of the response form: [{"name", "label", "help", optional "choices" or "upload"}].
        A field with choices is a choice; with "upload" (a media type) a file (see `Upload`); with
        neither, free text."""
        raise NotImplementedError

    def upload_fields(self, settings: Mapping) -> list[dict]:
        """The answer fields that are files (an "upload" media type), posted as multipart."""
        return [f for f in self.answer_fields(settings) if f.get("upload")]

    def validate(self, payload: Mapping, settings: Mapping, answers: Mapping) -> tuple[dict, list[Problem]]:
        """Clean a response; return (cleaned answers, problems). No problems means it is stored."""
        raise NotImplementedError

    def server_answers(self, item, slot, settings: Mapping) -> dict:
        """Answers the server fills in, not the worker, merged over the posted ones before
        validation (a chat's transcript, read back from its relay, so it cannot be forged). Runs
        on submission only; the default asks nothing."""
        return {}

    def grade_gold(self, gold: Mapping, answers: Mapping) -> bool:
        """Whether cleaned answers match a gold item's known answer: every key of `gold` equal."""
        return all(answers.get(key) == value for key, value in gold.items())

    def page_context(self, item, slot, settings: Mapping) -> dict:
        """Extra template context for the work page of one claimed slot (e.g. a per-worker order of
        what is shown). Must not query more than it needs: it runs on every page view."""
        return {}

    # --- Work order -------------------------------------------------------------------------------

    def claim_start(self, job, worker) -> int | None:
        """Where in the job's position order this worker's claims begin, or None for the plain order.

        Called by claim_next_slot inside its transaction. An offset makes the worker meet the items
        as a rotation of the position order: positions >= offset first, then the ones before it.
        Each branch is still an ordered scan of the (job, state, position) index.
        """
        return None

    def held_back(self, job) -> Mapping | None:
        """Items no worker is given for now, as Item field lookups to exclude (e.g. chats with a
        system that is paused), or None. Called on every claim: it must be cheap."""
        return None

    # --- Combining, agreement, evidence -----------------------------------------------------------

    def combine(self, answer_rows: list[Mapping], settings: Mapping) -> dict:
        """What the counted responses of one item say together, as {column: value}, for the
        combined-items export and reviewers. Default: per choice field, the most chosen answer and
        its share; free text is not combined."""
        out = {}
        choice_fields = [f["name"] for f in self.answer_fields(settings) if f.get("choices")]
        for name in choice_fields:
            values = [row[name] for row in answer_rows if row.get(name) not in (None, "")]
            if values:
                top = max(sorted(set(values), key=str), key=values.count)
                out[name] = top
                out[f"{name}_share"] = round(values.count(top) / len(values), 4)
        out["responses"] = len(answer_rows)
        return out

    def vote_parts(self, settings: Mapping) -> list[dict]:
        """The parts of a response voters judge one by one, [{name, label}]; empty: the whole response."""
        return []

    def in_subset(self, combined: Mapping, settings: Mapping) -> bool | None:
        """Whether an item, by its combined responses, belongs to the job's downloadable subset (the
        hard test subset); None when the job defines no subset."""
        return None

    def agreement_values(self, answers: Mapping, settings: Mapping) -> dict:
        """The values agreement is measured on, {question: value}, at `agreement_level`: one
        Krippendorff table per question, units = items, coders = workers. Default: the choice fields.
        Free text has no agreement here (an empty dict)."""
        return {
            f["name"]: answers[f["name"]]
            for f in self.answer_fields(settings)
            if f.get("choices") and answers.get(f["name"]) not in (None, "")
        }

    def text_of(self, answers: Mapping, settings: Mapping) -> str:
        """The free text of a response, for near-duplicate flags: the fields without choices. A
        choice is not text: two workers who agree are not copying each other."""
        return "\n".join(
            answers[f["name"]]
            for f in self.answer_fields(settings)
            if not f.get("choices") and not f.get("upload") and isinstance(answers.get(f["name"]), str) and answers[f["name"]]
        )

    def texts_of(self, answers: Mapping, settings: Mapping) -> dict:
        """The free text of a response field by field, {field: text}, for near-duplicate flags,
        which compare one field (a variant) with the same field of other workers' responses. A type
        whose `text_of` is empty has none."""
        if not self.text_of(answers, settings):
            return {}
        return {
            f["name"]: answers[f["name"]]
            for f in self.answer_fields(settings)
            if not f.get("choices") and isinstance(answers.get(f["name"]), str) and answers[f["name"]]
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

    def comparison(self, payload: Mapping, answers: Mapping) -> tuple | None:
        """For types that compare two systems: (system_a, system_b, outcome "a"|"b"|"tie", instance)
        of one response, which evaluation ranks by (Bradley-Terry); None for every other type."""
        return None

    def subject_of(self, payload: Mapping) -> str:
        """The text the work was about, in one line, for lists and review pages."""
        return str(payload.get("utterance") or payload.get("response") or "")


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


def register(task_type: TaskType) -> TaskType:
    problems = []
    if not task_type.key:
        problems.append("no key")
    if task_type.builds_from not in (CORPUS, PAYLOADS, RESPONSES):
        problems.append(f"builds_from must be one of {CORPUS}, {PAYLOADS}, {RESPONSES}")
    if task_type.agreement_level not in LEVELS:
        problems.append(f"agreement_level must be one of {', '.join(LEVELS)}")
    if task_type.upload_fields(task_type.default_settings()) and not task_type.upload_store:
        problems.append("a type with upload fields must name its upload_store")
    if problems:
        raise ValueError(f"task type {task_type.key!r}: {'; '.join(problems)}")
    if task_type.key in _registry:
        raise ValueError(f"task type {task_type.key!r} is registered twice")
    _registry[task_type.key] = task_type
    return task_type


def get(key: str) -> TaskType:
    try:
        return _registry[key]
    except KeyError:
        raise KeyError(f"unknown task type {key!r}; known: {', '.join(sorted(_registry))}") from None


def registry() -> dict[str, TaskType]:
    return dict(_registry)
