"""CGoDial out-of-scope turns: given a dialog up to an insertion point and the knowledge QA pairs, a
worker writes a plausible user turn the system cannot serve (a meaningless sentence, an irrelevant
question); the system answers with a configured default (PROTOCOLS.md 6b).

Items are insertion points, chosen when the job is made (`source_turns`): each dialog is chosen with
probability `insert_probability` (0.6) and then gets 1 to `max_per_dialog` (2) points, drawn among
its user turns by a generator seeded with (`seed`, dialog), so the same corpus and settings give the
same items. An item's turn is the user turn the new turn is inserted *before*; its payload is
{"context": the turns before it, "next_turn": its text, "user_turns": every user turn of the
dialog, "insert_before": its index}.

The knowledge QA pairs are a job setting (`qa_pairs`, from a JSONL file of {question, answer}), or
when none are given the FAQ documents of the corpus's DSTC9 knowledge (title = question, body =
answer). The page lists them, collapsed, so that the worker does not ask what the knowledge answers.

Export: one test set, `oos`, in the corpus's own format: each accepted turn inserted before its
item's turn, followed by the system's default answer, the turn labelled out of scope as the format
allows (docs/formats.md).
"""
import itertools
import random
from collections.abc import Mapping
from dataclasses import dataclass

from rapidfuzz import fuzz, process  # C implementations of string similarity

from ..exporters.base import OOS_REPLY, OOS_TURN, TurnRecord
from ..exporters.readme import TestSetWords, earliest_rule
from ..exporters.selection import passed_first
from ..text import qa_pairs, text_units
from .base import Problem, TaskType, TaskTypeSettingsError, check_number, clean_text, default_settings
from .capabilities import ExportsTestSets, FromCorpusTurns, NotesSettings, SettingFiles, Votable
from .registration import register

MAX_QA_PAIRS = 5000
MAX_TURN_CHARS = 1000
DEFAULT_ANSWER = "I am sorry, I do not know that"
FIELD = "utterance"
LABEL = "Out-of-scope user turn"
SET_NAME = "oos"
#: Which dialogs the test set holds (README and manifest): a builder may expect every chosen dialog.
LEFT_OUT = (
    "only those with at least one insertion point (item) in this job are included, in corpus order. A dialog the draw "
    "gave no insertion point (each dialog gets one with probability insert_probability = {probability}) is left out of "
    "the set even though it was chosen for the job: it would be the source dialog unchanged, so take it from the source "
    "corpus if the set should hold in-scope dialogs too."
)
#: How each format labels the inserted user turn (docs/formats.md), for that format's README only.
OOS_LABELS = {
    "multiwoz": 'The inserted user turn has `dialog_act` `{"general-oos": [["none", "none"]]}`, `"span_info": []` and '
    '`"oos": true`; the default answer after it keeps the belief state (`metadata`) of the system turn before it.',
    "dstc9": 'The inserted user turn has `"oos": true` beside `speaker` and `text` in `logs.json`; `labels.json` stays '
    "aligned (no instance is added).",
    "dstc6": "Utterances are strings, so the dialog's `oos_turns` lists the indexes of the inserted turns in `utterances`.",
    "jsonl": 'The inserted user turn has `"oos": true`.',
}
NO_KNOWLEDGE_NOTE = (
    "No knowledge QA pairs: the corpus has no DSTC9 knowledge and no QA-pairs file was given, so workers see no "
    "list of what the system can answer, and a turn is not checked against the knowledge, only against the "
    "dialog's own user turns (and by the vote, if voting is on). To have it checked, create the job again with a QA-pairs file."
)

#: What the length settings count in a turn written without spaces (`check_turn`, `text_units.length`).
COUNTED_IN_UNSPACED = (
    "characters instead where the turn is mostly in a script written without spaces (Chinese, Japanese, Thai), "
    "punctuation and spaces not counted"
)
#: The built-in default answer is English; set in another language, it would be a wrong answer in a
#: test set of that language (a Chinese CGoDial set), so the builder is told how to change it.
HOW_TO_SET_ANSWER = (
    "create the job again with its Default answer setting written in the corpus's language (a field of the "
    "out-of-scope settings on the new-job page; the same setting in the command's or the API's settings)"
)
ENGLISH_ANSWER_NOTE = (
    f'The system\'s default answer is English ("{DEFAULT_ANSWER}") and is written after every inserted turn of the '
    "export, but the QA pairs are in a script written without spaces (Chinese, Japanese, Thai): to have it in their "
    f"language, {HOW_TO_SET_ANSWER}."
)
MAYBE_ENGLISH_ANSWER_NOTE = (
    f'The system\'s default answer, written after every inserted turn of the export, is English ("{DEFAULT_ANSWER}"). '
    f"If the corpus is in another language (a Chinese corpus, say), {HOW_TO_SET_ANSWER}."
)


def default_answer_notes(settings: Mapping) -> list[str]:
    """A note where the English default answer may not be the corpus's language. The settings hold
    no corpus text but the QA pairs (the corpus's knowledge or the builder's file): QA pairs in a
    script without spaces say the corpus is not English; QA pairs in a spaced script say nothing
    is amiss; without any, the note says what to do if the corpus is not English."""
    if settings.get("default_answer", DEFAULT_ANSWER) != DEFAULT_ANSWER:
        return []
    questions = " ".join(p["question"] for p in settings.get("qa_pairs") or [])
    if not questions:
        return [MAYBE_ENGLISH_ANSWER_NOTE]
    return [ENGLISH_ANSWER_NOTE] if text_units.is_unspaced(questions) else []


@dataclass(frozen=True)
class InsertionPoint:
    """A source row for `jobs.save_job`: the user turn (`id`) before which a turn is inserted."""

    id: int
    index: int
    context: list
    next_turn: str
    user_turns: list


def insertion_points(turns, *, probability: float, max_per_dialog: int, seed: int):
    """The insertion points of turns given in corpus order (rows with id, dialog_id, index, speaker,
    text, dialog_external_id). Pure: the draw of a dialog depends only on the seed and the dialog's
    id in its corpus file, so the same corpus imported again gets the same points."""
    for _dialog, rows in itertools.groupby(turns, key=lambda row: row.dialog_id):
        rows = list(rows)
        rng = random.Random(f"quorum-oos:{seed}:{rows[0].dialog_external_id}")
        users = [i for i, row in enumerate(rows) if row.speaker == "user"]
        if not users or rng.random() >= probability:
            continue
        count = min(len(users), rng.randint(1, max_per_dialog))
        for position in sorted(rng.sample(users, count)):
            row = rows[position]
            yield InsertionPoint(
                id=row.id,
                index=row.index,
                context=[{"speaker": r.speaker, "text": r.text} for r in rows[:position]],
                next_turn=row.text,
                user_turns=[rows[i].text for i in users],
            )


def check_turn(text: str, payload: Mapping, questions: list[str], *, threshold: float, min_length: int, max_length: int) -> list[Problem]:
    """What is wrong with an inserted turn: empty, out of the length bounds, a copy of a turn of the
    context, too close to a user turn of the dialog, or a question the knowledge answers. Pure."""
    if not text:
        return [Problem(FIELD, "required", f"{LABEL}: write a user turn the system cannot answer.")]
    unspaced = text_units.is_unspaced(text)
    size, unit = text_units.length(text, unspaced), text_units.unit_name(unspaced, 2)
    problems = []
    if size < min_length:
        problems.append(Problem(FIELD, "too_short", f"{LABEL}: use at least {min_length} {unit} ({size} now)."))
    if size > max_length:
        problems.append(Problem(FIELD, "too_long", f"{LABEL}: use at most {max_length} {unit} ({size} now)."))
    mine = text_units.comparable(text)
    for turn in payload.get("context", []):
        if text_units.comparable(turn["text"]) == mine:
            who = "user" if turn["speaker"] == "user" else "system"
            problems.append(Problem(FIELD, "copy", f"{LABEL}: this repeats a {who} turn of the dialog; write a new turn."))
            return problems
    normal = text_units.normalize(text)
    near = process.extractOne(
        normal, [text_units.normalize(t) for t in payload.get("user_turns", [])], scorer=fuzz.ratio, score_cutoff=threshold
    )
    if near is not None:
        problems.append(Problem(
            FIELD, "in_scope_turn",
            f'{LABEL}: this is too close to the user\'s turn "{payload["user_turns"][near[2]]}"; '
            "write something the system of this dialog cannot serve.",
        ))
    normal_questions = [text_units.normalize(q) for q in questions]
    near = process.extractOne(normal, normal_questions, scorer=fuzz.ratio, score_cutoff=threshold)
    if near is None:  # a knowledge question quoted inside the turn is in scope too
        near = next(((q, 100, i) for i, q in enumerate(normal_questions) if len(q) >= 10 and q in normal), None)
    if near is not None:
        problems.append(Problem(
            FIELD, "in_scope_question",
            f'{LABEL}: the knowledge answers this ("{questions[near[2]]}"); ask something outside the listed QA pairs.',
        ))
    return problems


class OutOfScopeTaskType(TaskType, FromCorpusTurns, Votable, ExportsTestSets, SettingFiles, NotesSettings):
    key = "oos_insert"
    label = "Insert out-of-scope user turns (CGoDial)"
    template = "annotation/tasks/oos_insert.html"
    source_speaker = None  # the context holds system turns too; insertion points are user turns
    agreement_level = "nominal"  # free text: no agreement table
    vote_question = "Is this a plausible user turn that the system of this dialog cannot answer (out of scope), and clearly written?"
    setting_files = {"qa_pairs": 'Knowledge QA pairs: a JSONL file, one {"question", "answer"} a line.'}
    settings_help = {
        "insert_probability": (0.6, "Chance that a dialog gets out-of-scope turns (CGoDial: 0.6)."),
        "max_per_dialog": (2, "A chosen dialog gets from 1 to this many insertion points, each an item (CGoDial: at most 2)."),
        "seed": (0, "Seed of the draw of dialogs and insertion points: the same corpus, seed and settings give the same items."),
        "default_answer": (
            DEFAULT_ANSWER,
            "The system's answer to an out-of-scope turn, written after it in the export. English by default: for a corpus "
            "in another language (a Chinese one, say), write it in that language.",
        ),
        "qa_pairs": (
            [],
            f"The knowledge QA pairs (each a question and its answer) shown to workers so that they do not ask what the "
            f"system can answer (at most {MAX_QA_PAIRS}); empty: the FAQ documents of the corpus's DSTC9 knowledge, if any.",
        ),
        "similarity_threshold": (
            80,
            "A turn at least this similar (from 0 to 100, where 100 is the same text; case and spaces aside) to a user turn of the "
            "dialog or to a knowledge question is refused as in scope.",
        ),
        "min_length": (2, f"Fewest words of an inserted turn; {COUNTED_IN_UNSPACED} (so 2 is two characters there)."),
        "max_length": (40, f"Most words of an inserted turn; {COUNTED_IN_UNSPACED}."),
    }

    def clean_settings(self, settings):
        cleaned = super().clean_settings(settings)
        errors = {}

        check_number(cleaned, errors, "insert_probability", 0, 1)
        check_number(cleaned, errors, "max_per_dialog", 1, 10, whole=True)
        check_number(cleaned, errors, "seed", 0, 2**31 - 1, whole=True)
        check_number(cleaned, errors, "similarity_threshold", 1, 100)
        check_number(cleaned, errors, "min_length", 1, 1000, whole=True)
        check_number(cleaned, errors, "max_length", 1, 1000, whole=True)
        if "min_length" not in errors and "max_length" not in errors and cleaned["min_length"] > cleaned["max_length"]:
            errors["max_length"] = "at least min_length"
        answer = cleaned["default_answer"]
        if not isinstance(answer, str) or not answer.strip():
            errors["default_answer"] = "a non-empty text"
        try:
            cleaned["qa_pairs"] = qa_pairs.clean_pairs(cleaned["qa_pairs"], limit=MAX_QA_PAIRS)
        except qa_pairs.QaPairsError as exc:
            errors["qa_pairs"] = str(exc)
        if errors:
            raise TaskTypeSettingsError(errors)
        cleaned["default_answer"] = answer.strip()
        return cleaned

    def settings_for_corpus(self, settings, corpus_meta):
        if settings["qa_pairs"]:
            return dict(settings)
        pairs = [{"question": p["question"], "answer": p["answer"]} for p in qa_pairs.from_knowledge(corpus_meta.get("knowledge"))]
        if len(pairs) > MAX_QA_PAIRS:
            raise TaskTypeSettingsError({"qa_pairs": (
                f"the corpus's knowledge has {len(pairs)} FAQ documents, more than the {MAX_QA_PAIRS} a page can list; "
                "give the QA pairs workers should see as a file"
            )})
        return {**settings, "qa_pairs": pairs}

    def settings_notes(self, settings):
        knowledge = [] if settings.get("qa_pairs") else [NO_KNOWLEDGE_NOTE]
        return knowledge + default_answer_notes(settings)

    def read_setting_file(self, setting, text, name):
        if setting != "qa_pairs":
            return super().read_setting_file(setting, text, name)
        try:
            return qa_pairs.read_jsonl(text, name)
        except qa_pairs.QaPairsError as exc:
            raise TaskTypeSettingsError({setting: str(exc)}) from None

    # --- Items ------------------------------------------------------------------------------------

    def source_turns(self, turns, settings):
        return list(insertion_points(
            turns, probability=settings["insert_probability"], max_per_dialog=settings["max_per_dialog"], seed=settings["seed"]
        ))

    def build_payload(self, source) -> dict:
        return {"context": source.context, "next_turn": source.next_turn, "user_turns": source.user_turns, "insert_before": source.index}

    def page_context(self, item, slot, settings):
        answer = settings.get("default_answer", DEFAULT_ANSWER)
        # The builder's default answer is in the corpus's language (its lang is the text's); Quorum's is English.
        return {"qa_pairs": settings.get("qa_pairs", []), "default_answer": answer, "default_answer_is_builders": answer != DEFAULT_ANSWER}

    # --- Responses --------------------------------------------------------------------------------

    def answer_fields(self, settings):
        not_this = "Not a question the knowledge answers, not a repeat of the dialog." if settings.get("qa_pairs") else "Not a repeat of the dialog."
        return [{
            "name": FIELD, "label": LABEL,
            "help": "A plausible user turn at this point that the system cannot serve: an irrelevant question or a "
            f"meaningless sentence. {not_this}",
        }]

    def validate(self, payload: Mapping, settings: Mapping, answers: Mapping) -> tuple[dict, list[Problem]]:
        defaults = default_settings(self)
        text, problems = clean_text(answers.get(FIELD, ""), FIELD, LABEL, MAX_TURN_CHARS)
        if text is None:
            return {}, problems
        if not problems:
            problems = check_turn(
                text, payload, [p["question"] for p in settings.get("qa_pairs", [])],
                threshold=settings.get("similarity_threshold", defaults["similarity_threshold"]),
                min_length=settings.get("min_length", defaults["min_length"]),
                max_length=settings.get("max_length", defaults["max_length"]),
            )
        return {FIELD: text}, problems

    def combine(self, answer_rows, settings):
        """The counted turns of an item, earliest first (the test set takes the first)."""
        return {FIELD: [row[FIELD] for row in answer_rows if row.get(FIELD)], "responses": len(answer_rows)}

    def subject_of(self, payload):
        return f"(inserted before) {payload.get('next_turn', '')}"

    # --- Export -----------------------------------------------------------------------------------

    def test_set_names(self, settings):
        return [SET_NAME]

    def test_set_turns(self, turn, payload, accepted_responses, settings):
        """The earliest accepted turn that passed the vote (else one a reviewer accepted after all:
        `exporters.selection`) and the default answer, inserted before the item's turn."""
        for response in passed_first(accepted_responses, None):
            text = (response.answers or {}).get(FIELD)
            if isinstance(text, str) and text.strip():
                answer = settings.get("default_answer", DEFAULT_ANSWER)
                return {SET_NAME: [
                    TurnRecord(turn.index, "user", text, [], {}, inserted=OOS_TURN),
                    TurnRecord(turn.index, "system", answer, [], {}, inserted=OOS_REPLY),
                    turn,
                ]}
        return {}

    def manifest_extra(self, settings):
        return {"out_of_scope": {
            "default_answer": settings.get("default_answer", DEFAULT_ANSWER),
            "labels": "see docs/formats.md: an inserted user turn is labelled out of scope; "
            "replaced.oos lists the turns each was inserted before",
            "dialogs": LEFT_OUT.format(probability=settings.get("insert_probability", default_settings(self)["insert_probability"])),
        }}

    def test_set_words(self, settings):
        answer = settings.get("default_answer", DEFAULT_ANSWER)
        probability = settings.get("insert_probability", default_settings(self)["insert_probability"])
        return TestSetWords(
            sets=f"One directory, `{SET_NAME}`: the source corpus in its own format with two turns inserted before each item's "
            "user turn that has an accepted response: the worker's out-of-scope user turn, then the system's default answer "
            f'("{answer}"). Nothing is replaced: every source turn is as imported. In `manifest.json`, '
            f"`replaced.{SET_NAME}` of a dialog lists the source turns (indices from 0) a turn was inserted before.",
            slot_values="The inserted turns carry no slot values (an out-of-scope turn changes no slot).",
            format_words=OOS_LABELS,
            selection=[
                f"Dialogs: {LEFT_OUT.format(probability=probability)}",
                earliest_rule("out-of-scope turn"),
                "An item's turn without an accepted response gets nothing inserted before it.",
            ],
            counts=("test set", "turns with an out-of-scope turn inserted before", "item turns with nothing inserted (no accepted response)"),
        )


register(OutOfScopeTaskType())
