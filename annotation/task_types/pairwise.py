"""Pairwise comparison (ACUTE-Eval style): two outputs of different systems for the same context; the
worker picks the better one on a named question, with an optional tie and a reason.

Payload: {"context": [{speaker, text}], "instance": id of the context (optional; pairs of one
context are resampled together by the ranking's bootstrap), "a": {"system", "text"},
"b": {"system", "text"}}. The systems are never shown: the page shows the two texts as "Response 1"
and "Response 2", in an order drawn per worker and item (`page_context`), and the response records
which output was on the left, so position bias can be measured. Answers: {"winner": "a" | "b" |
"tie", "left": "a" | "b", "reason": text}. Evaluation ranks the systems from the counted responses
(`comparison`, then Bradley-Terry with bootstrap intervals in `evaluation.stats.bradley_terry`).
"""
import hashlib
from collections.abc import Mapping

from .base import PayloadError, Problem, TaskType, TaskTypeSettingsError, clean_text
from .capabilities import ComparesSystems, FromPayloads
from .questionnaire import MAX_TEXT, clean_context
from .registration import register

SIDES = ("a", "b")
TIE = "tie"
MAX_REASON_CHARS = 1000
DEFAULT_QUESTION = "Which response is better as the system's next turn?"


def left_side(job_id: int, item_id: int, worker_id: int) -> str:
    """Which output a worker sees on the left for one item: a stable coin flip per (job, item,
    worker), so a reload shows the same order and every worker gets their own draw. Pure."""
    digest = hashlib.sha256(f"quorum-pair:{job_id}:{item_id}:{worker_id}".encode()).digest()
    return SIDES[digest[0] % 2]


class PairwiseTaskType(TaskType, FromPayloads, ComparesSystems):
    key = "pairwise"
    label = "Compare two systems' responses (ACUTE-Eval style pairwise comparison)"
    template = "annotation/tasks/pairwise.html"
    agreement_level = "nominal"
    payload_file = (
        'Pairs: a JSONL file, one pair a line: {"context": [{"speaker": "user", "text": "..."}], "instance": "ctx1", '
        '"a": {"system": "sys-A", "text": "..."}, "b": {"system": "sys-B", "text": "..."}}; a and b from two different '
        "systems; instance (optional) names the context, so its pairs are resampled together."
    )
    settings_help = {
        "question": (DEFAULT_QUESTION, "The question workers answer by picking one of the two responses."),
        "allow_tie": (True, "Offer 'Both are about as good' as an answer."),
        "reason_required": (False, "Require a reason for every choice (otherwise it is optional)."),
    }

    def clean_settings(self, settings):
        cleaned = super().clean_settings(settings)
        errors = {}
        if not isinstance(cleaned["question"], str) or not cleaned["question"].strip():
            errors["question"] = "a non-empty question"
        for name in ("allow_tie", "reason_required"):
            if not isinstance(cleaned[name], bool):
                errors[name] = "true or false"
        if errors:
            raise TaskTypeSettingsError(errors)
        cleaned["question"] = cleaned["question"].strip()
        return cleaned

    def build_payload(self, source) -> dict:
        payload = source.payload
        if not isinstance(payload, Mapping):
            raise PayloadError("a payload must be an object {context, a, b, instance}")
        unknown = set(payload) - {"context", "a", "b", "instance"}
        if unknown:
            raise PayloadError(f"unknown payload key(s) {', '.join(sorted(unknown))}; only context, a, b, instance")
        outputs = {}
        for side in SIDES:
            output = payload.get(side)
            if not isinstance(output, Mapping) or not isinstance(output.get("system"), str) or not output["system"].strip():
                raise PayloadError(f"'{side}' must be {{system, text}} with a system name")
            if not isinstance(output.get("text"), str) or not output["text"].strip():
                raise PayloadError(f"'{side}': 'text' must be a non-empty text")
            outputs[side] = {"system": output["system"].strip(), "text": output["text"].strip()[:MAX_TEXT]}
        if outputs["a"]["system"] == outputs["b"]["system"]:
            raise PayloadError(f"'a' and 'b' are both from system {outputs['a']['system']!r}; a pair compares two different systems")
        instance = payload.get("instance", "")
        if not isinstance(instance, (str, int)) or isinstance(instance, bool):
            raise PayloadError("'instance' must be a text or a whole number naming the context")
        return {"context": clean_context(payload.get("context")), "instance": str(instance), **outputs}

    def answer_fields(self, settings):
        choices = {"a": "Response A is better", "b": "Response B is better"}
        if settings.get("allow_tie", True):
            choices[TIE] = "Both are about as good"
        required = settings.get("reason_required", False)
        return [
            {"name": "winner", "label": settings.get("question", DEFAULT_QUESTION), "help": "Pick the better response.", "choices": choices},
            {"name": "reason", "label": "Reason" if required else "Reason (optional)", "help": "What made the difference, in a few words."},
            # Filled by the page (page_context), not by the worker: which output was shown first.
            {"name": "left", "label": "Shown on the left", "help": "", "choices": {"a": "A", "b": "B"}, "hidden": True},
        ]

    def validate(self, payload: Mapping, settings: Mapping, answers: Mapping) -> tuple[dict, list[Problem]]:
        allowed = list(self.answer_fields(settings)[0]["choices"])
        winner, left = answers.get("winner", ""), answers.get("left", "")
        reason, problems = clean_text(answers.get("reason", "") or "", "reason", "Reason", MAX_REASON_CHARS)
        reason = reason or ""
        if winner not in allowed:
            # Starts with the question the page shows above the choices, so the worker finds what to fix.
            pick = "Pick the better response" + (" or say they are about as good." if TIE in allowed else ".")
            problems.append(Problem("winner", "required", f"{settings.get('question', DEFAULT_QUESTION)} {pick}"))
        if left not in SIDES:
            problems.append(Problem("left", "required", "Reload the page: the order in which the responses were shown is missing."))
        if settings.get("reason_required") and not reason:
            problems.append(Problem("reason", "required", "Reason: say in a few words what made the difference."))
        return {"winner": winner, "left": left, "reason": reason}, problems

    def page_context(self, item, slot, settings):
        left = left_side(slot.job_id, item.pk, slot.worker_id or 0)
        right = "b" if left == "a" else "a"
        shown = [(left, item.payload[left]["text"]), (right, item.payload[right]["text"])]
        return {"pair": [{"side": side, "number": n, "text": text} for n, (side, text) in enumerate(shown, start=1)], "left": left}

    def texts_of(self, answers, settings):
        return {}  # a reason is not a text to be original in: short reasons repeat honestly

    def combine(self, answer_rows, settings):
        """Votes for a, for b and ties; the majority winner; how often the left output was chosen."""
        counts = {side: sum(1 for r in answer_rows if r.get("winner") == side) for side in (*SIDES, TIE)}
        decided = [r for r in answer_rows if r.get("winner") in SIDES]
        top = max(counts, key=lambda k: (counts[k], k == TIE))
        return {
            "a": counts["a"], "b": counts["b"], "tie": counts[TIE],
            "winner": top if list(counts.values()).count(counts[top]) == 1 else TIE,
            "left_chosen": round(sum(1 for r in decided if r["winner"] == r.get("left")) / len(decided), 4) if decided else None,
            "responses": len(answer_rows),
        }

    def agreement_values(self, answers, settings):
        return {"winner": answers["winner"]} if answers.get("winner") else {}

    def review_view(self, payload, answers, settings):
        """The two outputs named A and B as the answer names them (the worker saw them as Response 1
        and 2, in the order recorded in `left`), and that order, so a reviewer can check the choice
        against what the worker saw."""
        view = super().review_view(payload, answers, settings)
        view["subject"] = f"A: {payload['a']['text']} | B: {payload['b']['text']}"
        view["shown"] = [row for row in view["shown"] if row["name"] != "left"]
        left = answers.get("left")
        if left in SIDES:
            right = "b" if left == "a" else "a"
            view["shown"].append({"name": "left", "label": "Shown on the left", "text": f"{left.upper()} as Response 1 (left), {right.upper()} as Response 2"})
        return view

    def subject_of(self, payload):
        return f"{payload['a']['text']} | {payload['b']['text']}"

    def comparison(self, payload, answers):
        if answers.get("winner") not in (*SIDES, TIE):
            return None
        return payload["a"]["system"], payload["b"]["system"], answers["winner"], payload.get("instance") or None

    def systems(self, payload):
        return payload["a"]["system"], payload["b"]["system"]

    def presentation(self, payload, answers):
        left = answers.get("left")
        return (left if left in SIDES else None), payload["a"]["text"], payload["b"]["text"]


register(PairwiseTaskType())
