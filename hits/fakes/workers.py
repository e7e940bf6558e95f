"""Simulated crowd workers for `manage.py rehearse`: they take an assignment at the fake provider,
arrive through Quorum's real entry URL over HTTP, read and answer the task page, and follow the
page that sends them back to the provider (MTurk's externalSubmit form, Prolific's completion URL).

No Django import. Every request goes through `_request`, which refuses any address outside the
allowed origins (the local app and the local fake), so a simulated worker never reaches a real
provider whatever link a page gives it.
"""
import random
import re
from dataclasses import dataclass
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

import requests

from annotation.demo import rewriter
from annotation.demo.annotators import parse_task_page

from .prolific_server import SESSION_COOKIE

MAX_REDIRECTS = 10


class LeftLocalNetwork(RuntimeError):
    """A page sent the simulated worker outside the rehearsal's own servers; nothing was requested."""


@dataclass
class WorkerOutcome:
    worker: str
    assignment: str = ""
    stage: str = "start"  # how far the worker got: accepted, task, saved, returned
    ok: bool = False
    error: str = ""


class _FormReader(HTMLParser):
    """The first POST form of a page: its action and fields (text areas, radio groups, hidden inputs)."""

    def __init__(self):
        super().__init__()
        self.action = None
        self.hidden = {}
        self.textareas = []
        self.radios = {}  # name -> values in page order
        self._in_form = False
        self._done = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if self._done:
            return
        if tag == "form" and (a.get("method") or "").lower() == "post" and self.action is None:
            self._in_form, self.action = True, a.get("action") or ""
        if not self._in_form or not a.get("name"):
            return
        kind = (a.get("type") or "text").lower()
        if tag == "textarea" or (tag == "input" and kind == "text"):
            self.textareas.append(a["name"])
        elif tag == "input" and kind == "radio":
            self.radios.setdefault(a["name"], []).append(a.get("value", ""))
        elif tag == "input" and kind == "hidden":
            self.hidden[a["name"]] = a.get("value", "")

    def handle_endtag(self, tag):
        if tag == "form" and self._in_form:
            self._in_form, self._done = False, True


def read_form(html: str) -> _FormReader:
    reader = _FormReader()
    reader.feed(html)
    return reader


def origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


class SimulatedCrowdWorker:
    """One worker of the rehearsal. `cookies` are the provider's own cookies (sent to the fake only)."""

    def __init__(self, worker_id: str, *, allowed_origins, provider_origin: str, cookies=None, seed=0):
        self.worker_id = worker_id
        self.allowed = {origin(u) for u in allowed_origins}
        self.provider_origin = origin(provider_origin)
        self.provider_cookies = dict(cookies or {})
        self.rng = random.Random(seed)
        self.http = requests.Session()
        self.http.trust_env = False  # no proxy from the environment: the servers are local
        self.provider_responses: list[tuple[str, str, int]] = []  # what the fake answered when the worker was sent back

    def _request(self, method: str, url: str, **kwargs) -> requests.Response:
        """A request that follows redirects itself, refusing any address outside the allowed origins."""
        for _ in range(MAX_REDIRECTS):
            if origin(url) not in self.allowed:
                raise LeftLocalNetwork(f"refused to open {origin(url)}: not a server of this rehearsal")
            headers = dict(kwargs.pop("headers", {}) or {})
            if origin(url) == self.provider_origin and self.provider_cookies:
                headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.provider_cookies.items())
            response = self.http.request(method, url, headers=headers, allow_redirects=False, timeout=60, **kwargs)
            if origin(url) == self.provider_origin:
                self.provider_responses.append((method, url, response.status_code))
            if response.status_code not in (301, 302, 303, 307, 308):
                return response  # its `url` is where the redirects ended
            url = urljoin(url, response.headers["Location"])
            if response.status_code in (301, 302, 303):
                method, kwargs = "GET", {}
        raise RuntimeError(f"more than {MAX_REDIRECTS} redirects")

    def answers_for(self, html: str) -> dict:
        """Valid answers to the task page: careful rewrites for text fields, a middle choice for scales."""
        task = parse_task_page(html)
        form = read_form(html)
        rewrites = rewriter.careful_answers(task.utterance, task.slot_values, self.rng) if task.utterance else {}
        answers = {k: v for k, v in form.hidden.items() if k not in ("telemetry",)}
        for name in form.textareas:
            answers[name] = rewrites.get(name) or "This looks clear and fine to me."
        for name, values in form.radios.items():
            answers[name] = values[len(values) // 2] if values else ""
        answers["active_seconds"] = f"{self.rng.uniform(40, 110):.1f}"
        return answers

    def work(self, entry_url: str, outcome: WorkerOutcome) -> WorkerOutcome:
        """Arrive, answer one item, and be sent back to the provider. Fills and returns `outcome`."""
        try:
            page = self._request("GET", entry_url)
            if page.status_code != 200 or "/work/" not in page.url:
                outcome.error = f"entry answered {page.status_code}: {_text_of(page.text)}"
                return outcome
            outcome.stage = "task"
            answers = self.answers_for(page.text)
            action = read_form(page.text).action
            after = self._request("POST", urljoin(page.url, action or page.url), data=answers)
            if after.url == page.url or after.status_code >= 400 and "/crowd/done/" not in after.url:
                problems = parse_task_page(after.text).problems
                outcome.error = f"submission refused ({after.status_code}): {'; '.join(problems) or _text_of(after.text)}"
                return outcome
            outcome.stage = "saved"
            if origin(after.url) != self.provider_origin:
                # MTurk: the done page holds a form that the browser posts to turkSubmitTo/mturk/externalSubmit.
                form = read_form(after.text)
                if form.action is None:
                    outcome.error = f"the done page did not send the worker back ({after.status_code})"
                    return outcome
                after = self._request("POST", urljoin(after.url, form.action), data=form.hidden)
            if after.status_code != 200 or origin(after.url) != self.provider_origin:
                outcome.error = f"the provider answered {after.status_code} at {after.url}"
                return outcome
            outcome.stage, outcome.ok = "returned", True
        except (requests.RequestException, LeftLocalNetwork, RuntimeError) as exc:
            outcome.error = f"{type(exc).__name__}: {exc}"
        return outcome


def _text_of(html: str) -> str:
    """The alert or first words of a page, for a short error."""
    alert = re.search(r'role="alert"[^>]*>(.*?)<', html or "", re.S)
    text = alert.group(1) if alert else re.sub(r"<[^>]+>", " ", html or "")
    return " ".join(text.split())[:200]


def prolific_cookie(session_id: str) -> dict:
    return {SESSION_COOKIE: session_id}
