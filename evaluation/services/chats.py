"""The chat relay (annotation.chat_relay) for registered dialog systems, and interactive jobs.

Workers' turns reach a system through `SystemsRelay`, which the app's ready() registers: it calls
the system by the contract's client, records every turn (`ChatSession`, `ChatTurn`), and turns a
timeout or an error into a failed turn with a polite fallback for the worker.
"""
from django.conf import settings
from django.db import transaction

from annotation import chat_relay
from annotation.services.jobs import launch_job
from annotation.services.payload_jobs import create_payload_job

from .. import goals as goal_rules
from ..models import ChatSession, ChatTurn, DialogSystem, GoalSet
from ..systems.client import SystemClient, SystemFailure
from .imports import EvaluationInputError


def _client(system: DialogSystem) -> SystemClient:
    return SystemClient(system.url, system.secret, timeout=settings.QUORUM_SYSTEM_TURN_TIMEOUT_SECONDS)


def _transcript(session: ChatSession) -> dict:
    turns = [
        {"role": t.role, "text": t.text, "failed": t.failed, "offered": t.offered}
        for t in session.turns.order_by("position")
    ]
    return {"turns": turns, "ended": bool(session.ended_reason)}


def _system_turn(session, position, user_turn, call) -> ChatTurn:
    """Call the system and record its reply, or the fallback the worker sees when it failed."""
    try:
        reply = call()
    except SystemFailure as exc:
        return ChatTurn.objects.create(
            session=session, position=position, role="system", user_turn=user_turn, text=chat_relay.FALLBACK,
            failed=True, error=exc.reason[:500], latency_ms=exc.latency_ms,
        )
    session.state = reply.state
    if reply.end:
        session.ended_reason = "system"  # the system ended it; the worker still gives the verdict
    session.save(update_fields=["state", "ended_reason"])
    return ChatTurn.objects.create(
        session=session, position=position, role="system", user_turn=user_turn, text=reply.text,
        offered=reply.offered, latency_ms=reply.latency_ms,
    )


class SystemsRelay(chat_relay.ChatRelay):
    """Every method locks the conversation's row for its whole call, network included: it only
    serializes one worker's own clicks (a double send), and keeps turn positions in order."""

    def _system(self, endpoint) -> DialogSystem:
        system = DialogSystem.objects.filter(public_id=endpoint).first()
        if system is None:
            raise chat_relay.RelayUnavailable(f"no system with endpoint {endpoint!r}")
        return system

    @transaction.atomic
    def open(self, endpoint, session_key, goal):
        session = ChatSession.objects.select_for_update().filter(key=session_key).first()
        if session is None:
            system = self._system(endpoint)
            session = ChatSession.objects.create(system=system, key=session_key, goal=goal)
            turn = _system_turn(session, 0, None, lambda: _client(system).open(session_key, goal))
            if not turn.failed and not turn.text:
                turn.delete()  # an empty opening: the worker speaks first
        return _transcript(session)

    @transaction.atomic
    def say(self, endpoint, session_key, text):
        self.open(endpoint, session_key, None)
        session = ChatSession.objects.select_for_update().select_related("system").get(key=session_key)
        if session.ended_reason:
            raise chat_relay.ChatClosed("The conversation has ended.")
        turns = list(session.turns.order_by("position"))
        user_turn = sum(1 for t in turns if t.role == "user")
        history = [{"role": t.role, "text": t.text} for t in turns if not t.failed]
        position = turns[-1].position + 1 if turns else 0
        ChatTurn.objects.create(session=session, position=position, role="user", user_turn=user_turn, text=text)
        client = _client(session.system)

        def call():
            try:
                return client.turn(session_key, user_turn, text, history, session.state)
            except SystemFailure as exc:
                if "cannot reach" not in exc.reason:
                    raise
                # A lost connection is retried once with the same turn: the contract says a retried
                # turn gets the same reply. A timeout is not retried: the worker has waited enough.
                return client.turn(session_key, user_turn, text, history, session.state)

        _system_turn(session, position + 1, user_turn, call)
        return _transcript(session)

    def end(self, endpoint, session_key, reason):
        with transaction.atomic():
            session = ChatSession.objects.select_for_update().select_related("system").filter(key=session_key).first()
            if session is None:
                raise chat_relay.ChatClosed("The conversation has not started.")
            first_end = not session.ended_reason or session.ended_reason == "system"
            if not session.ended_reason or session.ended_reason == "system":
                session.ended_reason = reason
                session.save(update_fields=["ended_reason"])
        if first_end:
            try:
                _client(session.system).end(session_key, reason)
            except SystemFailure:
                pass  # the system's bookkeeping only: the worker's verdict stands either way
        return _transcript(session)

    def transcript(self, endpoint, session_key):
        session = ChatSession.objects.filter(key=session_key).first()
        return _transcript(session) if session else {"turns": [], "ended": False}


def create_chat_job(*, name: str, systems: list[DialogSystem], goal_set: GoalSet, dialogs_per_goal: int = 1, instructions: str = "", **job_options):
    """An interactive job: one item per (goal, system, repetition), so every system gets the same
    number of dialogs per goal; launched at once. The payload names each system by its public id."""
    if not systems:
        raise EvaluationInputError("choose at least one system")
    if dialogs_per_goal < 1:
        raise EvaluationInputError("dialogs per goal must be at least 1")
    goals = list(goal_set.goals.all())
    if not goals:
        raise EvaluationInputError(f"goal set {goal_set.name!r} has no goals")
    payloads = [
        {"goal": g.goal, "goal_text": goal_rules.goal_text(g.goal) or [f"Goal {g.key}"], "goal_id": str(g.pk), "endpoint": s.public_id}
        for g in goals for s in systems for _ in range(dialogs_per_goal)
    ]
    job = create_payload_job(name=name, task_type="chat", payloads=payloads, redundancy=1, instructions=instructions, **job_options)
    return launch_job(job)
