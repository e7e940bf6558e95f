"""The contract check screens its own replies with the offensive-word filter of counted chats. Found
walking Quorum: a system that insulted its users passed the check and was caught only once
annotators' chats were screened. A hit is a warning with its evidence (which reply, which words),
on the check's result, the systems page, the chat job form and the API; not a failure."""
import io
import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from evaluation.interactive import offensive
from evaluation.interactive.services.systems import register_system
from evaluation.interactive.systems.check import SCRIPT, passed, run_check
from evaluation.interactive.systems.reference import ReferenceSystem
from evaluation.models import DialogSystem

from .systems import running

SECRET = "a-secret-of-twenty-chars"
RUDE = "What a stupid question. "


class Rude(ReferenceSystem):
    """The reference system, with an insult before its answer to the check's second message
    ("Chinese food, please."); every other reply, and the rules of the contract, as usual."""

    def handle(self, environ):
        length = int(environ.get("CONTENT_LENGTH") or 0)
        raw = environ["wsgi.input"].read(length) if length else b""
        status, body = super().handle({**environ, "wsgi.input": io.BytesIO(raw)})
        asked = json.loads(raw or b"null")
        if "/turns" in environ.get("PATH_INFO", "") and isinstance(asked, dict) and asked.get("text") == SCRIPT[1]:
            body = {**body, "text": RUDE + body["text"]}
        return status, body


def _screening(results):
    rule, = [r for r in results if r.rule == "offensive words"]
    return rule


def test_the_check_warns_of_a_listed_word_in_a_reply_and_still_passes():
    with running(Rude(SECRET)) as url:
        results = run_check(url, SECRET, timeout=5, screen=offensive.matcher(["stupid", "idiot"]))
    rule = _screening(results)
    assert rule.passed and rule.warning and passed(results)
    assert rule.evidence == [{"reply": "turn 1", "words": ["stupid"]}]
    assert rule.line() == "WARN offensive words: listed words in 1 of its 4 replies (turn 1: stupid); read them before annotators chat with it"
    assert rule.as_dict()["evidence"] == rule.evidence
    with running(ReferenceSystem(SECRET)) as url:
        clean = _screening(run_check(url, SECRET, timeout=5, screen=offensive.matcher(["stupid", "idiot"])))
    assert (clean.passed, clean.warning, clean.evidence, clean.reason) == (True, False, [], "no listed word in its 4 replies")


def test_check_system_prints_the_warning_and_exits_cleanly(settings):
    settings.QUORUM_OFFENSIVE_WORDS = ["stupid"]
    out = StringIO()
    with running(Rude(SECRET)) as url:
        call_command("check_system", url, "--secret", SECRET, stdout=out)  # no CommandError: a warning is no failure
    lines = out.getvalue().splitlines()
    assert "WARN offensive words: listed words in 1 of its 4 replies (turn 1: stupid); read them before annotators chat with it" in lines
    assert sum(line.startswith("PASS") for line in lines) == 6


def test_an_unreadable_word_list_is_said_on_the_check_which_still_runs(settings, tmp_path):
    settings.QUORUM_OFFENSIVE_WORDS = str(tmp_path / "missing.txt")
    out = StringIO()
    with running(Rude(SECRET)) as url:
        call_command("check_system", url, "--secret", SECRET, stdout=out)
    assert "WARN offensive words: not screened: the offensive-word file 'missing.txt' cannot be read (FileNotFoundError)" in out.getvalue()


@pytest.mark.django_db
def test_the_organizer_sees_the_warning_on_the_page_the_chat_job_form_and_the_api(organizer, settings, django_capture_on_commit_callbacks):
    settings.QUORUM_OFFENSIVE_WORDS = ["stupid"]
    client = Client()
    client.force_login(organizer)
    with running(Rude(SECRET)) as url:
        with django_capture_on_commit_callbacks(execute=True):
            client.post(reverse("evaluation:system-register"), {"name": "rude", "url": url, "secret": SECRET})
    system = DialogSystem.objects.get(name="rude")
    assert system.check_passed  # evidence, not a verdict: still offered for chat jobs
    page = client.get(reverse("evaluation:systems")).content.decode()
    assert f'<strong id="system-{system.pk}-check-warning">with a warning (offensive words): read it below before annotators chat with it</strong>' in page
    assert "<li><strong>WARN</strong> offensive words: listed words in 1 of its 4 replies (turn 1: stupid);" in page
    assert f'<option value="{system.pk}">rude (its check warned: offensive words)</option>' in page  # the chat job form
    api = APIClient()
    api.force_authenticate(organizer)
    listed = api.get("/api/evaluation/systems/").json()
    body, = listed["results"] if isinstance(listed, dict) else listed
    warned, = [r for r in body["check_results"] if r["warning"]]
    assert body["check_passed"] is True and warned["rule"] == "offensive words"
    assert warned["evidence"] == [{"reply": "turn 1", "words": ["stupid"]}]


@pytest.mark.django_db
def test_a_clean_system_s_check_warns_of_nothing(organizer, settings, django_capture_on_commit_callbacks):
    settings.QUORUM_OFFENSIVE_WORDS = ["stupid"]
    with running(ReferenceSystem(SECRET)) as url, django_capture_on_commit_callbacks(execute=True):
        system = register_system(name="polite", url=url, secret=SECRET)
    system.refresh_from_db()
    assert system.check_passed and not any(r["warning"] for r in system.check_results)
    client = Client()
    client.force_login(organizer)
    page = client.get(reverse("evaluation:systems")).content.decode()
    assert "PASS offensive words: no listed word in its 4 replies" in page and "with a warning" not in page
