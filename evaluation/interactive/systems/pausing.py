"""When a dialog system that keeps failing is paused (no new chats for it). Pure: no Django.

`recent` is the system's latest system turns, newest first, True where the turn failed (a timeout,
an error, a reply that broke the contract). Two rules, either pauses:
- `consecutive` failed turns in a row (a system that is down);
- a failure rate of `rate` or more over the last `window` turns, once there are that many (a
  system that fails often enough to spoil dialogs, though it answers in between).
"""


def pause_reason(recent: list[bool], *, consecutive: int, window: int, rate: float) -> str | None:
    """Why to pause, or None to keep the system running."""
    run = 0
    for failed in recent:
        if not failed:
            break
        run += 1
    if consecutive and run >= consecutive:
        return f"{run} consecutive failed turns (the limit is {consecutive})"
    last = recent[:window]
    if window and len(last) >= window:
        failures = sum(last)
        if failures / window >= rate:
            return f"{failures} of the last {window} turns failed (the limit is {rate:.0%})"
    return None
