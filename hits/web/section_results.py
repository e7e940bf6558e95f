"""What the crowd section's last action did (settle, bonus, settings), shown inside the section.

The actions send the organizer back to the job page at `#crowd`; Django's messages render at the top
of the page, out of view there, so the section keeps its own results in the session, by job, and
shows them once (hits_tags.job_crowd takes them).
"""
from typing import Literal

KEY = "hits.crowd_results"
#: Lines kept for one action; the bulk actions say how many more there were.
MOST = 60

Level = Literal["success", "error", "info"]


def keep(request, job_id: int, level: Level, text: str) -> None:
    results = request.session.get(KEY) or {}
    lines = results.setdefault(str(job_id), [])
    if len(lines) < MOST:
        lines.append({"level": level, "text": text})
    request.session[KEY] = results


def take(request, job_id: int) -> list[dict]:
    """The results kept for the job, once: they are gone after this read."""
    if request is None or not hasattr(request, "session"):
        return []
    results = request.session.get(KEY) or {}
    lines = results.pop(str(job_id), [])
    if lines:
        request.session[KEY] = results
    return lines
