"""What the tests of background attempts (`annotation.services.attempts`) share."""
import html
import re
from urllib.parse import urlsplit


def look_while_running(monkeypatch, module, name: str, look) -> list:
    """Replace `module.name`, the work an attempt runs, by one that first calls `look()`: how the
    pages stand while the attempt is running. Returns the list of what was seen, one per run."""
    seen = []
    work = getattr(module, name)

    def look_then_work(*args, **kwargs):
        seen.append(look())
        return work(*args, **kwargs)

    monkeypatch.setattr(module, name, look_then_work)
    return seen


def line_text(fragment: str) -> str:
    """The text of an attempt's line, as read: tags dropped, entities decoded, whitespace collapsed."""
    return html.unescape(" ".join(re.sub(r"<[^>]+>", "", fragment).split()))


def assert_answer(state: dict, status: str, url: str, text: str) -> None:
    """A progress endpoint's answer for an attempt (`quorum.progress.attempt_state`): its status,
    finished once it has ended, its fragment following `url` only while the attempt is queued or
    running, and the line's text."""
    under_way = status in ("queued", "running")
    assert (state["status"], state["finished"]) == (status, not under_way)
    assert "done" not in state and "progress" not in state  # nothing is counted
    assert (f'data-progress-url="{url}"' in state["html"]) is under_way
    assert ("data-progress-url" in state["html"]) is under_way
    assert line_text(state["html"]) == text


def run_followed(monkeypatch, module, name: str, follow, task) -> tuple[dict, dict]:
    """Run the queued `task` as a worker would, asking `follow()` (a progress endpoint) while its
    work (`module.name`) runs and once it has ended: the answers (running, finished)."""
    seen = look_while_running(monkeypatch, module, name, follow)
    task()
    return seen[0], follow()


def shown_link(fragment: str, anchor: str):
    """The "show them" link of a finished attempt's line whose id is `anchor`, split."""
    return urlsplit(html.unescape(re.search(rf'<a href="([^"]+)" id="{anchor}-new"[^>]*>show them</a>', fragment).group(1)))
