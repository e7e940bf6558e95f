"""Request signing of the system contract (docs/system-contract.md, "Signing"). Pure.

The signature covers the timestamp as well as the body, so a captured request cannot be replayed
later with a fresh timestamp; `verify` refuses a timestamp too far from now for the same reason.
"""
import hashlib
import hmac
import time
from collections.abc import Mapping

#: The shortest secret Quorum signs with (registration refuses a shorter one; the reference system too).
MIN_SECRET_CHARS = 16

TIMESTAMP_HEADER = "X-Quorum-Timestamp"
SIGNATURE_HEADER = "X-Quorum-Signature"
MAX_SKEW_SECONDS = 300


def signature(secret: str, timestamp: str, body: bytes) -> str:
    digest = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    return f"sha256={digest}"


def sign_headers(secret: str, body: bytes, now: float | None = None) -> dict:
    timestamp = str(int(time.time() if now is None else now))
    return {TIMESTAMP_HEADER: timestamp, SIGNATURE_HEADER: signature(secret, timestamp, body)}


def verify(secret: str, timestamp: str | None, given: str | None, body: bytes, now: float | None = None) -> str | None:
    """None when the request is signed by `secret` recently; else the reason it is refused."""
    if not timestamp or not given:
        return f"missing {TIMESTAMP_HEADER} or {SIGNATURE_HEADER}"
    try:
        stamp = int(timestamp)
    except ValueError:
        return f"{TIMESTAMP_HEADER} is not a whole number of seconds"
    if abs((time.time() if now is None else now) - stamp) > MAX_SKEW_SECONDS:
        return f"{TIMESTAMP_HEADER} is more than {MAX_SKEW_SECONDS} s from now"
    if not hmac.compare_digest(signature(secret, timestamp, body), given):
        return "the signature does not match"
    return None


def verify_headers(secret: str, headers: Mapping, body: bytes) -> str | None:
    """`verify` over a mapping of headers (WSGI environ keys or plain header names)."""
    def header(name):
        return headers.get(name) or headers.get("HTTP_" + name.upper().replace("-", "_"))

    return verify(secret, header(TIMESTAMP_HEADER), header(SIGNATURE_HEADER), body)
