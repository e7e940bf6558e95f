"""Per-person limits on expensive requests (issue 25): how many times a minute one worker may submit
recordings (each is checked, stored and transcribed in the background) or send a chat message
(each is a call to a submitted system), and one organizer may start a system's contract check.
A request past its limit changes nothing and is answered 429 with a message that says what the
limit is and when to try again (`Refusal.message`, `retry_after` seconds).

Counted in Django's cache, one counter per kind, person and minute (a fixed window: a burst at the
turn of a minute can reach twice the limit, never more). With a shared cache (CACHE_URL=redis://...)
the limit holds across web processes; with the default local-memory cache it holds per process.
A cache that cannot be reached lets the request through (logged): a limit must not take the site
down with it.
"""
import logging
import time
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache

logger = logging.getLogger(__name__)

WINDOW_SECONDS = 60


@dataclass(frozen=True)
class Limit:
    setting: str  # the setting giving how many a minute (0: no limit)
    what: str  # what is counted, as the message says it
    per: str  # whose count it is


LIMITS = {
    "recordings": Limit("QUORUM_LIMIT_RECORDINGS_PER_MINUTE", "submissions with recordings", "per worker"),
    "chat": Limit("QUORUM_LIMIT_CHAT_MESSAGES_PER_MINUTE", "chat messages", "per worker"),
    "system_checks": Limit("QUORUM_LIMIT_SYSTEM_CHECKS_PER_MINUTE", "contract checks of dialog systems", "per organizer"),
}


@dataclass(frozen=True)
class Refusal:
    message: str
    retry_after: int  # seconds until the next minute starts


def spend(kind: str, who: object, now: float | None = None) -> Refusal | None:
    """Count one request of `kind` by `who` (a worker's or a user's id); a Refusal when it is past
    the limit, None when it may go ahead."""
    limit = LIMITS[kind]
    allowed = int(getattr(settings, limit.setting))
    if allowed <= 0:
        return None
    now = time.time() if now is None else now
    window = int(now // WINDOW_SECONDS)
    key = f"quorum:limit:{kind}:{who}:{window}"
    try:
        cache.add(key, 0, timeout=2 * WINDOW_SECONDS)
        try:
            used = cache.incr(key)
        except ValueError:  # expired between add and incr
            cache.set(key, 1, timeout=2 * WINDOW_SECONDS)
            used = 1
    except Exception:  # noqa: BLE001 - any cache failure: let the request through, say so in the log
        logger.warning("rate limit %s not counted: the cache cannot be reached", kind, exc_info=True)
        return None
    if used <= allowed:
        return None
    retry_after = max(1, int((window + 1) * WINDOW_SECONDS - now))
    return Refusal(
        f"Too many {limit.what}: at most {allowed} a minute {limit.per}. This one was not carried out; "
        f"try again in {retry_after} seconds.",
        retry_after,
    )
