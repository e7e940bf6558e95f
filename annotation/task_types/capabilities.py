"""What a task type may do beyond the core (`base.TaskType`): one small class per capability.

A type declares a capability by inheriting its class (`class ChatTaskType(TaskType, RelaysChat)`),
and the platform discovers it with `capability(kind, RelaysChat)`, which returns the type when it
declares the capability and None when not, or with `isinstance`. Nothing outside a type's module
asks for a type by its key: it asks for what the type can do. The members of each class are the
capability's contract; `tests/annotation/task_types/` holds one contract suite per capability.

Every type declares exactly one item source: `FromCorpusTurns`, `FromPayloads` or `FromResponses`.
"""
import json
from collections.abc import Iterable, Mapping
from typing import Any, Protocol, TypeVar

from ..exporters.readme import DIALOGS_RULE, TestSetWords, earliest_rule, field_words
from .base import PayloadError, TaskType, TaskTypeSettingsError

C = TypeVar("C")


def capability(kind: object, cls: type[C]) -> C | None:
    """`kind` as a `cls` when it declares that capability, else None."""
    return kind if isinstance(kind, cls) else None


# --- Where items come from ---------------------------------------------------------------------


class FromCorpusTurns:
    """Items are turns of a corpus (one item per chosen source turn); `services.jobs.create_job`."""

    #: Only turns of this speaker become items ("user" for rewrites); None: every turn. Applied in
    #: the database query, so a job over a large corpus does not read the turns it would drop.
    source_speaker: str | None = None

    def source_turns(self, turns: Iterable, settings: Mapping) -> list:
        """The source turns that become items, from turns already limited to `source_speaker`, in
        corpus order (rows with id, dialog_id, index, speaker, text, slot_values), under the job's
        cleaned `settings`. A type may return its own rows (with at least `id`, the item's turn)
        for `build_payload`: the out-of-scope type picks insertion points per dialog."""
        return list(turns)

    def settings_for_corpus(self, settings: Mapping, corpus_meta: Mapping) -> dict:
        """Cleaned settings completed from the job's corpus (its `Corpus.meta`): e.g. the
        out-of-scope type takes the knowledge QA pairs of a DSTC9 corpus when none are given."""
        return dict(settings)


class FromPayloads:
    """Items are payloads the caller gives (kept in a `PayloadSet`): a campaign, a payload file, or
    a corpus's own data; `services.payload_jobs`."""

    #: What a payload file an organizer may give is (shown on the job page and in `create_job`'s
    #: help); empty: its payloads come from elsewhere (a campaign), and the job page does not offer it.
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
        """Payloads taken from a corpus's own data (`Corpus.meta`, e.g. the FAQ documents of a DSTC9
        knowledge base); empty: none."""
        return []


class FromResponses:
    """Items are the responses of another job (one item per response put to the vote): the vote
    type. `services.voting.enable_voting` makes such a job; nobody else does."""


#: What each item source is called in the API (`/api/task-types/`'s `builds_from`) and messages.
ITEM_SOURCES: dict[type, str] = {FromCorpusTurns: "corpus", FromPayloads: "payloads", FromResponses: "responses"}


def item_source(kind: object) -> type:
    """The item-source capability `kind` declares (one of `ITEM_SOURCES`)."""
    return next(cls for cls in ITEM_SOURCES if isinstance(kind, cls))


def builds_from(kind: object) -> str:
    """Where `kind`'s items come from, by name: corpus, payloads or responses."""
    return ITEM_SOURCES[item_source(kind)]


# --- Settings given as files ---------------------------------------------------------------------


class SettingFiles:
    """Settings an organizer gives as a file: the job page shows an upload, `create_job` an option."""

    #: Setting name -> what the file is (shown beside the upload and in the command's help).
    setting_files: Mapping[str, str] = {}

    def read_setting_file(self, setting: str, text: str, name: str) -> Any:
        """The value of a `setting_files` setting from the file's text (`name`: the file's name, for
        messages); TaskTypeSettingsError names the setting and the line."""
        raise TaskTypeSettingsError({setting: "this setting is not read from a file"})


# --- What a response sets off ------------------------------------------------------------------------


class Votable:
    """Its responses are put to a vote when the job votes (CGoDial voting, `services.voting`)."""

    #: The question voters answer about this type's responses; empty: the vote type's default (rewrites).
    vote_question: str = ""

    def vote_parts(self, settings: Mapping) -> list[dict]:
        """The parts of a response voters judge one by one, [{name, label}] (a rewrite's variants; a
        part with enough noes re-collects the item); empty: the whole response."""
        return []


class GradesGold:
    """Grades a gold answer its own way; without it a gold answer is met when every key is equal
    (`grade_gold`)."""

    def grade_gold(self, gold: Mapping, answers: Mapping) -> bool:
        """Whether cleaned answers meet a gold item's known answer."""
        return exact_match(gold, answers)


def exact_match(gold: Mapping, answers: Mapping) -> bool:
    return all(answers.get(key) == value for key, value in gold.items())


def grade_gold(kind: object, gold: Mapping, answers: Mapping) -> bool:
    """Whether `answers` meet `gold` by `kind`'s rule (`GradesGold`), else every key equal."""
    grader = capability(kind, GradesGold)
    return grader.grade_gold(gold, answers) if grader else exact_match(gold, answers)


class FeedsRatings:
    """A counted response becomes evaluation `Rating` rows (evaluation follows the response's life
    for these types only: `evaluation/receivers.py`)."""


class ComparesSystems:
    """Its responses compare two systems; evaluation ranks them (Bradley-Terry)."""

    def comparison(self, payload: Mapping, answers: Mapping) -> tuple | None:
        """(system_a, system_b, outcome "a"|"b"|"tie", instance) of one response, or None."""
        raise NotImplementedError

    def systems(self, payload: Mapping) -> tuple[str, str]:
        """(system_a, system_b) an item compares, whether or not anyone answered it (an automatic
        judge's verdicts cover items no human rated)."""
        raise NotImplementedError

    def presentation(self, payload: Mapping, answers: Mapping) -> tuple | None:
        """(side shown on the left "a"|"b" or None when not recorded, text of a, text of b): what the
        worker saw, for evaluation's position bias and style controls; None when unknown."""
        return None


# --- The page ------------------------------------------------------------------------------------------


class TakesUploads:
    """Some answer fields are files (an "upload" media type); see `base.Upload`. The page posts
    multipart, `validate` gets the bytes and returns an Upload for a good file, and its content goes
    to the store named here (`annotation.extensions.upload_stores`) in the response's transaction."""

    #: Where the files of this type's responses are stored (a key of `annotation.extensions.upload_stores`).
    upload_store: str = ""

    def upload_fields(self, settings: Mapping) -> list[dict]:
        """The answer fields that are files (an "upload" media type), posted as multipart."""
        return [f for f in self.answer_fields(settings) if f.get("upload")]  # type: ignore[attr-defined]  # a mixin of TaskType


class RelaysChat:
    """The page relays a conversation (`/work/<token>/chat/`, `annotation.chat_relay`), and the
    server fills in what was said."""

    def server_answers(self, item: Any, slot: Any, settings: Mapping) -> dict:
        """Answers the server fills in, not the worker, merged over the posted ones before
        validation (a chat's transcript, read back from its relay, so it cannot be forged)."""
        return {}

    def combined_column_help(self, settings: Mapping) -> dict[str, str]:
        """What the columns `combine` counts from the relayed conversations hold, for the README of
        the combined-items export (`items.csv`): a count whose name does not say what it counts."""
        return {}


class GroupsFields:
    """Some answer fields are shown inside another's row on the page (a questionnaire's N/A reason
    beside its question): the type completes the rows the work page builds."""

    def form_rows(self, rows: list[dict], answers: Mapping, problems: Mapping[str, list[str]]) -> list[dict]:
        """The work page's rows ({**field, "value", "problems"}) completed: `answers` as posted,
        `problems` the messages by field."""
        return rows


# --- Who gets which item -----------------------------------------------------------------------------


class OrdersClaims:
    """Each worker meets the items in an order of their own (`services.claims.claim_next_slot`).
    A type that also says its start in SQL (`claim_start_expression`) is claimed by the
    one-statement claim where the plain order would be; otherwise always in a transaction."""

    def claim_start(self, job: Any, worker: Any) -> int | None:
        """Where in the job's position order this worker's claims begin, or None for the plain order.

        Called by claim_next_slot inside its transaction. An offset makes the worker meet the items
        as a rotation of the position order: positions >= offset first, then the ones before it.
        Each branch is still an ordered scan of the (job, state, position) index.
        """
        return None

    def claim_start_values(self, job: Any, worker: Any) -> dict[str, int] | None:
        """The values, besides the job's and the worker's ids, that this claim's
        `claim_start_expression` is built from (e.g. a hash of the two; {} when the ids suffice), or
        None when the type has no start in SQL and its jobs are claimed in a transaction. Called on
        every claim: it must be cheap."""
        return None

    def claim_start_expression(self, job_id: int, worker_id: int, **values: int) -> Any:
        """`claim_start` as one SQL expression (a Django expression; NULL or 0 for the plain order),
        which the one-statement claim reads in its own statement instead of asking first. Built from
        its arguments alone (`values` from `claim_start_values`), each going into the SQL as a
        parameter: the claim compiles the expression once per process and binds new values on each
        claim (quorum.compiled_queries refuses SQL that depends on them). It must say what
        `claim_start` says for every job and worker (`TestOrdersClaims`)."""
        return None


class HoldsBackItems:
    """Some items are given to nobody for now (chats with a paused system)."""

    def held_back(self, job: Any) -> Mapping | None:
        """Items no worker is given for now, as Item field lookups to exclude, or None. Called on
        every claim: it must be cheap."""
        return None


# --- Combining and review ------------------------------------------------------------------------------


class LevelsByQuestion:
    """Questions of one type measured at different levels (a chat's Success/Fail is nominal, its
    1-5 ratings ordinal): agreement and the rating flags take each question's own level."""

    def question_level(self, question: str, settings: Mapping) -> str:
        """The level of measurement (`base.LEVELS`) of one question of `agreement_values`: the type
        that declares this capability says each one's (a type with one level needs no capability)."""
        raise NotImplementedError


class HasSubset:
    """A job may define a downloadable subset of its items (CGoDial's hard test subset)."""

    def in_subset(self, combined: Mapping, settings: Mapping) -> bool | None:
        """Whether an item, by its combined responses, belongs to the job's subset; None when the
        job defines no subset."""
        return None


class DiffsAgainstSubject:
    """The review queue shows each free-text answer as a word diff against the subject: an answer
    rewrites the subject (rewrites), so the reviewer sees what changed."""


# --- Export ------------------------------------------------------------------------------------------


class ExportsTestSets:
    """The job exports test sets in its corpus's own format (one directory each), the manifest and
    `responses.csv`; a job of any other type exports its responses, combined items and agreement."""

    def test_set_names(self, settings: Mapping) -> list[str]:
        """The test sets a job exports: one directory each (rewrites: one per variant)."""
        return []

    def test_set_turns(self, turn: Any, payload: Mapping, accepted_responses: list, settings: Mapping) -> dict:
        """What one source turn with an item becomes in each test set: {set name: [TurnRecord, ...]}
        (`annotation.exporters.TurnRecord`); a set left out keeps the source turn. `accepted_responses`
        are the item's counted responses (.answers, .submitted_at, .id; with `TakesUploads`,
        .transcribed_readings), earliest first."""
        return {}

    def test_set_words(self, settings: Mapping) -> TestSetWords:
        """What the test sets are, in the words of the export's README. Default: each set the source
        corpus with an item's user turn replaced by an accepted response's text."""
        names = ", ".join(f"`{name}`" for name in self.test_set_names(settings))
        return TestSetWords(
            sets=f"One directory per test set ({names}). Each is the source corpus in its own format with every user turn "
            "that has an accepted response replaced by that response's text; everything else is as imported.",
            slot_values="A replaced turn keeps the source turn's slot values.",
            format_words={"multiwoz": (
                "A replaced turn's `span_info` gives places in the source text, which may not match the text that replaced it, "
                "so locate values in the text rather than by position."
            )},
            selection=[DIALOGS_RULE, earliest_rule("text"), "Item turns without an accepted response keep their original text."],
            counts=("test set", "turns replaced", "item turns without an accepted response"),
        )

    def response_columns(self, settings: Mapping) -> list[str]:
        """The answer columns of the export's `responses.csv`; default: the answer fields, each
        column holding what the worker gave in that field (a test set's name need not be a field:
        the out-of-scope set `oos` is made of the field `utterance`)."""
        return [f["name"] for f in self.answer_fields(settings)]  # type: ignore[attr-defined]  # a mixin of TaskType

    def response_column_help(self, settings: Mapping) -> dict[str, str]:
        """What each column of `response_columns` holds, for the export's README; default: each
        answer field's label and help, as the work page shows them."""
        fields = {f["name"]: f for f in self.answer_fields(settings)}  # type: ignore[attr-defined]  # a mixin of TaskType
        return {column: field_words(fields.get(column, {"label": column})) for column in self.response_columns(settings)}

    def response_cells(self, response: Any, settings: Mapping, *, include_audio: bool) -> dict:
        """The answer cells of one response in `responses.csv`, {column of `response_columns`: value};
        `response` has .id and .answers (with `TakesUploads`, .export_readings: its stored files'
        rows, by index), `include_audio` whether the export copies the recordings. Default: each
        column's answer."""
        answers = response.answers if isinstance(response.answers, Mapping) else {}
        return {column: answers.get(column, "") for column in self.response_columns(settings)}

    def manifest_of(self, payload: Mapping) -> dict:
        """What an item's payload records for the export manifest (e.g. the entity mapping of an
        unseen-entities rewrite); empty: nothing."""
        return {}

    def manifest_extra(self, settings: Mapping) -> dict:
        """Job-level entries of the export's manifest (e.g. the out-of-scope default answer)."""
        return {}


class ExportSource(Protocol):
    """What the export offers a type's `answer_files` (`services.exports` implements it)."""

    include_audio: bool

    def counted_items(self) -> Iterable[tuple[Mapping, list[tuple[str, Mapping]]]]:
        """(payload, [(worker, answers), ...] of the counted responses, earliest first) in item order."""
        ...

    def readings(self) -> Iterable[Any]:
        """The stored spoken readings of the job's confirmed responses (`SpokenReading` rows, with
        `response.worker` and `response.item.turn.dialog`)."""
        ...

    def copy_file(self, stored: Any, name: str) -> None:
        """Copy a stored file (a FieldFile) into the export under `name`."""
        ...


class ExportsFiles:
    """The export holds extra JSONL files the type makes (QA pairs, the readings)."""

    def answer_files(self, source: ExportSource, settings: Mapping) -> dict[str, list[dict]]:
        """{file name: [JSON records]}, each written one record a line in this order."""
        return {}

    def answer_file_words(self, settings: Mapping) -> dict[str, str]:
        """What each file of `answer_files` (and any folder it copies files to) holds, for the README."""
        return {}


#: Every capability, for the architecture doc and the contract suites.
# --- What the builder is told ---------------------------------------------------------------------


class NotesSettings:
    """Tells the builder, in words, what a job under its settings will not do (a check with nothing
    to compare with, a list the page leaves empty), so the gap is a decision and not a surprise:
    shown on the job page, with the new-job page's message and as the API job's `notes`."""

    def settings_notes(self, settings: Mapping) -> list[str]:
        return []


def settings_notes(kind: object, settings: Mapping) -> list[str]:
    """The notes of a job of `kind` under `settings`; none for a type without `NotesSettings`."""
    noting = capability(kind, NotesSettings)
    return noting.settings_notes(settings) if noting else []


def agreement_level_of(kind: Any, question: str, settings: Mapping) -> str:
    """The level one question of `kind` is measured at: its own where the type says
    (`LevelsByQuestion`), else the type's `agreement_level`."""
    levels = capability(kind, LevelsByQuestion)
    return levels.question_level(question, settings) if levels else kind.agreement_level


CAPABILITIES: tuple[type, ...] = (
    FromCorpusTurns, FromPayloads, FromResponses, SettingFiles, Votable, GradesGold, FeedsRatings, ComparesSystems,
    TakesUploads, RelaysChat, GroupsFields, OrdersClaims, HoldsBackItems, HasSubset, DiffsAgainstSubject,
    ExportsTestSets, ExportsFiles, NotesSettings, LevelsByQuestion,
)


def declared(kind: TaskType) -> list[type]:
    """The capabilities `kind` declares."""
    return [cls for cls in CAPABILITIES if isinstance(kind, cls)]
