"""The chat relay (annotation.chat_relay) for registered dialog systems, and interactive jobs.

Workers' turns reach a system through `SystemsRelay`, which the app's ready() registers: it calls
the system by the contract's client, records every turn (`ChatSession`, `ChatTurn`), and turns a
timeout or an error into a failed turn with a polite fallback for the worker. A system that keeps
failing is paused (`pause_if_failing`, rules in `systems/pausing.py`): no new chats go to it.
"""
import contextlib
import hashlib
from datetime import timedelta

from django.conf import settings
from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.db.models import Func, JSONField
from django.utils import timezone

from annotation import chat_relay
from annotation.models import Job
from annotation.services.jobs import JobError, launch_job
from annotation.services.payload_jobs import create_payload_job
from evaluation.errors import EvaluationInputError
from evaluation.interactive import goals as goal_rules
from evaluation.interactive import order as chat_order
from evaluation.interactive.services.systems import client_for, request_check
from evaluation.interactive.systems import pausing as pause_rules
from evaluation.interactive.systems.client import SystemClient, SystemFailure
from evaluation.models import ChatJobName, ChatSession, ChatTurn, DialogSystem, GoalSet

MAX_DIALOGS_PER_GOAL = 100


#: ChatTurn.error of a turn the relay answered itself because the system was paused.
PAUSED_ERROR = "system paused"
#: ChatTurn.error of a turn not sent because the system already had as many calls under way as
#: QUORUM_SYSTEM_MAX_CONCURRENT_CALLS allows (or all systems QUORUM_SYSTEMS_MAX_CONCURRENT_CALLS).
#: Like a paused turn, it does not count toward pausing: the calls under way do.
BUSY_ERROR = "system busy"
_NOT_COUNTED = (PAUSED_ERROR, BUSY_ERROR)


class _AsPayloadValue(Func):
    """A text column as the JSON value an item's payload key holding the same text compares to:
    jsonb on PostgreSQL; SQLite reads a payload key's string as text, so there the column as it is."""

    template = "%(expressions)s"
    output_field = JSONField()

    def as_postgresql(self, compiler, connection, **extra_context):
        return self.as_sql(compiler, connection, template="to_jsonb(%(expressions)s)", **extra_context)


def _client(system: DialogSystem) -> SystemClient:
    return client_for(system.url, system.secret)


def _take_slot(prefix: str, limit: int) -> str | None:
    """One of `limit` call slots in the shared cache (atomic `add`), or None when all are taken. A
    slot expires a little after the longest call, so one a killed process held comes back."""
    expires = int(settings.QUORUM_SYSTEM_TURN_TIMEOUT_SECONDS) + 5
    for index in range(max(limit, 0)):
        key = f"{prefix}:{index}"
        if cache.add(key, 1, expires):
            return key
    return None


@contextlib.contextmanager
def _call_slot(system_id):
    """Hold a call slot of the system and one of all systems for a call; SystemFailure(BUSY_ERROR)
    when either is full, so slow systems cannot take every web worker."""
    own = _take_slot(f"quorum:system-call:{system_id}", settings.QUORUM_SYSTEM_MAX_CONCURRENT_CALLS)
    every = _take_slot("quorum:system-call:all", settings.QUORUM_SYSTEMS_MAX_CONCURRENT_CALLS) if own else None
    try:
        if every is None:
            raise SystemFailure(BUSY_ERROR)
        yield
    finally:
        cache.delete_many([k for k in (own, every) if k])


def _transcript(session: ChatSession) -> dict:
    # Read as values, not model instances: the whole conversation is read back after every message.
    turns = list(session.turns.order_by("position").values("role", "text", "failed", "offered", "error"))
    # Only a paused system (the pausing rule: it kept failing) ends the dialog without ratings. One
    # failed turn is a retry: the worker sends the message again, and the dialog goes on.
    unavailable = any(t["error"] == PAUSED_ERROR for t in turns if t["role"] == "system") or DialogSystem.objects.filter(
        pk=session.system_id, paused_at__isnull=False
    ).exists()
    return {
        "turns": [{"role": t["role"], "text": t["text"], "failed": t["failed"], "offered": t["offered"]} for t in turns],
        "ended": bool(session.ended_reason), "unavailable": unavailable,
    }


def _lost_after():
    """How long an unanswered message blocks the next: longer than a call and its one retry can take."""
    return timedelta(seconds=2 * settings.QUORUM_SYSTEM_TURN_TIMEOUT_SECONDS + 5)


def _call(system_id, call):
    """Run one request to the system, outside any transaction, in one of its call slots:
    (reply, None) or (None, failure)."""
    try:
        with _call_slot(system_id):
            return call(), None
    except SystemFailure as exc:
        return None, exc


def _record_reply(session_id, system_id, position, user_turn, reply, failure) -> None:
    """Record the system's reply (or the fallback) after the call, in one short transaction without
    reading the conversation back: the state is written, and "ended by the system" only if nobody
    ended the conversation meanwhile (the update's condition re-checks it)."""
    with transaction.atomic():
        if failure is not None:
            text = chat_relay.UNAVAILABLE if failure.reason == PAUSED_ERROR else chat_relay.FALLBACK if position else chat_relay.OPENING_FALLBACK
            if failure.reason == BUSY_ERROR:
                text = chat_relay.BUSY
            ChatTurn.objects.create(
                session_id=session_id, position=position, role="system", user_turn=user_turn, text=text,
                failed=True, error=failure.reason[:500], latency_ms=failure.latency_ms,
            )
        else:
            if position != 0 or reply.text:  # an empty opening is not a turn: the worker speaks first
                ChatTurn.objects.create(
                    session_id=session_id, position=position, role="system", user_turn=user_turn, text=reply.text,
                    offered=reply.offered, latency_ms=reply.latency_ms,
                )
            ChatSession.objects.filter(pk=session_id).update(state=reply.state)
            if reply.end:  # the system ended it; the worker still gives the verdict
                ChatSession.objects.filter(pk=session_id, ended_reason="").update(ended_reason="system")
    if failure is not None and failure.reason not in _NOT_COUNTED:
        pause_if_failing(system_id)


def pause_if_failing(system_id) -> DialogSystem | None:
    """Pause the system if its recent turns break a pausing rule (settings QUORUM_SYSTEM_PAUSE_*).
    Returns the system when this call paused it."""
    system = DialogSystem.objects.get(pk=system_id)
    if system.paused_at:
        return None
    limit = max(settings.QUORUM_SYSTEM_PAUSE_CONSECUTIVE_FAILURES, settings.QUORUM_SYSTEM_PAUSE_WINDOW_TURNS, 1)
    turns = ChatTurn.objects.filter(session__system_id=system_id, role="system").exclude(error__in=_NOT_COUNTED)
    if system.resumed_at:
        turns = turns.filter(created_at__gt=system.resumed_at)
    recent = list(turns.order_by("-created_at", "-pk").values_list("failed", flat=True)[:limit])
    reason = pause_rules.pause_reason(
        recent, consecutive=settings.QUORUM_SYSTEM_PAUSE_CONSECUTIVE_FAILURES,
        window=settings.QUORUM_SYSTEM_PAUSE_WINDOW_TURNS, rate=settings.QUORUM_SYSTEM_PAUSE_FAILURE_RATE,
    )
    if reason is None:
        return None
    return pause_system(system, reason)


def pause_system(system: DialogSystem, reason: str) -> DialogSystem | None:
    """Pause a system (no new chats; the chats under way get the polite fallback). None if it was
    paused already: the first reason stands."""
    reason = (reason or "").strip()[:300] or "paused by an organizer"
    if not DialogSystem.objects.filter(pk=system.pk, paused_at__isnull=True).update(paused_at=timezone.now(), paused_reason=reason):
        return None
    system.refresh_from_db()
    return system


def resume_system(system: DialogSystem) -> DialogSystem:
    """Queue the contract check a system gets when added, and give the paused system chats again
    only if it passes (`systems._resume_if_asked`; its failures so far then no longer count towards
    pausing it); if it fails, it stays paused with the check's reason."""
    with transaction.atomic():
        DialogSystem.objects.filter(pk=system.pk, paused_at__isnull=False).update(resume_when_checked=True)
        return request_check(system)


class SystemsRelay(chat_relay.ChatRelay):
    """No transaction is open while the system is called: a short one reserves the turn's place
    (refusing a second message while one is unanswered), the call runs, and another records the
    reply after re-reading the conversation. A failed turn gets the polite fallback and the worker
    sends the message again; a paused system is not called: the worker is told to end the
    conversation (Fail, no ratings; it counts as a failed dialog of the system)."""

    def _system(self, endpoint) -> DialogSystem:
        system = DialogSystem.objects.filter(public_id=endpoint).first()
        if system is None:
            raise chat_relay.RelayUnavailable(f"no system with endpoint {endpoint!r}")
        return system

    def open(self, endpoint, session_key, goal):
        session = ChatSession.objects.filter(key=session_key).first()
        if session is None:
            system = self._system(endpoint)
            session, created = ChatSession.objects.get_or_create(key=session_key, defaults={"system": system, "goal": goal})
            if created:  # only the request that created the session calls the opening
                if system.paused_at:
                    reply, failure = None, SystemFailure(PAUSED_ERROR)
                else:
                    reply, failure = _call(system.pk, lambda: _client(system).open(session_key, goal))
                _record_reply(session.pk, system.pk, 0, None, reply, failure)
        return _transcript(session)

    def say(self, endpoint, session_key, text):
        if not ChatSession.objects.filter(key=session_key).exists():
            self.open(endpoint, session_key, None)  # a page that skipped "open": open it first
        with transaction.atomic():
            session = ChatSession.objects.select_for_update().select_related("system").get(key=session_key)
            if session.ended_reason:
                raise chat_relay.ChatClosed("The conversation has ended.")
            turns = list(session.turns.order_by("position").values("role", "text", "failed", "position", "user_turn", "created_at"))
            if turns and turns[-1]["role"] == "user":
                if timezone.now() - turns[-1]["created_at"] < _lost_after():
                    raise chat_relay.ChatBusy("The system is still answering your last message; wait a moment.")
                # The request that sent it died before recording a reply: record the loss and go on.
                lost = ChatTurn.objects.create(
                    session=session, position=turns[-1]["position"] + 1, role="system", user_turn=turns[-1]["user_turn"],
                    text=chat_relay.FALLBACK, failed=True, error="no reply was recorded",
                )
                turns.append({"role": lost.role, "text": lost.text, "failed": lost.failed, "position": lost.position})
            user_turn = sum(1 for t in turns if t["role"] == "user")
            history = [{"role": t["role"], "text": t["text"]} for t in turns if not t["failed"]]
            position = turns[-1]["position"] + 1 if turns else 1  # position 0 is the opening's
            ChatTurn.objects.create(session=session, position=position, role="user", user_turn=user_turn, text=text)
            system, state = session.system, session.state
        if system.paused_at:  # as read under the lock a moment ago
            reply, failure = None, SystemFailure(PAUSED_ERROR)
        else:
            client = _client(system)

            def call():
                try:
                    return client.turn(session_key, user_turn, text, history, state)
                except SystemFailure as exc:
                    if "cannot reach" not in exc.reason:
                        raise
                    # A lost connection is retried once with the same turn: the contract says a retried
                    # turn gets the same reply. A timeout is not retried: the worker has waited enough.
                    return client.turn(session_key, user_turn, text, history, state)

            reply, failure = _call(system.pk, call)
        _record_reply(session.pk, system.pk, position + 1, user_turn, reply, failure)
        if reply is not None and reply.end and not session.ended_reason:
            session.ended_reason = "system"  # as _record_reply wrote it, unless the worker ended first
        return _transcript(session)

    def end(self, endpoint, session_key, reason):
        with transaction.atomic():
            session = ChatSession.objects.select_for_update().select_related("system").filter(key=session_key).first()
            if session is None:
                raise chat_relay.ChatClosed("The conversation has not started.")
            first_end = not session.ended_reason or session.ended_reason == "system"
            if first_end:
                session.ended_reason = reason
                session.save(update_fields=["ended_reason"])
        if first_end and not session.system.paused_at:
            # The system's bookkeeping only: the worker's verdict stands whatever happens to it.
            _call(session.system_id, lambda: _client(session.system).end(session_key, reason))
        return _transcript(session)

    def transcript(self, endpoint, session_key):
        session = ChatSession.objects.filter(key=session_key).first()
        return _transcript(session) if session else {"turns": [], "ended": False, "unavailable": False}

    def paused_endpoints(self):
        return set(DialogSystem.objects.filter(paused_at__isnull=False).values_list("public_id", flat=True))

    def paused_endpoints_query(self):
        # Read inside each claim's statement: a pause or resume counts from the next claim in every
        # process, with no cache to invalidate and no read of its own.
        return DialogSystem.objects.filter(paused_at__isnull=False).order_by().values(endpoint=_AsPayloadValue("public_id"))


def create_chat_job(
    *, name: str, systems: list[DialogSystem], goal_set: GoalSet, dialogs_per_goal: int = 1, min_user_turns: int = 1,
    instructions: str = "", seed: int | None = None, language: str = "", **job_options,
):
    """An interactive job: one item per (goal, system, repetition), so every system gets the same
    number of dialogs per goal; launched at once. Its name must be new (no job of any kind has it,
    ignoring case; `ChatJobName` holds it in the database against another made at the same instant). The payload names each system by its public id.
    Items come in a seeded order that interleaves systems and goals (`order.interleave`; the seed
    defaults to one derived from the name), so at any moment of a run every system has about as
    many dialogs as the others. A paused system is refused: it would only show workers the fallback.
    `language` (a BCP 47 tag, blank: not declared) is the one the workers and systems chat in, which
    the chat page marks the messages with (the chat task type's setting)."""
    name = (name or "").strip()
    if not name:
        raise EvaluationInputError("a chat job needs a name")
    if not systems:
        raise EvaluationInputError("choose at least one system")
    if isinstance(dialogs_per_goal, bool) or not isinstance(dialogs_per_goal, int) or not 1 <= dialogs_per_goal <= MAX_DIALOGS_PER_GOAL:
        raise EvaluationInputError(f"dialogs per goal must be a whole number from 1 to {MAX_DIALOGS_PER_GOAL}")
    paused = [s.name for s in systems if s.paused_at]
    if paused:
        raise EvaluationInputError(f"system(s) {', '.join(paused)} are paused; resume them on the systems page first")
    goals = list(goal_set.goals.order_by("pk"))
    if not goals:
        raise EvaluationInputError(f"goal set {goal_set.name!r} has no goals")
    if seed is None:  # reproducible: the same name gives the same order
        seed = int.from_bytes(hashlib.sha256(f"chat-order:{name}".encode()).digest()[:8], "big")
    # Handed out in position order: interleaved so that a partial run is balanced (order.py).
    payloads = [
        {"goal": g.goal, "goal_text": goal_rules.goal_text(g.goal) or [f"Goal {g.key}"], "goal_id": str(g.pk), "endpoint": s.public_id}
        for g, s in ((goals[gi], systems[si]) for gi, si in chat_order.interleave(len(goals), len(systems), dialogs_per_goal, seed))
    ]
    settings_ = {"min_user_turns": min_user_turns, "language": language}
    try:
        with transaction.atomic():  # a job that cannot launch is not left behind as a draft
            # The name is how organizers and workers tell jobs apart (pages list jobs by name).
            taken = EvaluationInputError(f"a job named {name!r} exists already; choose a new name")
            if Job.objects.filter(name__iexact=name).exists():
                raise taken
            job = create_payload_job(
                name=name, task_type="chat", payloads=payloads, redundancy=1, settings=settings_, instructions=instructions, **job_options
            )
            try:  # the check read before a job of this name made at the same instant was committed
                with transaction.atomic():
                    ChatJobName.objects.create(job=job, name=name)
            except IntegrityError:
                raise taken from None
            return launch_job(job)
    except JobError as exc:
        detail = "; ".join(f"{k}: {v}" for k, v in exc.errors.items())
        raise EvaluationInputError(f"{exc}{' (' + detail + ')' if detail else ''}") from None
    except ArithmeticError:  # create_payload_job reads the reward with Decimal()
        raise EvaluationInputError(f"the reward must be an amount in USD such as 0.50, not {str(job_options.get('reward'))[:20]!r}") from None
