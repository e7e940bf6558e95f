"""When to serve a gold item: more at the start of a worker's session, fewer later. Pure.

The share of gold falls linearly from `start_rate` (first item of a session) to `floor_rate`
over `decay_items` items and stays there. Rather than drawing at random, the schedule keeps the
number of gold items served close to the expected number, so a worker sees gold at predictable
density and a test can state exactly which items are gold.
"""
from collections.abc import Sequence
from datetime import datetime, timedelta


def gold_rate(index: int, start_rate: float, floor_rate: float, decay_items: int) -> float:
    """Share of gold wanted at the `index`-th item (from 0) of a session."""
    if decay_items <= 0 or index >= decay_items:
        return floor_rate
    return start_rate + (floor_rate - start_rate) * index / decay_items


def gold_due(done: int, gold_done: int, start_rate: float, floor_rate: float, decay_items: int) -> bool:
    """Whether the next item (the `done`-th of the session) should be gold.

    It is when the gold served so far falls short of the expected count up to and including the
    next item, rounded half up.
    """
    expected = sum(gold_rate(k, start_rate, floor_rate, decay_items) for k in range(done + 1))
    return gold_done < int(expected + 0.5)


def session_start(times: Sequence[datetime], gap: timedelta) -> int:
    """Given a worker's submission times newest first, how many belong to the current session.

    A session is a run of submissions without a pause of `gap` or longer between them.
    """
    if not times:
        return 0
    count = 1
    for newer, older in zip(times, times[1:], strict=False):
        if newer - older >= gap:
            break
        count += 1
    return count


def onboarding_verdict(answered: int, correct: int, required: int, pass_rate: float) -> str | None:
    """'qualified', 'failed', or None while the onboarding gold items are not all answered."""
    if answered < required:
        return None
    return "qualified" if correct >= pass_rate * required - 1e-9 else "failed"


def fails_too_many(answered: int, failed: int, min_answered: int, max_failure_rate: float) -> bool:
    """Whether a worker's gold record warrants a soft block: enough answers and too many failures."""
    return answered >= max(1, min_answered) and failed / answered > max_failure_rate
