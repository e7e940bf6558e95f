"""The interactive part of `make demo` (PROTOCOLS.md section 3): Quorum's reference restaurant
system and a deliberately weaker variant (it ignores the area asked for) served on local ports the
OS picks, registered (the contract check runs), a chat job over a few goals, simulated users who
chat with both through the real work pages, and the interactive leaderboard.

Registered in `annotation.extensions.demo_parts` by evaluation's `ready()`, so annotation never imports it.
"""
import json
import random
import re
from html.parser import HTMLParser

import requests
from django.utils import timezone

from evaluation.interactive import selectors
from evaluation.interactive.services.chats import create_chat_job
from evaluation.interactive.services.systems import address_policy, import_goals, register_system
from evaluation.interactive.systems.reference import DB, ReferenceSystem, serve

#: Goals over the reference database. Where a food is served in two areas, the weaker variant
#: (which ignores the area) offers the wrong one, so the two systems differ by design.
GOALS = [
    {"food": "chinese", "area": "centre"}, {"food": "indian", "area": "centre"}, {"food": "italian", "area": "centre"},
    {"food": "thai", "area": "north"}, {"food": "japanese", "area": "west"}, {"food": "italian", "area": "south"},
]
SECRET_BYTES = 16


class _GoalReader(HTMLParser):
    """Reads the goal off the work page (the list #goal), as a worker reads it."""

    def __init__(self):
        super().__init__()
        self.lines, self._in_goal, self._text = [], False, None

    def handle_starttag(self, tag, attrs):
        if tag == "ul" and dict(attrs).get("id") == "goal":
            self._in_goal = True
        elif tag == "li" and self._in_goal:
            self._text = []

    def handle_endtag(self, tag):
        if tag == "li" and self._text is not None:
            self.lines.append(" ".join("".join(self._text).split()))
            self._text = None
        elif tag == "ul":
            self._in_goal = False

    def handle_data(self, data):
        if self._text is not None:
            self._text.append(data)


class SimulatedChatUser:
    """A worker in a browser: logs in, takes the next chat, reads the goal, chats, judges the dialog
    by what the system said (it does not see the database), rates, and submits the form."""

    def __init__(self, base_url, username, password, seed):
        self.base_url, self.username, self.password = base_url.rstrip("/"), username, password
        self.session, self.rng = requests.Session(), random.Random(seed)
        self.session.trust_env = False  # the demo's own server: as annotation.demo's simulated annotators
        self.dialogs, self.errors = 0, []

    def _post(self, url, data):
        url = url if url.startswith("http") else self.base_url + url
        return self.session.post(url, data={**data, "csrfmiddlewaretoken": self.session.cookies.get("csrftoken", "")}, headers={"Referer": url}, timeout=60)

    def login(self):
        self.session.get(self.base_url + "/accounts/login/", timeout=60)
        if "/accounts/login/" in self._post("/accounts/login/", {"username": self.username, "password": self.password}).url:
            raise RuntimeError(f"{self.username} could not log in")

    def _chat(self, url, body):
        answer = self.session.post(url, json=body, timeout=60)
        if answer.status_code != 200:
            raise RuntimeError(f"chat {body.get('action')} answered {answer.status_code}: {answer.text[:200]}")
        return answer.json()

    def chat_one(self, job_id) -> bool:
        page = self._post(f"/jobs/{job_id}/next/", {})
        if "/work/" not in page.url or "/done/" in page.url or page.status_code != 200:
            return False
        reader = _GoalReader()
        reader.feed(page.text)
        goal_line = " ".join(reader.lines)
        food, area = re.search(r"serving (\w+) food", goal_line), re.search(r"in the (\w+)\b(?! price)", goal_line)  # as goals.py words a goal
        if not food or not area:
            self.errors.append(f"no goal on {page.url}: {goal_line!r}")
            return False
        food, area = food.group(1), area.group(1)
        chat_url = page.url.rstrip("/") + "/chat/"
        self._chat(chat_url, {"action": "open"})
        state = self._chat(chat_url, {"action": "say", "text": f"Hi, I want {food} food in the {area}."})
        offer = state["turns"][-1]["text"]
        if f"in the {area}" not in offer:
            state = self._chat(chat_url, {"action": "say", "text": f"No, it has to be in the {area}, please."})
            offer = state["turns"][-1]["text"]
        fits = f"in the {area}" in offer and food in offer
        if fits:
            state = self._chat(chat_url, {"action": "say", "text": "Great, please book it for 2 people."})
            fits = "reference number" in state["turns"][-1]["text"]
        outcome = "success" if fits else "fail"
        self._chat(chat_url, {"action": "end", "reason": outcome})
        understanding = (5 if fits else 2) - (self.rng.random() < 0.3)
        appropriateness = (4 if fits else 3) + (self.rng.random() < 0.3 and fits)
        answers = {
            "outcome": outcome, "outcome_reason": "" if fits else f"It kept offering a place outside the {area}.",
            "understanding": str(understanding), "understanding_reason": "It got what I asked." if fits else "It ignored the area.",
            "appropriateness": str(int(appropriateness)), "appropriateness_reason": "Short and polite.",
        }
        saved = self._post(page.url, answers)
        if saved.url == page.url:
            self.errors.append(f"{self.username}: the verdict was refused on {page.url}")
            return False
        self.dialogs += 1
        return True


def _free_name(name, stamp):
    """The plain name on a fresh database (so a seeded run prints the same table), else stamped."""
    return f"{name} {stamp}" if selectors.dialog_systems().filter(name=name).exists() else name


def run_interactive_demo(*, server, organizer, annotator_names, password, seed, say) -> dict:
    """Serve both systems, register them, run a chat job with simulated users, print the leaderboard."""
    refused = address_policy().refusal("127.0.0.1", "127.0.0.1")
    if refused:  # the systems run on this machine: the operator allows it on purpose
        say("9. Interactive evaluation skipped: the demo's systems run on 127.0.0.1, which Quorum may not call"
            " unless QUORUM_SYSTEM_ALLOWED_HOSTS lists it (`make demo` does)")
        return {"skipped": refused}
    stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
    rng = random.Random(seed)
    secret = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(SECRET_BYTES * 2))
    # Both systems keep serving (daemon threads) while the demo serves the UI, so the registered
    # systems stay reachable for anyone who tries a chat; they stop with the process.
    strong_server, strong_url = serve(ReferenceSystem(secret))
    weak_server, weak_url = serve(ReferenceSystem(secret, weaker=True))
    systems = [
        register_system(name=_free_name("reference-restaurant", stamp), url=strong_url, secret=secret),
        register_system(name=_free_name("reference-restaurant-weaker", stamp), url=weak_url, secret=secret),
    ]
    checks = ", ".join(f"{s.name} {'passed' if s.check_passed else 'FAILED'}" for s in systems)
    lines = b"".join(
        b'{"id": "demo-%d", "goal": {"restaurant": {"info": {"food": "%s", "area": "%s"}, "book": {"people": "2"}}}}\n'
        % (n, g["food"].encode(), g["area"].encode())
        for n, g in enumerate(GOALS)
    )
    goal_set = import_goals(name=f"Demo restaurant goals {stamp}", goals_file=lines, databases={"restaurant": json.dumps(DB["restaurant"]).encode()})
    job = create_chat_job(
        name=f"Demo: chat with restaurant systems {stamp}", systems=systems, goal_set=goal_set, created_by=organizer,
        instructions="Find and book the restaurant your goal describes, then say whether the system succeeded.",
        seed=seed,  # the name carries a time stamp: the order must follow the demo's seed, not the name
    )
    say(f"9. Interactive evaluation: the reference restaurant system and a weaker variant on {strong_url} and {weak_url}"
        f" (contract check: {checks}); chat job {job.pk} with {job.items.count()} dialogs ({len(GOALS)} goals x 2 systems)")
    users = [SimulatedChatUser(server.url, name, password, seed * 1000 + i) for i, name in enumerate(annotator_names)]
    for user in users:
        user.login()
    busy = list(users)
    while busy:
        busy = [u for u in busy if u.chat_one(job.pk)]
    errors = [e for u in users for e in u.errors]
    if errors:
        raise RuntimeError("simulated chat users failed:\n" + "\n".join(errors))
    dialogs = sum(u.dialogs for u in users)
    say(f"   {dialogs} dialogs through the work pages; the interactive leaderboard:")
    return {"job": job.pk, "dialogs": dialogs, "leaderboard": report_leaderboard(job, say)}


#: The figures of each system the demo's summary keeps.
SUMMARY_FIGURES = ("rank", "system", "dialogs", "success", "grounded_success", "final", "final_ci_low", "final_ci_high", "understanding", "appropriateness")


def report_leaderboard(job, say) -> list[dict]:
    """Print the chat job's leaderboard as its results page shows it: the page's own read (its
    bootstrap seed, not the demo's), so the console and the page give the same intervals."""
    from evaluation.stats import interactive  # the demo's only use of it: web workers do not import it

    result, _dialogs = selectors.interactive_board(job)
    for line in interactive.to_markdown(result).splitlines():
        say(f"     {line}" if line else "")
    return [{k: row[k] for k in SUMMARY_FIGURES} for row in result["systems"]]
