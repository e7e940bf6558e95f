"""Signed per-slot tokens: who is working on which slot, carried in the work page's URL.

Identity travels in the URL rather than in the session so that the same pages work inside a crowd
provider's iframe, where browsers block third-party cookies. The token is signed with SECRET_KEY
(django.core.signing), so it cannot be forged or altered; it names a slot and the worker who
claimed it, and it expires after TOKEN_MAX_AGE.
"""
from datetime import timedelta

from django.core import signing

#: Separates these signatures from every other use of SECRET_KEY (sessions, password resets).
SALT = "quorum.annotation.work-token.v1"
#: Long enough for a worker to come back to an open tab the next day; a claim itself expires
#: much sooner (Job.claim_timeout_minutes), and the services decide whether work is still wanted.
TOKEN_MAX_AGE = timedelta(days=2)


class InvalidToken(Exception):
    """The token cannot be used; the message tells the worker what to do."""


def make_token(slot) -> str:
    """A URL-safe token for a claimed slot and its worker."""
    if slot.worker_id is None:
        raise ValueError("only a claimed slot has a work token")
    return signing.dumps([slot.pk, slot.worker_id], salt=SALT, compress=False)


def read_token(token: str) -> tuple[int, int]:
    """(slot_id, worker_id) of a token made by make_token; InvalidToken if altered or expired."""
    try:
        value = signing.loads(token, salt=SALT, max_age=TOKEN_MAX_AGE)
    except signing.SignatureExpired:
        raise InvalidToken("This work link has expired. Open the job again to get a fresh link.") from None
    except signing.BadSignature:
        raise InvalidToken(
            "This work link is not valid: it was changed or cut short. Open the item again from your job list."
        ) from None
    if not (isinstance(value, list) and len(value) == 2 and all(type(v) is int for v in value)):
        raise InvalidToken("This work link is not valid. Open the item again from your job list.")
    return value[0], value[1]
