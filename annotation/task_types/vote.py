"""CGoDial quality voting: is this collected response recognizable, and its annotation unambiguous?

PROTOCOLS.md section 5. A vote job is made by `annotation.services.voting.enable_voting` on
another job, never from corpus turns: each of its items shows one response of that job (the item's
`subject_response`) to workers other than its author. The decision rule lives in the voting
service; this module only says what a vote is.
"""
from collections.abc import Mapping

from .base import RESPONSES, Problem, TaskType, register

FOR, AGAINST = "for", "against"
CHOICES = {
    FOR: "Yes: I can recognize what the user means, and the annotation is unambiguous",
    AGAINST: "No: it is not recognizable, or its annotation is ambiguous",
}
MAX_REASON_CHARS = 500
DEFAULT_QUESTION = "Is this rewrite recognizable as the user's request, with every slot value kept and nothing ambiguous?"


class VoteTaskType(TaskType):
    key = "vote"
    label = "Vote on collected responses (CGoDial quality control)"
    template = "annotation/tasks/vote.html"
    agreement_level = "nominal"
    builds_from = RESPONSES  # one item per response of the reviewed job (services.voting)
    settings_help = {
        "question": (DEFAULT_QUESTION, "The question voters answer with yes or no for every response shown."),
    }

    def answer_fields(self, settings):
        return [
            {"name": "vote", "label": settings.get("question", DEFAULT_QUESTION), "help": "Choose yes or no.", "choices": CHOICES},
            {"name": "reason", "label": "Reason (optional)", "help": "What is wrong, if anything: it helps the writer and the builder."},
        ]

    def validate(self, payload: Mapping, settings: Mapping, answers: Mapping) -> tuple[dict, list[Problem]]:
        vote = answers.get("vote", "")
        reason = answers.get("reason", "") or ""
        problems = []
        if not isinstance(vote, str) or vote.strip().lower() not in CHOICES:
            problems.append(Problem("vote", "required", "Vote: choose yes or no."))
            vote = ""
        if not isinstance(reason, str):
            problems.append(Problem("reason", "type", "Reason: must be text."))
            reason = ""
        reason = reason.strip()
        if len(reason) > MAX_REASON_CHARS:
            problems.append(Problem("reason", "too_long", f"Reason: at most {MAX_REASON_CHARS} characters."))
        return {"vote": vote.strip().lower(), "reason": reason}, problems

    def text_of(self, answers: Mapping, settings: Mapping) -> str:
        return ""  # a reason is not a rewrite: short reasons ("fine") repeat honestly

    def subject_of(self, payload):
        return str(payload.get("utterance", ""))


register(VoteTaskType())
