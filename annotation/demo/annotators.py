"""Simulated annotators that work through the real HTTP views, as a person in a browser would, one
page per call (`rewrite_one`, `vote_one`) so that the demo can give them turns in a fixed order.

Each one logs in with the login form, asks for the next item of the job, reads the utterance and
its slot values off the task page, types rewrites, and posts the form. A careless annotator's
first attempt has a typical mistake; the page refuses it and the annotator corrects it.
"""
import random
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

import requests

from . import rewriter


class TaskPageParser(HTMLParser):
    """Reads what a person reads on the task page: the utterance to rewrite, the slot values to
    keep (the "keep" list), and any problems the page reports."""

    def __init__(self):
        super().__init__()
        self.utterance = None
        self.slot_values = []
        self.problems = []
        self._stack = []  # (tag, classes) of open elements
        self._utterance_parts = None
        self._text = None
        self.shown = {}  # label -> text of the response under vote
        self._shown_label = None

    def _inside(self, tag, cls):
        return any(t == tag and cls in c for t, c in self._stack)

    def handle_starttag(self, tag, attrs):
        classes = (dict(attrs).get("class") or "").split()
        self._stack.append((tag, classes))
        if tag == "span" and "utterance" in classes:
            self._utterance_parts = []
        if (tag == "mark" and self._inside("ul", "keep")) or (tag == "li" and self._inside("div", "problem-summary")):
            self._text = []
        if tag in ("dt", "dd") and self._inside("dl", "shown"):
            self._text = []

    def handle_endtag(self, tag):
        while self._stack:
            open_tag, classes = self._stack.pop()
            if open_tag == tag:
                break
        if tag == "span" and "utterance" in classes and self._utterance_parts is not None:
            self.utterance = "".join(self._utterance_parts).strip()
            self._utterance_parts = None
        if tag == "mark" and self._text is not None and self._inside("ul", "keep"):
            self.slot_values.append("".join(self._text).strip())
            self._text = None
        if tag in ("dt", "dd") and self._text is not None and self._inside("dl", "shown"):
            text = " ".join("".join(self._text).split())
            if tag == "dt":
                self._shown_label = text
            elif self._shown_label is not None:
                self.shown[self._shown_label] = text
            self._text = None
        if tag == "li" and self._text is not None and self._inside("div", "problem-summary"):
            self.problems.append(" ".join("".join(self._text).split()))
            self._text = None

    def handle_data(self, data):
        if self._utterance_parts is not None:
            self._utterance_parts.append(data)
        if self._text is not None:
            self._text.append(data)


def parse_task_page(html: str) -> TaskPageParser:
    parser = TaskPageParser()
    parser.feed(html)
    return parser


@dataclass
class AnnotatorStats:
    username: str
    careless: bool
    submitted: int = 0
    votes: int = 0
    refused: int = 0
    refusal_reasons: list = field(default_factory=list)
    seconds: list = field(default_factory=list)
    errors: list = field(default_factory=list)


class SimulatedAnnotator:
    def __init__(self, base_url, username, password, *, careless=False, seed=0):
        self.base_url = base_url.rstrip("/")
        self.username, self.password = username, password
        self.rng = random.Random(seed)
        self.careless = careless
        self.session = requests.Session()
        # The demo's own server on this machine: no proxy or .netrc from the environment applies,
        # and requests would otherwise read the whole environment again on every request.
        self.session.trust_env = False
        self.stats = AnnotatorStats(username, careless)

    def _csrf(self):
        return self.session.cookies.get("csrftoken", "")

    def _post(self, path_or_url, data):
        url = path_or_url if path_or_url.startswith("http") else self.base_url + path_or_url
        data = {**data, "csrfmiddlewaretoken": self._csrf()}
        return self.session.post(url, data=data, headers={"Referer": url}, timeout=60)

    def login(self):
        self.session.get(self.base_url + "/accounts/login/", timeout=60)
        response = self._post("/accounts/login/", {"username": self.username, "password": self.password})
        if "/accounts/login/" in response.url:
            raise RuntimeError(f"{self.username} could not log in")

    def _seconds(self):
        """Time on one page, drawn from the annotator's own stream (not the clock), so a seeded
        demo stores the same times and raises the same time-based flags on every run."""
        return self.rng.uniform(10, 45) if self.careless else self.rng.uniform(40, 110)

    def rewrite_one(self, job_id: int) -> bool:
        """Claim the next item of the job and rewrite it (correcting a refused first attempt);
        False when nothing is left for this annotator."""
        page = self._post(f"/jobs/{job_id}/next/", {})
        if "/work/" not in page.url or "/done/" in page.url or page.status_code != 200:
            return False
        seconds = self._seconds()
        task = parse_task_page(page.text)
        if task.utterance is None:
            self.stats.errors.append(f"no utterance on {page.url}")
            return False
        if self.careless and self.rng.random() < 0.5:
            answers = rewriter.careless_answers(task.utterance, task.slot_values, self.rng)
            refused = self._submit(page.url, answers, seconds)
            if refused.url != page.url:  # the mistake happened to pass: it is stored
                self._done(seconds)
                return True
            self.stats.refused += 1
            self.stats.refusal_reasons.extend(parse_task_page(refused.text).problems)
            page = refused
        answers = rewriter.careful_answers(task.utterance, task.slot_values, self.rng)
        if self.careless and self.rng.random() < 0.4:
            answers["paraphrase"] = rewriter.sloppy(answers["paraphrase"], self.rng)  # passes the checks, fails a reader
        after = self._submit(page.url, answers, seconds)
        if after.url == page.url:
            self.stats.errors.append(f"careful answers refused: {parse_task_page(after.text).problems}")
            return False
        self._done(seconds)
        return True

    def vote_one(self, job_id: int) -> bool:
        """Claim the next rewrite to vote on and vote; False when none is left for this annotator."""
        page = self._post(f"/jobs/{job_id}/next/", {})
        if "/work/" not in page.url or "/done/" in page.url or page.status_code != 200:
            return False
        shown = parse_task_page(page.text).shown
        if not shown:
            self.stats.errors.append(f"no response to vote on at {page.url}")
            return False
        # One yes/no per variant shown (the page's `vote__<variant>` fields). A simplified rewrite may
        # be terse, so only the other variants are judged by how they read.
        verdicts = {
            label.lower(): label.lower() == "simplified" or rewriter.looks_recognizable(text) for label, text in shown.items()
        }
        if self.careless:  # a careless voter says yes to everything (issue 22: the model must catch it)
            verdicts = dict.fromkeys(verdicts, True)
        elif self.rng.random() < 0.1:  # readers disagree now and then
            flipped = self.rng.choice(sorted(verdicts))
            verdicts[flipped] = not verdicts[flipped]
        unreadable = [name for name, ok in verdicts.items() if not ok]
        answers = {f"vote__{name}": "for" if ok else "against" for name, ok in verdicts.items()}
        answers["reason"] = f"I cannot make sense of the {', '.join(unreadable)} rewrite." if unreadable else ""
        after = self._submit(page.url, answers, self.rng.uniform(5, 20))
        if after.url == page.url:
            self.stats.errors.append(f"vote refused: {parse_task_page(after.text).problems}")
            return False
        self.stats.votes += 1
        return True

    def _done(self, seconds):
        self.stats.submitted += 1
        self.stats.seconds.append(round(seconds, 3))

    def _submit(self, url, answers, seconds):
        return self._post(url, {**answers, "active_seconds": f"{seconds:.2f}"})


def reason_code(message: str) -> str:
    """A short label for a refusal message, for the demo's summary."""
    for pattern, label in [
        (r"slot value", "a slot value was not kept"),
        (r"same as the original", "a rewrite copied the original"),
        (r"only in case, spacing or punctuation", "a rewrite changed only case, spacing or punctuation"),
        (r"more (words|characters)", "verbose was not longer"),
        (r"fewer (words|characters)", "simplified was not shorter"),
        (r"typing mistakes", "typos changed too much"),
        (r"write a rewrite", "a field was left empty"),
    ]:
        if re.search(pattern, message):
            return label
    return "other"
