"""The one shape of a background run's live progress, shared by every app's progress endpoint.

A run row (`annotation.models.BackgroundRun`: status, done, total, error) is answered as JSON with
its state and `html`, the page fragment that shows it, rendered by the app's own template. The page
includes that fragment; while the run is pending or running the fragment carries
`data-progress-url`, and `static/progress.js` replaces it with the `html` of each answer until a
fragment comes without one (the result, or the error with what to do). No page reload, no request
held while the work runs.
"""
from typing import Any

from django.http import JsonResponse
from django.template.loader import render_to_string

FINISHED = ("succeeded", "failed")


def is_finished(run: Any) -> bool:
    return run.status in FINISHED


def run_state(run: Any) -> dict:
    """What a client needs to follow a run: its state, done/total (total null while unknown), the
    share done (0 to 1) and, once failed, the reason in words a user can act on."""
    return {
        "id": run.pk, "status": run.status, "status_display": run.get_status_display(), "done": run.done, "total": run.total,
        "progress": round(run.progress, 4), "finished": is_finished(run), "error": run.error,
    }


def progress_response(request, run: Any, template: str, context: dict | None = None) -> JsonResponse:
    """The JSON progress answer of `run`, with `template` rendered for it (context: `run`,
    `finished` and `context`) as `html`."""
    html = render_to_string(template, {"run": run, "finished": is_finished(run), **(context or {})}, request=request)
    response = JsonResponse({**run_state(run), "html": html})
    response["Cache-Control"] = "no-store"
    return response
