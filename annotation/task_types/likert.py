"""Likert rating of one response in its dialog: a 1-5 score per question, with anchored labels.

PROTOCOLS.md section 2 (DSTC9 Track 1 human evaluation): Appropriateness and Accuracy, each on a
1-5 scale; the reference knowledge is shown for Accuracy. Items are not made from corpus turns but
from payloads built by the caller (`annotation.services.payload_jobs.create_payload_job`), so the
payload carries everything the rater sees and nothing else (no system identity).

Payload: {"context": [{"speaker": "user"|"system", "text"}], "response": "...",
"knowledge": [{"entity", "title", "body"}]}. The context ends with the user turn the response
answers; the knowledge is the reference knowledge of that turn.
"""
import hashlib
from collections.abc import Mapping

from .base import Problem, TaskType, TaskTypeSettingsError, register

SCALE = (1, 2, 3, 4, 5)
SPEAKERS = ("user", "system")
MAX_QUESTIONS = 6
MAX_TEXT = 5000

#: DSTC9's two questions with anchored labels (one label per point of the scale).
DEFAULT_QUESTIONS = [
    {
        "name": "appropriateness",
        "label": "Appropriateness",
        "help": "How well is the response naturally connected to the conversation?",
        "anchors": [
            "Not appropriate at all: unrelated or makes no sense here",
            "Mostly inappropriate",
            "Somewhat appropriate",
            "Mostly appropriate",
            "Completely appropriate: a natural next turn",
        ],
        "shows_knowledge": False,
    },
    {
        "name": "accuracy",
        "label": "Accuracy",
        "help": "How accurate is the response given the reference knowledge shown?",
        "anchors": [
            "Not accurate at all: contradicts the knowledge",
            "Mostly inaccurate",
            "Partly accurate",
            "Mostly accurate",
            "Completely accurate: fully supported by the knowledge",
        ],
        "shows_knowledge": True,
    },
]


class PayloadError(ValueError):
    """A payload that the Likert page cannot show; the message says what is wrong."""


def default_question(name: str) -> dict | None:
    """The built-in wording of a question, or None if Quorum has none for that name."""
    return next((dict(q) for q in DEFAULT_QUESTIONS if q["name"] == name), None)


class LikertTaskType(TaskType):
    key = "likert"
    label = "Rate responses on 1-5 scales (DSTC9 human evaluation)"
    template = "annotation/tasks/likert.html"
    agreement_level = "ordinal"
    supports_voting = False  # ratings are checked by agreement and flags, not by votes
    #: Items come from payloads given by the caller, never from corpus turns.
    builds_from_payloads = True
    settings_help = {
        "questions": (
            [dict(q) for q in DEFAULT_QUESTIONS],
            "The questions rated from 1 to 5: each {name, label, help, anchors: five labels from 1 to 5, "
            "shows_knowledge: whether the reference knowledge is needed to answer it}.",
        ),
    }

    def clean_settings(self, settings):
        cleaned = super().clean_settings(settings)
        questions = cleaned["questions"]
        if not isinstance(questions, list) or not 1 <= len(questions) <= MAX_QUESTIONS:
            raise TaskTypeSettingsError({"questions": f"give 1 to {MAX_QUESTIONS} questions"})
        out, names = [], set()
        for number, q in enumerate(questions, start=1):
            where = f"question {number}"
            if not isinstance(q, Mapping):
                raise TaskTypeSettingsError({"questions": f"{where}: must be an object {{name, label, help, anchors}}"})
            name, label, anchors = q.get("name"), q.get("label"), q.get("anchors")
            if not isinstance(name, str) or not name.isidentifier():
                raise TaskTypeSettingsError({"questions": f"{where}: 'name' must be a short identifier such as 'accuracy'"})
            if name in names:
                raise TaskTypeSettingsError({"questions": f"{where}: the name {name!r} is used twice"})
            if not isinstance(label, str) or not label.strip():
                raise TaskTypeSettingsError({"questions": f"{where}: 'label' must be a non-empty text"})
            if not isinstance(anchors, list) or len(anchors) != len(SCALE) or any(not isinstance(a, str) or not a.strip() for a in anchors):
                raise TaskTypeSettingsError({"questions": f"{where}: 'anchors' must be {len(SCALE)} non-empty labels, for 1 to {len(SCALE)}"})
            unknown = set(q) - {"name", "label", "help", "anchors", "shows_knowledge"}
            if unknown:
                raise TaskTypeSettingsError({"questions": f"{where}: unknown key(s) {', '.join(sorted(unknown))}"})
            names.add(name)
            out.append(
                {
                    "name": name,
                    "label": label.strip(),
                    "help": str(q.get("help") or "").strip(),
                    "anchors": [a.strip() for a in anchors],
                    "shows_knowledge": bool(q.get("shows_knowledge", False)),
                }
            )
        cleaned["questions"] = out
        return cleaned

    def source_turns(self, turns):
        from ..services.jobs import JobError  # late: services.jobs imports the registry

        raise JobError(
            "a Likert job is not made from corpus turns: build it from payloads "
            "(annotation.services.payload_jobs.create_payload_job, or an evaluation campaign)",
            field="task_type",
        )

    def build_payload(self, source) -> dict:
        """`source.payload` checked and normalised; PayloadError says what is wrong."""
        return clean_payload(source.payload)

    def answer_fields(self, settings):
        return [
            {
                "name": q["name"],
                "label": q["label"],
                "help": q["help"],
                "choices": SCALE,
                "anchors": [{"value": v, "label": a} for v, a in zip(SCALE, q["anchors"])],
                "shows_knowledge": q["shows_knowledge"],
            }
            for q in settings.get("questions", DEFAULT_QUESTIONS)
        ]

    def validate(self, payload: Mapping, settings: Mapping, answers: Mapping) -> tuple[dict, list[Problem]]:
        cleaned, problems = {}, []
        for f in self.answer_fields(settings):
            raw = answers.get(f["name"], "")
            score = None
            if not isinstance(raw, bool) and not (isinstance(raw, float) and not raw.is_integer()):
                try:
                    score = int(str(raw).strip()) if not isinstance(raw, float) else int(raw)
                except ValueError:
                    score = None
            if score not in SCALE:
                problems.append(Problem(f["name"], "required", f"{f['label']}: choose a rating from 1 to 5."))
                continue
            cleaned[f["name"]] = score
        return cleaned, problems

    def grade_gold(self, gold: Mapping, answers: Mapping) -> bool:
        """A gold rating is met within one point: ratings are judgements, not facts."""
        return all(abs(int(answers.get(k, 0)) - int(v)) <= 1 for k, v in gold.items())

    def text_of(self, answers: Mapping) -> str:
        return ""  # ratings have no free text

    def claim_start(self, job, worker) -> int | None:
        """Each rater meets the (shuffled) items in their own rotation, so order effects do not fall
        on the same items for every rater (issue 4: order randomised per rater).

        The offset is a stable hash of (job, worker) modulo the job's span of positions: the same
        rater gets the same order on every claim and after a restart (hashlib, not Python's salted
        `hash`). The span is the highest position + 1, read from the (job, position) unique index;
        for payload jobs it is the item count (positions 0..n-1; gold items are appended after).
        """
        from django.db.models import Max

        from ..models import Item  # late: task-type modules import no models when they load

        highest = Item.objects.filter(job=job).aggregate(m=Max("position"))["m"]
        if highest is None:
            return None
        return rotation_offset(job.pk, worker.pk, highest + 1)


def rotation_offset(job_id: int, worker_id: int, span: int) -> int:
    """A stable offset in [0, span) for one rater on one job. Pure."""
    digest = hashlib.sha256(f"quorum-order:{job_id}:{worker_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % span if span > 0 else 0


def clean_payload(payload) -> dict:
    """Check a Likert payload (see the module docstring) and return it normalised. Pure."""
    if not isinstance(payload, Mapping):
        raise PayloadError("a payload must be an object {context, response, knowledge}")
    unknown = set(payload) - {"context", "response", "knowledge"}
    if unknown:
        # Anything else would be shown to nobody but stored with the item; refuse it so that no
        # system identity slips into what raters' pages are built from.
        raise PayloadError(f"unknown payload key(s) {', '.join(sorted(unknown))}; only context, response, knowledge")
    context = payload.get("context")
    if not isinstance(context, list) or not context:
        raise PayloadError("'context' must be a non-empty list of {speaker, text}")
    turns = []
    for index, turn in enumerate(context):
        if not isinstance(turn, Mapping) or turn.get("speaker") not in SPEAKERS or not isinstance(turn.get("text"), str):
            raise PayloadError(f"context turn {index}: must be {{speaker: user|system, text}}")
        turns.append({"speaker": turn["speaker"], "text": turn["text"][:MAX_TEXT]})
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


register(LikertTaskType())
