"""The conformance check of the system contract (docs/system-contract.md, "Checking a system"):
health, opening, several turns, a retried turn, end, reply shapes and latency, one result per rule;
then the check's own replies through the offensive-word filter, a warning with its evidence and
never a failure (the filter flags, the organizer decides). Used by `manage.py check_system` and
when an organizer registers a system. No Django."""
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from evaluation.interactive.offensive import WordListError
from evaluation.interactive.systems.client import DEFAULT_MAX_REPLY_BYTES, SystemClient, SystemFailure

#: What the check says as a user: a restaurant conversation the reference system can follow, and
#: any conforming system can at least answer.
SCRIPT = ["I am looking for a cheap restaurant in the centre.", "Chinese food, please.", "Can you book it for 2 people?"]


#: The rule that screens the check's replies for listed offensive words.
SCREENING_RULE = "offensive words"


@dataclass
class RuleResult:
    """One rule's result. A `warning` passes (it does not fail the check) but asks the organizer to
    look before annotators chat with the system; `evidence` says what it saw: [{reply, words}]."""

    rule: str
    passed: bool
    reason: str
    warning: bool = False
    evidence: list = field(default_factory=list)

    def line(self) -> str:
        return f"{'FAIL' if not self.passed else 'WARN' if self.warning else 'PASS'} {self.rule}: {self.reason}"

    def as_dict(self) -> dict:
        return {"rule": self.rule, "passed": self.passed, "reason": self.reason, "warning": self.warning, "evidence": self.evidence}


@dataclass
class _Conversation:
    """What the scripted conversation left: the turns answered, each turn's latency, and the
    second turn as first sent (index, text, history, state, reply) for the retry."""

    replies: list = field(default_factory=list)
    latencies: list = field(default_factory=list)
    retry_input: tuple | None = None
    #: (which reply, its text) of every reply the system gave, for the offensive-word screening.
    said: list = field(default_factory=list)


def run_check(
    base_url: str, secret: str = "", *, timeout: float = 10.0, client: SystemClient | None = None,
    max_bytes: int = DEFAULT_MAX_REPLY_BYTES, on_result: Callable[[list[RuleResult]], None] | None = None,
    screen: Callable[[str], list[str]] | None = None,
) -> list[RuleResult]:
    """Every rule's result, in order. A rule that cannot run because an earlier one failed fails
    with that reason, so the list always has the same rules. `on_result` is given the results so
    far after each rule (progress). `screen` (text -> the listed words found in it, the filter of
    `offensive.matcher`) screens the replies; without it the screening rule is left out."""
    client = client or SystemClient(base_url, secret, timeout=timeout, max_bytes=max_bytes)
    results: list[RuleResult] = []

    def record(rule: str, passed: bool, reason: str, warning: bool = False, evidence: list | None = None) -> bool:
        results.append(RuleResult(rule, passed, reason, warning, evidence or []))
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
        conversation.said.insert(0, ("opening", opening.text))
    _check_retry(client, session_id, conversation, record)
    _check_latency(client, conversation.latencies, record)

    try:
        client.end(session_id, "abandoned")
        record("end", True, "accepted")
    except SystemFailure as exc:
        record("end", False, exc.reason)
    if screen is not None:
        _screen(conversation.said, screen, record)
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
        conversation.said.append((f"turn {index}", reply.text))
        history += [{"role": "user", "text": text}, {"role": "system", "text": reply.text}]
        state = reply.state
        if reply.end:
            break
    offered = sum(1 for r in conversation.replies if r.offered)
    record("turns", True, f"{len(conversation.replies)} turns answered in shape; {offered} with 'offered'")
    return conversation


def _check_retry(client: SystemClient, session_id: str, conversation: _Conversation, record: Callable[..., bool]) -> None:
    """The second turn sent again must get the same reply (the contract's idempotency rule)."""
    if conversation.retry_input is None:
        record("retried turn", False, "not run: fewer than two turns were answered")
        return
    index, text, earlier, earlier_state, first = conversation.retry_input
    try:
        again = client.turn(session_id, index, text, earlier, earlier_state)
        same = (again.text, again.end, again.offered) == (first.text, first.end, first.offered)
        if again.text != first.text:  # a reply a worker could have been shown too
            conversation.said.append((f"turn {index} sent again", again.text))
        record("retried turn", same, "the same reply" if same else f"turn {index} sent again got {again.text!r}, first {first.text!r}")
    except SystemFailure as exc:
        record("retried turn", False, exc.reason)


def _check_latency(client: SystemClient, latencies: list, record: Callable[[str, bool, str], bool]) -> None:
    if latencies:
        worst = max(latencies)
        record("latency", worst <= client.timeout * 1000, f"slowest turn {worst} ms, mean {sum(latencies) // len(latencies)} ms (limit {client.timeout:g} s)")
    else:
        record("latency", False, "not measured: no turn was answered")


def _screen(said: list[tuple[str, str]], screen: Callable[[str], list[str]], record: Callable[..., bool]) -> None:
    """The replies through the offensive-word filter: its hits are a warning with the words and the
    reply they were in, not a failure (a listed word may be innocent; the organizer reads them)."""
    if not said:  # only when the opening failed, which fails the check already: "not run", as the rules after it
        record(SCREENING_RULE, False, "not run: the system gave no reply")
        return
    try:
        evidence = [{"reply": which, "words": words} for which, text in said if (words := screen(text))]
    except WordListError as exc:
        record(SCREENING_RULE, True, f"not screened: {exc}", warning=True)
        return
    count = f"{len(said)} repl{'ies' if len(said) != 1 else 'y'}"
    if not evidence:
        record(SCREENING_RULE, True, f"no listed word in its {count}")
        return
    where = "; ".join(f"{e['reply']}: {', '.join(e['words'])}" for e in evidence)
    record(
        SCREENING_RULE, True, f"listed words in {len(evidence)} of its {count} ({where}); read them before annotators chat with it",
        warning=True, evidence=evidence,
    )


def passed(results: list[RuleResult]) -> bool:
    """Whether every rule passed; a warning passes."""
    return all(r.passed for r in results)


def warnings(stored: list) -> list[dict]:
    """The results stored with a system (`as_dict`) that warn, which the chat job form names beside
    it. Results stored before warnings existed have none."""
    return [r for r in stored or [] if isinstance(r, dict) and r.get("warning")]
