"""Interactive evaluation (PROTOCOLS.md section 3: DSTC9 Track 2, RADDLE's human evaluation): the
worker is given a user goal, chats with a dialog system whose identity is hidden, ends the dialog
with Success or Fail (a reason on failure), then rates language understanding and response
appropriateness from 1 to 5, each with a reason.

Payload: {"goal": object (MultiWOZ goal shape), "goal_text": [sentences shown to the worker],
"goal_id": str, "endpoint": opaque id of the system, "relay": relay key (optional)}. The page
talks to the system through `/work/<token>/chat/` and `annotation.chat_relay`; whoever registered
the relay (evaluation) calls the system, records the turns, and shows a polite fallback for a turn
that failed. On submission the transcript is read back from the relay (`server_answers`), so a
response holds what was said: [{"role", "text", "failed", "offered"}].

The chat's language (the `lang` of its messages and box, `chat_language`) is the one the job
declares (setting `language`), else what the goal's own words show; never guessed from the English
sentences Quorum writes for a goal without them. A chat job has no corpus to ask.
"""
from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from typing import Any

from .. import chat_relay
from ..text.languages import UNDETERMINED, LanguageTagError, detected_language, is_right_to_left, stated_tag
from .base import PayloadError, Problem, TaskType, TaskTypeSettingsError
from .capabilities import FromPayloads, HoldsBackItems, LevelsByQuestion, OrdersClaims, RelaysChat
from .registration import register

OUTCOMES = {"success": "Success: the system did what my goal asked", "fail": "Fail: it did not"}
UNDERSTANDING = {1: "Doesn't understand at all", 2: "Understands a little", 3: "Understands somewhat", 4: "Understands mostly", 5: "Understands very well"}
APPROPRIATENESS = {1: "Not appropriate at all", 2: "Slightly appropriate", 3: "Somewhat appropriate", 4: "Very appropriate", 5: "Extremely appropriate"}
RATINGS = {"understanding": ("Language understanding", UNDERSTANDING), "appropriateness": ("Response appropriateness", APPROPRIATENESS)}
MAX_REASON_CHARS = 1000
# The page's labels; a refusal starts with the label of the field it is about, so the worker finds it.
OUTCOME_LABEL = "Did the dialog succeed?"
OUTCOME_REASON_LABEL = "Why (required on Fail)"


def _reason_label(rating_label: str) -> str:
    return f"{rating_label}: reason"
SYSTEM_STOPPED = "The system stopped answering."
#: Quorum's own replies to a message it did not send (the system was paused, or busy with as many
#: calls as allowed): failed turns of the transcript, but no call of the system's that failed. A
#: stored transcript keeps no error, and the relay answers exactly these cases with these texts.
NOT_CALLED = (chat_relay.UNAVAILABLE, chat_relay.BUSY)


class ChatTaskType(TaskType, FromPayloads, RelaysChat, HoldsBackItems, OrdersClaims, LevelsByQuestion):
    key = "chat"
    label = "Chat with a dialog system towards a goal, then judge it (DSTC9 Track 2 interactive evaluation)"
    template = "annotation/tasks/chat.html"
    agreement_level = "ordinal"  # the 1-5 ratings; the outcome is nominal (question_level)
    settings_help = {
        "min_user_turns": (1, "How many messages the worker must send before ending the dialog."),
        "language": ("", (
            'The language workers and systems chat in, a BCP 47 tag such as "zh" (Chinese) or "en" (English): the chat page '
            "marks the messages and the message box with it, for fonts, line breaking and a screen reader's voice (and right "
            "to left for Arabic, Hebrew...). Blank: told from the goals' own words where they show it; the sentences Quorum "
            "writes for a goal without its own are English whatever the systems speak, so the messages are then left unmarked."
        )),
    }

    def clean_settings(self, settings):
        cleaned = super().clean_settings(settings)
        errors = {}
        turns = cleaned["min_user_turns"]
        if not isinstance(turns, int) or isinstance(turns, bool) or not 1 <= turns <= 50:
            errors["min_user_turns"] = "a whole number from 1 to 50"
        language = cleaned["language"]
        try:
            if not isinstance(language, str):
                raise LanguageTagError('a BCP 47 tag such as "zh" (Chinese), or blank')
            cleaned["language"] = stated_tag(language)
        except LanguageTagError as exc:
            errors["language"] = str(exc).rstrip(".")  # the job form ends each message with its own full stop
        if errors:
            raise TaskTypeSettingsError(errors)
        return cleaned

    def build_payload(self, source) -> dict:
        payload = source.payload
        if not isinstance(payload, Mapping):
            raise PayloadError("a payload must be an object {goal, goal_text, goal_id, endpoint}")
        unknown = set(payload) - {"goal", "goal_text", "goal_id", "endpoint", "relay"}
        if unknown:
            raise PayloadError(f"unknown payload key(s) {', '.join(sorted(unknown))}")
        if not isinstance(payload.get("goal"), Mapping):
            raise PayloadError("'goal' must be an object (MultiWOZ goal shape)")
        lines = payload.get("goal_text")
        if not isinstance(lines, list) or not lines or not all(isinstance(x, str) and x.strip() for x in lines):
            raise PayloadError("'goal_text' must be a non-empty list of sentences shown to the worker")
        endpoint = payload.get("endpoint")
        if not isinstance(endpoint, str) or not endpoint.strip():
            raise PayloadError("'endpoint' must name the system (an opaque id)")
        return {
            "goal": dict(payload["goal"]), "goal_text": [x.strip() for x in lines], "goal_id": str(payload.get("goal_id", "")),
            "endpoint": endpoint.strip(), "relay": str(payload.get("relay") or chat_relay.DEFAULT_RELAY),
        }

    def answer_fields(self, settings):
        fields = [
            {"name": "outcome", "label": OUTCOME_LABEL, "help": "Success if the system found (and booked) what your goal asks; otherwise Fail.", "choices": OUTCOMES},
            {"name": "outcome_reason", "label": OUTCOME_REASON_LABEL, "help": "What went wrong, or what made it work."},
        ]
        for name, (label, anchors) in RATINGS.items():
            fields.append({"name": name, "label": label, "help": f"1 = {anchors[1]}, 5 = {anchors[5]}.", "choices": {str(k): v for k, v in anchors.items()}})
            fields.append({"name": f"{name}_reason", "label": _reason_label(label), "help": "Say in a few words why."})
        return fields

    def server_answers(self, item, slot, settings):
        try:
            relay = chat_relay.relay_for(item.payload)
        except chat_relay.RelayUnavailable:
            return {"transcript": []}
        recorded = relay.transcript(item.payload["endpoint"], chat_relay.session_key(slot))
        return {"transcript": recorded["turns"], "system_unavailable": bool(recorded.get("unavailable"))}

    def held_back(self, job):
        # A system that kept failing gets no new chats. Its relay's query is read inside the claim's
        # statement (never asked whether it is empty: that would be the read it saves).
        paused = chat_relay.paused_endpoints()
        if isinstance(paused, AbstractSet):
            return {"payload__endpoint__in": sorted(paused)} if paused else None
        return {"payload__endpoint__in": paused}

    def claim_start(self, job, worker) -> int | None:
        """A worker is not given the goal of their last chat again next (they would know it): their
        claim starts at the first open item with another goal; the items are interleaved by goal and
        system already, so this rarely moves far. None (the plain order) for a first chat."""
        # The whole payload, not its goal_id key: SQLite reads a key holding "3" back as the number 3,
        # which then matches no stored "3", and a worker got the same goal every time.
        payload = _latest_claims(job.pk, worker.pk).values_list("item__payload", flat=True).first()
        last = (payload or {}).get("goal_id")
        if not last:
            return None
        return _first_open_position(job.pk, last).values_list("position", flat=True).first() or None

    def claim_start_values(self, job, worker):
        return {}  # the ids suffice: the last goal is read in the claim's statement

    def claim_start_expression(self, job_id, worker_id):
        """`claim_start` in SQL: the last goal and the first open item without it read in the claim's
        own statement. No last chat, or one without a goal id, is NULL: the plain order, and so is 0."""
        from django.db.models import JSONField, Subquery, Value
        from django.db.models.functions import NullIf

        last = NullIf(Subquery(_latest_claims(job_id, worker_id).values("item__payload__goal_id")[:1]), Value("", output_field=JSONField()))
        return Subquery(_first_open_position(job_id, last).values("position")[:1])

    def validate(self, payload, settings, answers):
        # The system stopped answering (the relay paused it; one failed turn is only a retry): the
        # worker ends the dialog as Fail without ratings and is not held to the minimum length; it
        # counts as a failed dialog of the system. Set by the server.
        unavailable = answers.get("system_unavailable") is True
        cleaned, problems = _transcript(answers.get("transcript") or [], settings.get("min_user_turns", 1), unavailable)
        outcome = answers.get("outcome", "") or ("fail" if unavailable else "")
        if outcome not in OUTCOMES:
            problems.append(Problem("outcome", "required", f"{OUTCOME_LABEL} Choose Success or Fail."))
        cleaned["outcome"] = outcome
        problems += _reasons(answers, cleaned)
        if outcome == "fail" and not cleaned["outcome_reason"]:
            if unavailable:
                cleaned["outcome_reason"] = SYSTEM_STOPPED
            else:
                problems.append(Problem("outcome_reason", "required", f"{OUTCOME_REASON_LABEL}: say what went wrong."))
        problems += _ratings(answers, cleaned, unavailable)
        return cleaned, problems

    def page_context(self, item, slot, settings):
        goal_lines = item.payload.get("goal_text", [])
        # The goal's lines are in their own language (Quorum's sentences: English); the messages, the
        # box and the reasons in the chat's. These replace the work page's corpus-text language.
        goal_language = detected_language(goal_lines)
        language = chat_language(item.payload, settings)
        return {
            "goal_lines": goal_lines, "min_user_turns": settings.get("min_user_turns", 1),
            "max_message_chars": chat_relay.MAX_MESSAGE_CHARS,
            "goal_language": goal_language, "goal_rtl": is_right_to_left(goal_language),
            "text_language": language, "text_rtl": is_right_to_left(language),
        }

    def combine(self, answer_rows, settings):
        n = len(answer_rows)
        out = {"responses": n}
        out["success"] = round(sum(1 for r in answer_rows if r.get("outcome") == "success") / n, 4) if n else None
        for name in RATINGS:
            values = [r[name] for r in answer_rows if isinstance(r.get(name), int)]
            out[name] = round(sum(values) / len(values), 4) if values else None
        out["failed_calls"] = sum(failed_calls(r.get("transcript") or []) for r in answer_rows)
        return out

    def combined_column_help(self, settings):
        return {"failed_calls": (
            "the item's counted chats' calls to the system that failed (timed out, an error, a reply that broke the contract), "
            "as the interactive leaderboard's Failed calls (`failed_calls` in its CSV) counts them: Quorum's own replies while "
            "the system was paused or busy are failed turns of the transcript but not counted, since the system was not called "
            "(exports before 2026-11-28 named this column `failed_turns`)"
        )}

    def question_level(self, question, settings):
        # Success/Fail are two categories, not points of a scale: alpha is the same at either level
        # for two values, but the page said "ordinal", and the flags compared them "within one point".
        return "nominal" if question == "outcome" else self.agreement_level

    def agreement_values(self, answers, settings):
        values = {name: answers[name] for name in RATINGS if isinstance(answers.get(name), int)}
        if answers.get("outcome") in OUTCOMES:
            values["outcome"] = 1 if answers["outcome"] == "success" else 0
        return values

    def texts_of(self, answers, settings):
        return {}  # short reasons repeat honestly; the worker's own words are in the transcript

    def review_view(self, payload, answers, settings):
        view = super().review_view(payload, answers, settings)
        view["transcript"] = list(answers.get("transcript") or [])
        return view

    def subject_of(self, payload):
        return " ".join(payload.get("goal_text", []))


#: What `detected_language` says of text in Latin script (a guess: see annotation/text/languages.py).
_LATIN_GUESS = "en"


def chat_language(payload: Mapping, settings: Mapping) -> str:
    """The BCP 47 tag of the chat's messages: the job's declared `language`; else the goal lines'
    language when they are evidence of it; else UNDETERMINED (the page marks nothing rather than
    claim English). The lines are evidence when they are the goal's own words (its MultiWOZ
    `message`), or in a script Quorum never writes (Chinese, Arabic...). Latin script without
    a `message` may be the English sentences Quorum writes from a goal's constraints (and the
    script only guesses English), which tell nothing of the language the systems speak."""
    declared = settings.get("language") or ""
    if declared:
        return declared
    goal = payload.get("goal")
    found = detected_language(payload.get("goal_text", []))
    own_words = isinstance(goal, Mapping) and bool(goal.get("message"))
    if found == _LATIN_GUESS and not own_words:
        return UNDETERMINED
    return found


def failed_calls(transcript: list) -> int:
    """The transcript's failed turns that were calls to the system: the interactive leaderboard's
    "Failed calls" (`failed_calls`), which reads the same from the recorded conversation's errors."""
    return sum(1 for t in transcript if isinstance(t, Mapping) and t.get("failed") and t.get("text") not in NOT_CALLED)


def _latest_claims(job_id: int, worker_id: int):
    """The worker's claims in the job, latest first: the first one's goal they would know."""
    from ..models import Slot  # late: task-type modules import no models when they load

    return Slot.objects.filter(job_id=job_id, worker_id=worker_id).exclude(claimed_at=None).order_by("-claimed_at", "-pk")


def _first_open_position(job_id: int, last):
    """The job's open slots whose item has another goal than `last` (a value or an expression), first in position order."""
    from ..models import Slot

    return Slot.objects.filter(job_id=job_id, state=Slot.State.OPEN).exclude(item__payload__goal_id=last).order_by("position")


def _transcript(transcript: list, min_user_turns: int, unavailable: bool) -> tuple[dict[str, Any], list[Problem]]:
    """The transcript as stored, and a problem when the worker said too little (unless the system
    stopped answering, which `system_unavailable` records)."""
    problems = []
    said = sum(1 for t in transcript if isinstance(t, Mapping) and t.get("role") == "user")
    if said < min_user_turns and not unavailable:
        problems.append(Problem("transcript", "too_short", (
            f"Chat with the system first: send at least {min_user_turns} message{'' if min_user_turns == 1 else 's'} "
            f"({said} sent so far), then submit your judgement; or press Skip this item to leave it."
        )))
    cleaned: dict[str, Any] = {"transcript": [
        {"role": t.get("role"), "text": str(t.get("text", "")), "failed": bool(t.get("failed")), "offered": t.get("offered")}
        for t in transcript if isinstance(t, Mapping)
    ]}
    if unavailable:
        cleaned["system_unavailable"] = True
    return cleaned, problems


def _reasons(answers: Mapping, cleaned: dict) -> list[Problem]:
    """Each reason stripped into `cleaned`; a problem for one that is too long."""
    problems = []
    labels = {"outcome_reason": OUTCOME_REASON_LABEL, **{f"{r}_reason": _reason_label(label) for r, (label, _) in RATINGS.items()}}
    for name, label in labels.items():
        text = answers.get(name, "")
        text = text.strip() if isinstance(text, str) else ""
        if len(text) > MAX_REASON_CHARS:
            problems.append(Problem(name, "too_long", f"{label}: at most {MAX_REASON_CHARS} characters."))
        cleaned[name] = text
    return problems


def _ratings(answers: Mapping, cleaned: dict, unavailable: bool) -> list[Problem]:
    """Each rating (1 to 5, with its reason) into `cleaned`; none is needed when the system stopped."""
    problems = []
    for name, (label, anchors) in RATINGS.items():
        raw = answers.get(name, "")
        value = int(raw) if isinstance(raw, (int, str)) and str(raw).strip().isdigit() else None
        if value not in anchors and not (unavailable and raw in ("", None)):
            problems.append(Problem(name, "required", f"{label}: choose a rating from 1 to 5."))
        cleaned[name] = value if value in anchors else None
        if value is not None and not cleaned[f"{name}_reason"]:
            problems.append(Problem(f"{name}_reason", "required", f"{_reason_label(label)} missing: say in a few words why you gave this rating."))
    return problems


register(ChatTaskType())
