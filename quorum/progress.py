"""The one shape of a background run's live progress, shared by every app's progress endpoint.

A run row (`annotation.models.BackgroundRun`: status, done, total, error) is answered as JSON with
its state and `html`, the page fragment that shows it, rendered by the app's own template. The page
includes that fragment; while the run is pending or running the fragment carries
`data-progress-url`, and `static/progress.js` replaces it with the `html` of each answer until a
fragment comes without one (the result, or the error with what to do). No page reload, no request
held while the work runs.

Work that keeps only its latest attempt (`annotation.models.LatestAttempt`: a job's flag run, a
campaign's results computation) has no units to count: `attempt_state` says how it stands instead,
and `state_response` answers any such state with its fragment. `page_again` is the link such a
fragment offers once the work is done, to the page that shows what it stored.
"""
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.http import JsonResponse
from django.template.loader import render_to_string
from django.utils import timezone

from . import background

FINISHED = ("succeeded", "failed")


def queue_refused(refused_at: datetime, retry_by: datetime) -> str:
    """Why work is still waiting when the broker did not take it (`background.after_commit`'s
    `on_refused`): when, by when a beat sweep queues it again, and what the operator can do. Kept as
    the waiting run's or attempt's `error`, so its page fragment and progress answer say it."""
    def at(moment: datetime) -> str:
        return timezone.localtime(moment).strftime("%H:%M %Z")

    return (
        f"the background queue could not be reached at {at(refused_at)}; Quorum will try again by itself "
        f"by {at(retry_by)} (or start a worker, or check the broker)"
    )


def note_refused(run: Any) -> None:
    """Say on a pending run (`BackgroundRun`: imports, exports, campaign runs, scoring runs) that the
    broker did not take its task. The beat sweeps queue a pending run again once it is
    QUORUM_RUN_DEADLINE_MINUTES old, at their next round; the run's start clears the note."""
    now = timezone.now()
    due = max(run.created_at + timedelta(minutes=settings.QUORUM_RUN_DEADLINE_MINUTES), now)
    retry_by = due + timedelta(seconds=settings.QUORUM_LOST_WORK_SWEEP_SECONDS)
    type(run)._default_manager.filter(pk=run.pk, status="pending").update(error=queue_refused(now, retry_by))


def queue_pending_again(task: str, runs: Iterable[Any]) -> int:
    """A beat sweep's retry of pending runs (`BackgroundRun`s with `pk` and `created_at`): each is
    queued again, and one the broker refuses again gets a fresh note, so its page does not keep
    promising a retry by a time that has passed. Returns how many were queued."""
    queued = 0
    for run in runs:
        if background.queue_now(task, run.pk):
            queued += 1
        else:
            note_refused(run)
    return queued


def is_finished(run: Any) -> bool:
    return run.status in FINISHED


def run_state(run: Any) -> dict:
    """What a client needs to follow a run: its state, done/total (total null while unknown), the
    share done (0 to 1) and, once failed, the reason in words a user can act on."""
    return {
        "id": run.pk, "status": run.status, "status_display": run.get_status_display(), "done": run.done, "total": run.total,
        "progress": round(run.progress, 4), "finished": is_finished(run), "error": run.error,
    }


def attempt_state(attempt: Any) -> dict:
    """What a client needs to follow a latest attempt (`annotation.selectors.attempts.AttemptState`):
    its state, when it was queued, started and finished (null until then), and the reason once
    failed (while queued, why it may not have reached a worker). No done/total: nothing is counted."""
    return {
        "status": attempt.status, "status_display": attempt.status_display, "finished": is_finished(attempt),
        "queued_at": attempt.queued_at, "started_at": attempt.started_at, "finished_at": attempt.finished_at,
        "error": attempt.error,
    }


def progress_response(request, run: Any, template: str, context: dict | None = None) -> JsonResponse:
    """The JSON progress answer of `run`, with `template` rendered for it (context: `run`,
    `finished` and `context`) as `html`."""
    return state_response(request, run_state(run), template, {"run": run, "finished": is_finished(run), **(context or {})})


def state_response(request, state: dict, template: str, context: dict) -> JsonResponse:
    """The JSON progress answer of work whose `state` (`run_state`, `attempt_state`) says whether
    it is `finished`, with `template` rendered with `context` as `html`; never cached."""
    html = render_to_string(template, context, request=request)
    response = JsonResponse({**state, "html": html})
    response["Cache-Control"] = "no-store"
    return response


def page_again(path: str, query: dict, stored_at: datetime, anchor: str) -> str:
    """The link from a finished run's fragment to the page that shows what it stored, at `anchor`.
    It carries `stored` (when, in seconds) besides the page's own `query`: a link that differed
    from the page's address only by its anchor would scroll the page, not load it again."""
    return f"{path}?{urlencode({**query, 'stored': int(stored_at.timestamp())})}#{anchor}"
