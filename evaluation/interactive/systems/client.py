"""Quorum's client for the system contract (docs/system-contract.md): one signed JSON request per
call, and every failure (timeout, connection, HTTP status, size, shape) turned into `SystemFailure`
with a reason, so callers record a failed turn instead of crashing a page. No Django.

A call is bounded whatever the system does (issue 25):
- **one deadline for the whole call** (`timeout`): connecting, sending, the status line, the headers
  and the whole body. A watchdog shuts the socket down when it passes, so a system that sends one
  byte every few seconds is cut off at the deadline, not kept alive by each byte;
- **a size cap** (`max_bytes`) on what crosses the wire and, separately, on what a gzip or deflate
  body expands to, checked while reading (never more than the cap plus one chunk is held);
- **strict JSON** (`parse_json`): valid UTF-8, no NaN/Infinity (nor a number that overflows to
  one), nesting at most `MAX_JSON_DEPTH` deep, and no NUL or lone surrogate in any string (the
  database cannot store them);
- **DNS inside that deadline**: the host name is resolved within what is left of it;
- **no redirects** are followed (the contract has none), and no credentials in the URL.
"""
import http.client
import json
import socket
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import quote, urlsplit

from evaluation.interactive.systems import contract
from evaluation.interactive.systems.addresses import AddressRefused, resolve_within, url_problem
from evaluation.interactive.systems.signing import sign_headers
from quorum.strict_json import StrictJSONError as ReplyError
from quorum.strict_json import loads as parse_json

DEFAULT_TIMEOUT_SECONDS = 10.0
#: The most a reply may be, on the wire and expanded: a dialog turn is a few hundred characters.
DEFAULT_MAX_REPLY_BYTES = 64 * 1024
_CHUNK = 8192


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


class _Expander:
    """What a body expands to under its Content-Encoding, refused past `limit` bytes."""

    def __init__(self, encoding: str, limit: int):
        encoding = (encoding or "identity").strip().lower()
        if encoding not in ("identity", "gzip", "x-gzip", "deflate"):
            raise SystemFailure(f"the reply is encoded with {encoding[:30]!r}, which Quorum does not read")
        self.limit = limit
        self.zlib = None if encoding == "identity" else zlib.decompressobj(47 if "gzip" in encoding else 15)
        self.parts: list[bytes] = []
        self.size = 0

    def feed(self, chunk: bytes) -> None:
        if self.zlib is not None:
            try:
                chunk = self.zlib.decompress(chunk, self.limit - self.size + 1)
            except zlib.error:
                raise SystemFailure("the reply's compressed body is corrupt") from None
            if self.zlib.unconsumed_tail:
                chunk += b"?"  # more is waiting: it is over the limit
        self.size += len(chunk)
        if self.size > self.limit:
            raise SystemFailure(f"the reply expands to more than {self.limit} bytes")
        self.parts.append(chunk)

    def body(self) -> bytes:
        return b"".join(self.parts)


class SystemClient:
    """`resolve(host, port)` gives the addresses a call may connect to: the address policy
    (`addresses.AddressPolicy.resolve`, which raises AddressRefused for a refused target) plugs in
    here, and the call connects to the first address it returned. The lookup counts against the
    call's deadline (`addresses.resolve_within`). By default (the command-line
    check, benchmarks) every address DNS gives."""

    def __init__(
        self, base_url: str, secret: str = "", *, timeout: float = DEFAULT_TIMEOUT_SECONDS,
        max_bytes: int = DEFAULT_MAX_REPLY_BYTES, resolve: Callable[[str, int], list[str]] | None = None,
    ):
        self.base_url = base_url.rstrip("/")
        self.secret = secret
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.resolve = resolve or _all_addresses

    def _connection(self, path: str, deadline: float) -> tuple[http.client.HTTPConnection, str]:
        problem = url_problem(self.base_url)
        if problem:
            raise SystemFailure(f"the system's URL is refused: {problem}")
        url = urlsplit(self.base_url + path)
        port = url.port or (443 if url.scheme == "https" else 80)
        try:
            addresses = resolve_within(self.resolve, url.hostname or "", port, deadline - time.monotonic())
        except AddressRefused as exc:  # not called: nothing about what answers there is learnt
            raise SystemFailure(str(exc)) from None
        if not addresses:
            raise SystemFailure("cannot reach the system (its host has no address)")
        remaining = max(deadline - time.monotonic(), 0.01)
        cls = http.client.HTTPSConnection if url.scheme == "https" else http.client.HTTPConnection
        conn = cls(url.hostname or "", port, timeout=remaining)

        def connect(_address, timeout, source_address=None):  # to the address the policy allowed
            return socket.create_connection((addresses[0], port), timeout, source_address)

        conn._create_connection = connect  # type: ignore[attr-defined]
        target = url.path + (f"?{url.query}" if url.query else "")
        return conn, target or "/"

    def _call(self, method: str, path: str, body=None):
        data = b"" if body is None else json.dumps(body, separators=(",", ":")).encode()
        headers = {"Content-Type": "application/json", "Accept-Encoding": "gzip", **sign_headers(self.secret, data)}
        started = time.monotonic()
        deadline = started + self.timeout
        conn, target = self._connection(path, deadline)
        expired = threading.Event()

        def cut_off():
            expired.set()
            sock = conn.sock
            if sock is not None:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

        watchdog = threading.Timer(max(deadline - time.monotonic(), 0.0), cut_off)
        watchdog.daemon = True
        watchdog.start()
        try:
            status, raw = self._exchange(conn, method, target, data, headers, expired)
        except (OSError, http.client.HTTPException):
            if expired.is_set() or time.monotonic() >= deadline:
                raise SystemFailure(f"no reply within {self.timeout:g} s", int(self.timeout * 1000)) from None
            raise SystemFailure("cannot reach the system (connection failed)") from None
        finally:
            watchdog.cancel()
            conn.close()
        latency_ms = int((time.monotonic() - started) * 1000)
        if expired.is_set():
            raise SystemFailure(f"no reply within {self.timeout:g} s", int(self.timeout * 1000))
        if not 200 <= status < 300:
            hint = " (the system refused the request's signature: the secret is probably not the one it expects)" if status in (401, 403) else ""
            raise SystemFailure(f"HTTP {status} from {method} {path}{hint}", latency_ms)
        try:
            return parse_json(raw), latency_ms
        except ReplyError as exc:
            raise SystemFailure(f"{method} {path}: {exc}", latency_ms) from None

    def _exchange(self, conn, method, target, data, headers, expired) -> tuple[int, bytes]:
        conn.request(method, target, body=data or None, headers=headers)
        answer = conn.getresponse()
        if not 200 <= answer.status < 300:
            return answer.status, b""
        declared = answer.getheader("Content-Length")
        if declared and declared.strip().isdigit() and int(declared) > self.max_bytes:
            raise SystemFailure(f"the reply is larger than {self.max_bytes} bytes")
        expander = _Expander(answer.getheader("Content-Encoding", ""), self.max_bytes)
        received = 0
        while True:
            chunk = answer.read1(_CHUNK)
            if not chunk or expired.is_set():
                break
            received += len(chunk)
            if received > self.max_bytes:
                raise SystemFailure(f"the reply is larger than {self.max_bytes} bytes")
            expander.feed(chunk)
        return answer.status, expander.body()

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
        body, latency_ms = self._call("POST", f"/sessions/{quote(session_id, safe='')}/turns", payload)
        return self._reply(body, latency_ms, f"turn {turn}")

    def end(self, session_id: str, reason: str) -> dict:
        if reason not in contract.END_REASONS:
            raise ValueError(f"reason must be one of {', '.join(contract.END_REASONS)}")
        body, _latency = self._call("POST", f"/sessions/{quote(session_id, safe='')}/end", {"reason": reason})
        return body if isinstance(body, dict) else {}


def _all_addresses(host: str, port: int) -> list[str]:
    try:
        return [str(info[4][0]) for info in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)]
    except (OSError, UnicodeError):
        raise SystemFailure("cannot reach the system (its host name does not resolve)") from None
