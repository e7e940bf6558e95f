"""The conformance check of the system contract (docs/system-contract.md, "Checking a system"):
health, opening, several turns, a retried turn, end, reply shapes and latency, one result per rule.
Used by `manage.py check_system` and when an organizer registers a system. No Django."""
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from evaluation.interactive.systems.client import DEFAULT_MAX_REPLY_BYTES, SystemClient, SystemFailure

#: What the check says as a user: a restaurant conversation the reference system can follow, and
#: any conforming system can at least answer.
SCRIPT = ["I am looking for a cheap restaurant in the centre.", "Chinese food, please.", "Can you book it for 2 people?"]


@dataclass
class RuleResult:
    rule: str
    passed: bool
    reason: str

    def line(self) -> str:
        return f"{'PASS' if self.passed else 'FAIL'} {self.rule}: {self.reason}"

    def as_dict(self) -> dict:
        return {"rule": self.rule, "passed": self.passed, "reason": self.reason}


@dataclass
class _Conversation:
    """What the scripted conversation left: the turns answered, each turn's latency, and the
    second turn as first sent (index, text, history, state, reply) for the retry."""

    replies: list = field(default_factory=list)
    latencies: list = field(default_factory=list)
    retry_input: tuple | None = None


def run_check(
    base_url: str, secret: str = "", *, timeout: float = 10.0, client: SystemClient | None = None,
    max_bytes: int = DEFAULT_MAX_REPLY_BYTES, on_result: Callable[[list[RuleResult]], None] | None = None,
) -> list[RuleResult]:
    """Every rule's result, in order. A rule that cannot run because an earlier one failed fails
    with that reason, so the list always has the same rules. `on_result` is given the results so
    far after each rule (progress)."""
    client = client or SystemClient(base_url, secret, timeout=timeout, max_bytes=max_bytes)
    results: list[RuleResult] = []

    def record(rule: str, passed: bool, reason: str) -> bool:
        results.append(RuleResult(rule, passed, reason))
        if on_result is not None:
            on_result(list(results))
        return passed

    try:
        health = client.health()
        record("health", True, f"{health['system']} {health['version']} ({health['latency_ms']} ms)")
    except SystemFailure as exc:
        record("health", False, exc.reason)

    session_id = f"quorum-check-{uuid.uuid4().hex[:12]}"
    history: list[dict] = []
    state = None
    try:
        opening = client.open(session_id, goal=None)
        record("opening", True, f"{len(opening.text)} characters ({opening.latency_ms} ms)")
        if opening.text:
            history.append({"role": "system", "text": opening.text})
        state = opening.state
    except SystemFailure as exc:
        record("opening", False, exc.reason)
        opening = None

    if opening is None:
        conversation = _Conversation()
        record("turns", False, "not run: the opening failed")
    else:
        conversation = _converse(client, session_id, history, state, record)
    _check_retry(client, session_id, conversation.retry_input, record)
    _check_latency(client, conversation.latencies, record)

    try:
        client.end(session_id, "abandoned")
        record("end", True, "accepted")
    except SystemFailure as exc:
        record("end", False, exc.reason)
    return results


def _converse(client: SystemClient, session_id: str, history: list[dict], state, record: Callable[[str, bool, str], bool]) -> _Conversation:
    """The scripted user turns after the opening, until the script or the dialog ends; records "turns"."""
    conversation = _Conversation()
    for index, text in enumerate(SCRIPT):
        try:
            reply = client.turn(session_id, index, text, list(history), state)
        except SystemFailure as exc:
            record("turns", False, f"turn {index}: {exc.reason}")
            return conversation
        if index == 1:
            conversation.retry_input = (index, text, list(history), state, reply)
        conversation.latencies.append(reply.latency_ms)
        conversation.replies.append(reply)
        history += [{"role": "user", "text": text}, {"role": "system", "text": reply.text}]
        state = reply.state
        if reply.end:
            break
    offered = sum(1 for r in conversation.replies if r.offered)
    record("turns", True, f"{len(conversation.replies)} turns answered in shape; {offered} with 'offered'")
    return conversation


def _check_retry(client: SystemClient, session_id: str, retry_input: tuple | None, record: Callable[[str, bool, str], bool]) -> None:
    """The second turn sent again must get the same reply (the contract's idempotency rule)."""
    if retry_input is None:
        record("retried turn", False, "not run: fewer than two turns were answered")
        return
    index, text, earlier, earlier_state, first = retry_input
    try:
        again = client.turn(session_id, index, text, earlier, earlier_state)
        same = (again.text, again.end, again.offered) == (first.text, first.end, first.offered)
        record("retried turn", same, "the same reply" if same else f"turn {index} sent again got {again.text!r}, first {first.text!r}")
    except SystemFailure as exc:
        record("retried turn", False, exc.reason)


def _check_latency(client: SystemClient, latencies: list, record: Callable[[str, bool, str], bool]) -> None:
    if latencies:
        worst = max(latencies)
        record("latency", worst <= client.timeout * 1000, f"slowest turn {worst} ms, mean {sum(latencies) // len(latencies)} ms (limit {client.timeout:g} s)")
    else:
        record("latency", False, "not measured: no turn was answered")


def passed(results: list[RuleResult]) -> bool:
    return all(r.passed for r in results)
