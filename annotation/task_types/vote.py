"""CGoDial quality voting: is this collected response recognizable, and its annotation unambiguous?

PROTOCOLS.md section 5. A vote job is made by `annotation.services.voting.enable_voting` on
another job, never from corpus turns: each of its items shows one response of that job (the item's
`subject_response`) to workers other than its author. The decision rule lives in the voting
service; this module only says what a vote is.

A response made of parts (a rewrite's four variants, each its own utterance of the test sets) is
voted on part by part: the vote job's `parts` setting lists them, the voter answers yes or no for
each (`vote__<part>`), and the stored answers keep every part's verdict (`parts`) beside the
overall one (`vote`: against when any part is). An answer with only `vote` (an API client that
judges the whole response) gives that verdict to every part.
"""
from collections.abc import Mapping
from typing import Any

from .base import Problem, TaskType, clean_text
from .capabilities import FromResponses
from .registration import register

FOR, AGAINST = "for", "against"
CHOICES = {
    FOR: "Yes: I can recognize what the user means, and the annotation is unambiguous",
    AGAINST: "No: it is not recognizable, or its annotation is ambiguous",
}
SHORT_CHOICES = {FOR: "Yes", AGAINST: "No"}
MAX_REASON_CHARS = 500


def part_field(name: str) -> str:
    return f"vote__{name}"
DEFAULT_QUESTION = "Is this rewrite recognizable as the user's request, with every slot value kept and nothing ambiguous?"


class VoteTaskType(TaskType, FromResponses):  # one item per response of the reviewed job (services.voting)
    key = "vote"
    label = "Vote on collected responses (CGoDial quality control)"
    template = "annotation/tasks/vote.html"
    agreement_level = "nominal"
    settings_help = {
        "question": (DEFAULT_QUESTION, "The question voters answer with yes or no for every response shown."),
        "parts": (
            [],
            "The parts of a response voted on one by one, [{name, label}] (for rewrites: the variants, set when "
            "voting is turned on); empty: one vote for the whole response.",
        ),
    }

    def answer_fields(self, settings):
        reason = {"name": "reason", "label": "Reason (optional)", "help": "What is wrong, if anything: it helps the writer and the builder."}
        parts = settings.get("parts") or []
        if not parts:
            return [{"name": "vote", "label": settings.get("question", DEFAULT_QUESTION), "help": "Choose yes or no.", "choices": CHOICES}, reason]
        return [
            *(
                {"name": part_field(part["name"]), "label": part["label"], "help": settings.get("question", DEFAULT_QUESTION), "choices": SHORT_CHOICES}
                for part in parts
            ),
            reason,
        ]

    def validate(self, payload: Mapping, settings: Mapping, answers: Mapping) -> tuple[dict, list[Problem]]:
        parts = [part["name"] for part in settings.get("parts") or []]
        overall = answers.get("vote", "")
        problems, verdicts = [], {}
        for name in parts:
            given = answers.get(part_field(name)) or overall  # a whole-response vote covers every part
            if not isinstance(given, str) or given.strip().lower() not in CHOICES:
                label = next(p["label"] for p in settings["parts"] if p["name"] == name)
                problems.append(Problem(part_field(name), "required", f"{label}: choose yes or no."))
                continue
            verdicts[name] = given.strip().lower()
        vote = overall
        if parts:
            vote = AGAINST if AGAINST in verdicts.values() else FOR
        elif not isinstance(vote, str) or vote.strip().lower() not in CHOICES:
            problems.append(Problem("vote", "required", "Vote: choose yes or no."))
            vote = ""
        reason, found = clean_text(answers.get("reason", "") or "", "reason", "Reason", MAX_REASON_CHARS)
        problems.extend(found)
        cleaned: dict[str, Any] = {"vote": vote.strip().lower(), "reason": reason or ""}
        if parts:
            cleaned["parts"] = verdicts
        return cleaned, problems

    def agreement_values(self, answers, settings):
        """Per part when the response is voted on part by part; the whole-response vote otherwise."""
        if answers.get("parts"):
            return {part_field(name): verdict for name, verdict in answers["parts"].items()}
        return {"vote": answers["vote"]} if answers.get("vote") in CHOICES else {}

    def texts_of(self, answers: Mapping, settings: Mapping) -> dict:
        return {}  # a reason is not a rewrite: short reasons ("fine") repeat honestly

    def subject_of(self, payload):
        return str(payload.get("utterance", ""))


register(VoteTaskType())
