"""Questionnaires: a worker answers fixed questions about one thing, each on its own labelled scale.

One type, several presets (DESIGN.md, "Task types"): the questions and their scales are settings,
so DSTC9's Likert rating, CGoDial's hard-test scoring and the FED questions need no code of their
own. A question is {name, label, help, anchors: one label per point of the scale, values: the
number of each point (1..n by default), shows_knowledge, allows_na}. The bounds of a rating come
from its question's scale, never from a constant.

N/A: a question with `allows_na` offers "N/A" beside its scale, only with a written reason (FED:
"error recovery" when the system made no error). An N/A answer is stored as None with the reason in
`<name>_na_reason`; it is left out of every mean (`combine`) and of agreement, as a missing rating.

Presets (PROTOCOLS.md):
- `likert` (section 2): Appropriateness and Accuracy on 1-5 with anchored labels, over payloads the
  caller builds (an evaluation campaign): {"context": [{speaker, text}], "response", "knowledge"};
  no system identity in the payload.
- `hard_score` (section 6): the user turns of a corpus scored 1-5 on criteria; items whose mean
  score is above `subset_threshold` (2.5) form the hard test subset.
- `fed_turn` (section 4): FED's turn-level questions, No / Somewhat / Yes (understandable No /
  Yes), overall 1-5, over context-response payloads.
- `fed_dialog` (section 4): FED's dialog-level questions, No / Somewhat / Yes (consistent No /
  Yes), overall 1-5, over whole dialogs {"dialog": [{speaker, text}]}; error recovery allows N/A.
The three-point answers are coded 1-3 (No = 1, Somewhat = 2, Yes = 3; No / Yes = 1 / 2), as in the
FED paper's tables, not 0-2 as some loaders do.
"""
import hashlib
from collections.abc import Mapping
from statistics import mean
from typing import Any

from .base import PayloadError, Problem, TaskType, TaskTypeSettingsError, clean_text, default_settings
from .capabilities import FeedsRatings, FromCorpusTurns, FromPayloads, GradesGold, GroupsFields, HasSubset, OrdersClaims
from .registration import register

SPEAKERS = ("user", "system")
MAX_QUESTIONS = 20
MAX_POINTS = 11
MAX_TEXT = 5000
QUESTION_KEYS = {"name", "label", "help", "anchors", "values", "shows_knowledge", "allows_na"}
NA = "na"  # the form value of an N/A answer
MAX_NA_REASON = 500


def _q(name, label, help_text, anchors, shows_knowledge=False, allows_na=False):
    question = {"name": name, "label": label, "help": help_text, "anchors": list(anchors), "shows_knowledge": shows_knowledge}
    return {**question, "allows_na": True} if allows_na else question


#: DSTC9's two questions with anchored labels (one label per point of the scale).
DSTC9_QUESTIONS = [
    _q("appropriateness", "Appropriateness", "How well is the response naturally connected to the conversation?", [
        "Not appropriate at all: unrelated or makes no sense here", "Mostly inappropriate", "Somewhat appropriate",
        "Mostly appropriate", "Completely appropriate: a natural next turn",
    ]),
    _q("accuracy", "Accuracy", "How accurate is the response given the reference knowledge shown?", [
        "Not accurate at all: contradicts the knowledge", "Mostly inaccurate", "Partly accurate", "Mostly accurate",
        "Completely accurate: fully supported by the knowledge",
    ], shows_knowledge=True),
]
ONE_TO_FIVE = ["1 (not at all)", "2", "3", "4", "5 (very much)"]
HARD_SCORE_QUESTIONS = [
    _q("criterion_1", "Hard to understand", "Would a listener find this turn hard to understand? 1 = not at all, 5 = very much.", ONE_TO_FIVE),
    # CGoDial's criterion by its published name, said in plain words for the worker.
    _q("criterion_2", "Spoken features on keywords", "Are the turn's key words (names, places, times, numbers) said the "
       "way people speak rather than write: fillers, repeats, self-corrections, casual or shortened forms? "
       "1 = not at all, 5 = very much.", ONE_TO_FIVE),
]
NSY, NY = ["No", "Somewhat", "Yes"], ["No", "Yes"]
OVERALL = ["1 (very poor)", "2", "3", "4", "5 (very good)"]
#: Mehri & Eskenazi (2020), the questions of DSTC9 Track 3.
FED_TURN_QUESTIONS = [
    _q("interesting", "Interesting", "Is the response dull or interesting?", NSY),
    _q("engaging", "Engaging", "Is the response engaging?", NSY),
    _q("specific", "Specific", "Is the response generic or specific to the conversation?", NSY),
    _q("relevant", "Relevant", "Is the response relevant to the conversation?", NSY),
    _q("correct", "Correct", "Is the response correct or was there a misunderstanding of the conversation?", NSY),
    _q("semantically_appropriate", "Semantically appropriate", "Is the response semantically appropriate?", NSY),
    _q("understandable", "Understandable", "Is the response understandable?", NY),
    _q("fluent", "Fluent", "Is the response fluently written?", NSY),
    _q("overall", "Overall", "Overall impression of the response.", OVERALL),
]
#: Mehri & Eskenazi (2020), the dialog-level questions (DSTC9 Track 3's static and interactive evaluation).
FED_DIALOG_QUESTIONS = [
    _q("coherent", "Coherent", "Throughout the dialog, is the system coherent and maintaining a good conversation flow?", NSY),
    _q("error_recovery", "Error recovery", "Is the system able to recover from errors that it makes? (N/A if it made none.)", NSY, allows_na=True),
    _q("consistent", "Consistent", "Is the system consistent in the information it provides throughout the conversation?", NY),
    _q("diverse", "Diverse", "Is there diversity in the system responses?", NSY),
    _q("topic_depth", "Topic depth", "Does the system discuss topics in depth?", NSY),
    _q("likeable", "Likeable", "Does the system display a likeable personality?", NSY),
    _q("understanding", "Understanding", "Does the system seem to understand the user?", NSY),
    _q("flexible", "Flexible", "Is the system flexible and adaptable to the user and their interests?", NSY),
    _q("informative", "Informative", "Is the system informative throughout the conversation?", NSY),
    _q("inquisitive", "Inquisitive", "Is the system inquisitive throughout the conversation?", NSY),
    _q("overall", "Overall", "Overall impression of the dialog.", OVERALL),
]
def default_question(name: str) -> dict | None:
    """DSTC9's built-in wording of a question, or None if Quorum has none for that name."""
    return next((dict(q) for q in DSTC9_QUESTIONS if q["name"] == name), None)


def words_beside_number(value: int, anchor: str) -> str:
    """What a point's anchor says beyond its number, shown beside the number: "not at all" for
    "1 (not at all)", nothing for "2", the whole anchor where it does not start with its number."""
    number = str(value)
    if not anchor.startswith(number) or anchor[len(number):len(number) + 1].isdigit():
        return anchor
    return anchor[len(number):].strip(" ()-:=")


def scale_of(question: Mapping) -> list[int]:
    """The numbers of a question's points: its `values`, or 1..n for n anchors."""
    return list(question.get("values") or range(1, len(question["anchors"]) + 1))


def clean_questions(questions) -> list[dict]:
    """Check questions (see the module docstring) and return them normalised; TaskTypeSettingsError
    names the question and what is wrong. Pure."""
    if not isinstance(questions, list) or not 1 <= len(questions) <= MAX_QUESTIONS:
        raise _bad_questions(f"give 1 to {MAX_QUESTIONS} questions")
    out: list[dict] = []
    names: set[str] = set()
    for number, q in enumerate(questions, start=1):
        cleaned = _clean_question(q, f"question {number}", names)
        names.add(cleaned["name"])
        out.append(cleaned)
    return out


def _bad_questions(message: str) -> TaskTypeSettingsError:
    return TaskTypeSettingsError({"questions": message})


def _clean_question(q, where: str, names: set[str]) -> dict:
    """One question checked and normalised; `names` are the names of the questions before it."""
    if not isinstance(q, Mapping):
        raise _bad_questions(f"{where}: must be an object {{name, label, help, anchors}}")
    unknown = set(q) - QUESTION_KEYS
    if unknown:
        raise _bad_questions(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
    name, label = q.get("name"), q.get("label")
    if not isinstance(name, str) or not name.isidentifier():
        raise _bad_questions(f"{where}: 'name' must be a short identifier such as 'accuracy'")
    if name in names:
        raise _bad_questions(f"{where}: the name {name!r} is used twice")
    if not isinstance(label, str) or not label.strip():
        raise _bad_questions(f"{where}: 'label' must be a non-empty text")
    anchors, values = _clean_scale(q.get("anchors"), q.get("values"), where)
    cleaned = {
        "name": name,
        "label": label.strip(),
        "help": str(q.get("help") or "").strip(),
        "anchors": anchors,
        "shows_knowledge": bool(q.get("shows_knowledge", False)),
    }
    if q.get("allows_na") not in (None, True, False):
        raise _bad_questions(f"{where}: 'allows_na' must be true or false")
    if q.get("allows_na"):
        cleaned["allows_na"] = True
    if values is not None:
        cleaned["values"] = values
    return cleaned


def _clean_scale(anchors, values, where: str) -> tuple[list[str], list[int] | None]:
    """A question's anchors (one label per point) and optional values (the points' numbers)."""
    if (
        not isinstance(anchors, list)
        or not 2 <= len(anchors) <= MAX_POINTS
        or any(not isinstance(a, str) or not a.strip() for a in anchors)
    ):
        raise _bad_questions(f"{where}: 'anchors' must be 2 to {MAX_POINTS} non-empty labels, one per point of the scale")
    if values is not None and (
        not isinstance(values, list)
        or len(values) != len(anchors)
        or any(not isinstance(v, int) or isinstance(v, bool) for v in values)
        or values != sorted(set(values))
    ):
        raise _bad_questions(f"{where}: 'values' must be {len(anchors)} whole numbers in increasing order, one per anchor")
    return [a.strip() for a in anchors], (list(values) if values is not None else None)


def parse_score(raw, scale: list[int]) -> int | None:
    """A point of the scale from a form or JSON value ("4", 4, 4.0 -> 4); None for anything else.

    One rule for every questionnaire: a whole number on the scale. 4.0 is accepted because JSON
    clients send numbers as floats; 4.5, True and "four" are not.
    """
    if isinstance(raw, bool):
        return None
    if isinstance(raw, float):
        score = int(raw) if raw.is_integer() else None
    else:
        try:
            score = int(str(raw).strip())
        except ValueError:
            return None
    return score if score in scale else None


def _choose(scale: list[int]) -> str:
    if scale == list(range(scale[0], scale[-1] + 1)):
        return f"choose a rating from {scale[0]} to {scale[-1]}"
    return f"choose one of {', '.join(map(str, scale))}"


class QuestionnaireTaskType(TaskType, GradesGold, HasSubset, GroupsFields):
    """What every preset shares; a preset is an instance of one of the subclasses below, which say
    where its items come from. Ratings are checked by agreement and flags, not by votes."""

    template = "annotation/tasks/questionnaire.html"
    agreement_level = "ordinal"

    def __init__(self, *, key, label, questions, subset_threshold=None, rates_dialogs=False):
        self.key, self.label = key, label
        self.rates_dialogs = rates_dialogs  # payloads are whole dialogs {"dialog": [...]}, not a context and a response
        self.settings_help = {
            "questions": (
                [dict(q) for q in questions],
                "The questions, each {name, label, help, anchors: one label per point of the scale, values: "
                "optional numbers of the points (1..n by default), shows_knowledge: whether the reference "
                "knowledge is needed to answer it, allows_na: whether N/A (with a written reason) may be "
                "answered; N/A is left out of means and agreement}.",
            ),
            "subset_threshold": (
                subset_threshold,
                "Items whose mean score over every question and worker is above this form a subset to "
                "download (CGoDial's hard test subset: 2.5); empty for none. Questions on different scales "
                "have no such mean, so their items form no subset.",
            ),
        }

    def clean_settings(self, settings):
        cleaned = super().clean_settings(settings)
        questions = clean_questions(cleaned["questions"])
        threshold = cleaned["subset_threshold"]
        if threshold is not None:
            low = min(min(scale_of(q)) for q in questions)
            high = max(max(scale_of(q)) for q in questions)
            if not isinstance(threshold, (int, float)) or isinstance(threshold, bool) or not low <= threshold < high:
                raise TaskTypeSettingsError({"subset_threshold": f"a number from {low} up to (not including) {high}, or empty"})
        return {"questions": questions, "subset_threshold": threshold}

    # --- Items ------------------------------------------------------------------------------------

    def build_payload(self, source) -> dict:
        return clean_dialog_payload(source.payload) if self.rates_dialogs else clean_payload(source.payload)

    # --- Responses --------------------------------------------------------------------------------

    def _questions(self, settings) -> list:
        """The job's questions, or the preset's when the job gives none."""
        return settings.get("questions") or default_settings(self)["questions"]

    def page_context(self, item, slot, settings):
        # The page's key hint names N/A only where a question offers it.
        return {"offers_na": any(q.get("allows_na") for q in self._questions(settings))}

    def answer_fields(self, settings):
        fields = []
        for q in self._questions(settings):
            scale = scale_of(q)
            fields.append({
                "name": q["name"],
                "label": q["label"],
                "help": q.get("help", ""),
                "choices": {v: a for v, a in zip(scale, q["anchors"], strict=True)},
                "anchors": [{"value": v, "label": a, "words": words_beside_number(v, a)} for v, a in zip(scale, q["anchors"], strict=True)],
                "shows_knowledge": q.get("shows_knowledge", False),
                "allows_na": q.get("allows_na", False),
            })
            if q.get("allows_na"):  # a text field of its own, so pages, the API and exports carry it
                fields.append({
                    "name": f"{q['name']}_na_reason", "label": f"{q['label']}: why N/A",
                    "help": "Only with N/A: why the question does not apply.", "na_reason_for": q["name"],
                })
        return fields

    def validate(self, payload: Mapping, settings: Mapping, answers: Mapping) -> tuple[dict, list[Problem]]:
        cleaned: dict[str, Any] = {}
        problems: list[Problem] = []
        for f in self.answer_fields(settings):
            if "na_reason_for" in f:
                continue  # read with its question
            scale = list(f["choices"])
            raw = answers.get(f["name"], "")
            if f["allows_na"] and raw == NA:
                reason, found = clean_text(answers.get(f"{f['name']}_na_reason", ""), f"{f['name']}_na_reason", f"{f['label']}: N/A reason", MAX_NA_REASON)
                problems += found
                if reason is not None and not reason:
                    problems.append(Problem(f"{f['name']}_na_reason", "required", f"{f['label']}: say why it does not apply."))
                cleaned[f["name"]], cleaned[f"{f['name']}_na_reason"] = None, reason or ""
                continue
            score = parse_score(raw, scale)
            if score is None:
                also = " or N/A with a reason" if f["allows_na"] else ""
                problems.append(Problem(f["name"], "required", f"{f['label']}: {_choose(scale)}{also}."))
                continue
            cleaned[f["name"]] = score
        return cleaned, problems

    def form_rows(self, rows, answers, problems):
        """A question that allows N/A carries its reason's text and problems in its own row, where
        the page shows the reason's box."""
        return [
            {**row, "problems": row["problems"] + list(problems.get(f"{row['name']}_na_reason", [])),
             "na_reason": answers.get(f"{row['name']}_na_reason", "")} if row.get("allows_na") else {**row, "na_reason": ""}
            for row in rows
        ]

    def grade_gold(self, gold: Mapping, answers: Mapping) -> bool:
        """A gold score is met within one point: scores are judgements, not facts."""
        return all(
            isinstance(answers.get(k), int) and abs(answers[k] - int(v)) <= 1 for k, v in gold.items()
        )

    # --- Combining and evidence -------------------------------------------------------------------

    def combine(self, answer_rows, settings):
        """Per question the mean score, and the mean over every question and worker (`mean`) when
        the questions share one scale. Questions on different scales (FED's 1-2, 1-3, 1-5) are not
        averaged together: `mean` is then None, `mean_<low>_<high>` is the mean per scale and
        `mean_normalised` the mean of every answer mapped to 0-1 ((score - low) / (high - low))."""
        out: dict = {}
        questions = list(self._questions(settings))
        names = [q["name"] for q in questions]
        scales = {q["name"]: (min(scale_of(q)), max(scale_of(q))) for q in questions}
        for name in names:
            scores = [row[name] for row in answer_rows if isinstance(row.get(name), int)]
            out[name] = round(mean(scores), 4) if scores else None
        answers = [(row[n], scales[n]) for row in answer_rows for n in names if isinstance(row.get(n), int)]
        out.update(_overall_means(answers, set(scales.values())))
        out["responses"] = len(answer_rows)
        return out

    def in_subset(self, combined: Mapping, settings: Mapping) -> bool | None:
        """Whether an item belongs to the job's subset; None when the job defines no subset."""
        threshold = settings.get("subset_threshold")
        if threshold is None:
            return None
        return combined.get("mean") is not None and combined["mean"] > threshold

    def subject_of(self, payload):
        if self.rates_dialogs:
            return " ".join(turn["text"] for turn in payload.get("dialog", []))
        return str(payload.get("utterance") or payload.get("response") or "")


class CorpusQuestionnaire(QuestionnaireTaskType, FromCorpusTurns):
    """A questionnaire about corpus turns (of `source_speaker`)."""

    def __init__(self, *, source_speaker=None, **preset):
        super().__init__(**preset)
        self.source_speaker = source_speaker

    def build_payload(self, source) -> dict:
        return {"utterance": source.text, "slot_values": [sv["value"] for sv in source.slot_values]}


class PayloadQuestionnaire(QuestionnaireTaskType, FromPayloads, OrdersClaims):
    """A questionnaire about payloads (a campaign's responses, FED's dialogs), each rater in their
    own rotation of the items."""

    def __init__(self, **preset):
        super().__init__(**preset)
        self.payload_file = DIALOG_PAYLOAD_FILE if self.rates_dialogs else RESPONSE_PAYLOAD_FILE

    def claim_start(self, job, worker) -> int | None:
        """Raters of a campaign meet its (shuffled) items each in their own rotation, so order effects
        do not fall on the same items for every rater (issue 4: order randomised per rater).

        The offset is a stable hash of (job, worker) modulo the job's span of positions: the same
        rater gets the same order on every claim and after a restart (hashlib, not Python's salted
        `hash`). The span is the highest position + 1, read from the (job, position) unique index.
        """
        from django.db.models import Max  # late: task-type modules import no models when they load

        from ..models import Item

        highest = Item.objects.filter(job=job).aggregate(m=Max("position"))["m"]
        if highest is None:
            return None
        return rotation_offset(job.pk, worker.pk, highest + 1)

    def claim_start_values(self, job, worker):
        """The rater's hash, in two 32-bit halves: its 64 bits do not fit a signed integer."""
        high, low = divmod(rotation_hash(job.pk, worker.pk), HALF)
        return {"hash_high": high, "hash_low": low}

    def claim_start_expression(self, job_id, worker_id, *, hash_high, hash_low):
        """`claim_start` in SQL, its span read in the claim's own statement (NULL without items):
        h mod s = ((high mod s) * (2^32 mod s) + low) mod s, within 63 bits for any position."""
        from django.db.models import BigIntegerField, Subquery, Value

        from ..models import Item

        def big(value):  # 64-bit on the server: a prepared statement binds each value with its field's type
            return Value(value, output_field=BigIntegerField())

        highest = Item.objects.filter(job_id=job_id).order_by("-position").values("position")[:1]
        span = Subquery(highest, output_field=BigIntegerField()) + big(1)
        return ((big(hash_high) % span) * (big(HALF) % span) + big(hash_low)) % span


class RatingQuestionnaire(PayloadQuestionnaire, FeedsRatings):
    """A payload questionnaire whose counted responses become evaluation ratings (DSTC9's Likert)."""


RESPONSE_PAYLOAD_FILE = (
    'Responses to rate: a JSONL file, one a line: {"context": [{"speaker": "user", "text": "..."}], '
    '"response": "...", "knowledge": [{"entity": "...", "title": "...", "body": "..."}]}; knowledge is optional. '
    "No system name: raters never learn it."
)
DIALOG_PAYLOAD_FILE = (
    'Dialogs to rate: a JSONL file, one a line: {"dialog": [{"speaker": "user", "text": "..."}, '
    '{"speaker": "system", "text": "..."}]}. No system name: raters never learn it.'
)


HALF = 2**32


def rotation_hash(job_id: int, worker_id: int) -> int:
    """The stable 64-bit hash of one rater on one job that places their rotation. Pure."""
    digest = hashlib.sha256(f"quorum-order:{job_id}:{worker_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def rotation_offset(job_id: int, worker_id: int, span: int) -> int:
    """A stable offset in [0, span) for one rater on one job. Pure."""
    return rotation_hash(job_id, worker_id) % span if span > 0 else 0


def clean_context(context) -> list[dict]:
    """A dialog context [{speaker: user|system, text}], checked and cut to size. Pure."""
    if not isinstance(context, list) or not context:
        raise PayloadError("'context' must be a non-empty list of {speaker, text}")
    turns = []
    for index, turn in enumerate(context):
        if not isinstance(turn, Mapping) or turn.get("speaker") not in SPEAKERS or not isinstance(turn.get("text"), str):
            raise PayloadError(f"context turn {index}: must be {{speaker: user|system, text}}")
        turns.append({"speaker": turn["speaker"], "text": turn["text"][:MAX_TEXT]})
    return turns


def clean_dialog_payload(payload) -> dict:
    """Check a whole-dialog payload {"dialog": [{speaker, text}]} and return it normalised. Pure.
    Nothing else is accepted: no system identity may reach what raters' pages are built from."""
    if not isinstance(payload, Mapping):
        raise PayloadError("a payload must be an object {dialog: [{speaker, text}]}")
    unknown = set(payload) - {"dialog"}
    if unknown:
        raise PayloadError(f"unknown payload key(s) {', '.join(sorted(unknown))}; only dialog")
    try:
        return {"dialog": clean_context(payload.get("dialog"))}
    except PayloadError as exc:
        raise PayloadError(str(exc).replace("'context'", "'dialog'").replace("context turn", "dialog turn")) from None


def clean_payload(payload) -> dict:
    """Check a context-response payload (see the module docstring) and return it normalised. Pure."""
    if not isinstance(payload, Mapping):
        raise PayloadError("a payload must be an object {context, response, knowledge}")
    unknown = set(payload) - {"context", "response", "knowledge"}
    if unknown:
        # Anything else would be shown to nobody but stored with the item; refuse it so that no
        # system identity slips into what raters' pages are built from.
        raise PayloadError(f"unknown payload key(s) {', '.join(sorted(unknown))}; only context, response, knowledge")
    turns = clean_context(payload.get("context"))
    response = payload.get("response")
    if not isinstance(response, str) or not response.strip():
        raise PayloadError("'response' must be a non-empty text")
    knowledge = payload.get("knowledge", [])
    if not isinstance(knowledge, list) or any(
        not isinstance(k, Mapping) or not isinstance(k.get("body"), str) for k in knowledge
    ):
        raise PayloadError("'knowledge' must be a list of {entity, title, body}")
    snippets = [
        {"entity": str(k.get("entity") or ""), "title": str(k.get("title") or ""), "body": k["body"][:MAX_TEXT]}
        for k in knowledge
    ]
    return {"context": turns, "response": response.strip()[:MAX_TEXT], "knowledge": snippets}


register(RatingQuestionnaire(
    key="likert", label="Rate responses on 1-5 scales (DSTC9 human evaluation)", questions=DSTC9_QUESTIONS,
))
register(CorpusQuestionnaire(
    key="hard_score", label="Score how hard items are (CGoDial hard test subset)", questions=HARD_SCORE_QUESTIONS,
    source_speaker="user", subset_threshold=2.5,
))
register(PayloadQuestionnaire(
    key="fed_dialog", label="FED dialog-level questions about a whole dialog (DSTC9 Track 3)", questions=FED_DIALOG_QUESTIONS,
    rates_dialogs=True,
))
register(PayloadQuestionnaire(
    key="fed_turn", label="FED turn-level questions about a response (DSTC9 Track 3)", questions=FED_TURN_QUESTIONS,
))


def _rounded_mean(values: list) -> float | None:
    return round(mean(values), 4) if values else None


def _overall_means(answers: list[tuple[int, tuple[int, int]]], scales: set) -> dict:
    """The mean over every answer when the questions share one scale; else `mean` None, a mean per
    scale (`mean_<low>_<high>`) and every answer mapped to 0-1 (`mean_normalised`)."""
    if len(scales) <= 1:
        return {"mean": _rounded_mean([v for v, _ in answers])}
    out: dict = {"mean": None}
    for low, high in sorted(scales):
        out[f"mean_{low}_{high}"] = _rounded_mean([v for v, scale in answers if scale == (low, high)])
    out["mean_normalised"] = _rounded_mean([(v - low) / (high - low) for v, (low, high) in answers if high > low])
    return out
