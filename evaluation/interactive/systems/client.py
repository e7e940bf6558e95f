"""Quorum's client for the system contract (docs/system-contract.md): one signed JSON request per
call, a timeout per call, and every failure (timeout, connection, HTTP status, shape) turned into
`SystemFailure` with a reason, so callers record a failed turn instead of crashing a page."""
import json
import time
from dataclasses import dataclass, field

import requests

from evaluation.interactive.systems import contract
from evaluation.interactive.systems.signing import sign_headers

DEFAULT_TIMEOUT_SECONDS = 10.0


class SystemFailure(Exception):
    """The system did not answer as the contract says; str() is the reason."""

    def __init__(self, reason: str, latency_ms: int | None = None):
        super().__init__(reason)
        self.reason = reason
        self.latency_ms = latency_ms


@dataclass
class Reply:
    text: str
    state: object = None
    end: bool = False
    offered: dict | None = None
    latency_ms: int = 0
    raw: dict = field(default_factory=dict)


class SystemClient:
    def __init__(self, base_url: str, secret: str = "", *, timeout: float = DEFAULT_TIMEOUT_SECONDS, http=None):
        self.base_url = base_url.rstrip("/")
        self.secret = secret
        self.timeout = timeout
        # A requests.Session keeps the connection to the system open across a conversation's turns.
        self.http = http or requests.Session()

    def _call(self, method: str, path: str, body=None):
        data = b"" if body is None else json.dumps(body, separators=(",", ":")).encode()
        headers = {"Content-Type": "application/json", **sign_headers(self.secret, data)}
        started = time.monotonic()
        try:
            answer = self.http.request(method, self.base_url + path, data=data or None, headers=headers, timeout=self.timeout)
        except requests.Timeout:
            raise SystemFailure(f"no reply within {self.timeout:g} s", int(self.timeout * 1000)) from None
        except requests.RequestException as exc:
            raise SystemFailure(f"cannot reach the system ({type(exc).__name__})") from None
        latency_ms = int((time.monotonic() - started) * 1000)
        if not 200 <= answer.status_code < 300:
            raise SystemFailure(f"HTTP {answer.status_code} from {method} {path}", latency_ms)
        try:
            return answer.json(), latency_ms
        except ValueError:
            raise SystemFailure(f"{method} {path} did not return JSON", latency_ms) from None

    def _reply(self, body, latency_ms, where) -> Reply:
        problems = contract.reply_problems(body, where)
        if problems:
            raise SystemFailure("; ".join(problems), latency_ms)
        return Reply(text=body["text"], state=body.get("state"), end=body["end"], offered=body.get("offered"), latency_ms=latency_ms, raw=dict(body))

    def health(self) -> dict:
        body, latency_ms = self._call("GET", "/health")
        problems = contract.health_problems(body)
        if problems:
            raise SystemFailure("; ".join(problems), latency_ms)
        return {**body, "latency_ms": latency_ms}

    def open(self, session_id: str, goal=None, locale: str = contract.LOCALE) -> Reply:
        body, latency_ms = self._call("POST", "/sessions", {"session_id": session_id, "goal": goal, "locale": locale})
        return self._reply(body, latency_ms, "opening")

    def turn(self, session_id: str, turn: int, text: str, history: list, state=None) -> Reply:
        payload = {"turn": turn, "text": text, "history": history, "state": state}
        body, latency_ms = self._call("POST", f"/sessions/{requests.utils.quote(session_id, safe='')}/turns", payload)
        return self._reply(body, latency_ms, f"turn {turn}")

    def end(self, session_id: str, reason: str) -> dict:
        if reason not in contract.END_REASONS:
            raise ValueError(f"reason must be one of {', '.join(contract.END_REASONS)}")
        body, _latency = self._call("POST", f"/sessions/{requests.utils.quote(session_id, safe='')}/end", {"reason": reason})
        return body if isinstance(body, dict) else {}
