"""Typing telemetry on the work page: the worker is told, the page's counts are stored where the
flags read them, a refused submission keeps them, and bad telemetry never costs the worker their answer."""
import json

import pytest
from django.test import Client
from django.urls import reverse
from django.utils.html import escape

from annotation.models import Response, Worker
from annotation.selectors.quality import job_flags
from annotation.services.claims import claim_next_slot
from annotation.services.responses import confirm
from annotation.work_tokens import make_token
from tests.factories import good_answers, make_corpus, make_live_job

pytestmark = pytest.mark.django_db


@pytest.fixture
def job():
    return make_live_job(make_corpus(dialogs=2, user_turns=1), name="rewrites")


def claimed(job, name="crowd-1"):
    """A crowd worker's claimed slot and its work URL (crowd workers need only the token)."""
    worker = Worker.objects.create(provider="prolific", external_id=name)
    slot = claim_next_slot(job=job, worker=worker)
    return slot, reverse("work", args=[make_token(slot)])


def test_the_work_page_tells_the_worker_that_typing_is_recorded(job):
    _slot, url = claimed(job)
    page = Client().get(url).content.decode()
    assert 'id="telemetry-notice"' in page
    assert "for quality control" in page.lower() and "type or paste" in page
    assert '<input type="hidden" name="telemetry" id="telemetry" value="">' in page


def test_posted_telemetry_is_stored_and_read_by_the_flags(job):
    slot, url = claimed(job)
    counts = {"paraphrase": {"pasted_chars": 70, "typed_chars": 3, "keystrokes": 5, "paste_events": 1},
              "typos": {"pasted_chars": 0, "typed_chars": 52, "keystrokes": 60, "paste_events": 0}}
    response = Client().post(url, {**good_answers(slot.item), "telemetry": json.dumps(counts)})
    assert response.status_code == 302
    stored = Response.objects.get(slot=slot)
    assert stored.telemetry == counts
    confirm(stored, actor="provider:prolific")  # a crowd response counts once the provider confirms it
    # The flags read it: 70 of 125 characters pasted is above the default paste share (0.5).
    assert job_flags(job).responses.get(stored.pk) == ["pasted"]


def test_typed_text_is_not_flagged(job):
    slot, url = claimed(job)
    counts = {"paraphrase": {"pasted_chars": 0, "typed_chars": 60, "keystrokes": 70, "paste_events": 0}}
    Client().post(url, {**good_answers(slot.item), "telemetry": json.dumps(counts)})
    stored = Response.objects.get(slot=slot)
    assert "pasted" not in job_flags(job).responses.get(stored.pk, [])


@pytest.mark.parametrize("telemetry", ["not json", "[1, 2]", json.dumps({"paraphrase": {"pasted_chars": -1, "evil": "<x>"}}), "x" * 5000, ""])
def test_bad_telemetry_never_costs_the_answer(telemetry, job):
    slot, url = claimed(job)
    response = Client().post(url, {**good_answers(slot.item), "telemetry": telemetry})
    assert response.status_code == 302
    stored = Response.objects.get(slot=slot)
    assert stored.answers == good_answers(slot.item) and stored.telemetry == {}


def test_a_refused_submission_keeps_the_counts_for_the_next_try(job):
    slot, url = claimed(job)
    counts = {"paraphrase": {"pasted_chars": 12, "typed_chars": 4, "keystrokes": 6, "paste_events": 1}}
    answers = {**good_answers(slot.item), "verbose": ""}
    refused = Client().post(url, {**answers, "telemetry": json.dumps(counts)})
    assert refused.status_code == 400
    page = refused.content.decode()
    assert f'value="{escape(json.dumps(counts))}"' in page  # annotate.js goes on counting from here
    assert not Response.objects.filter(slot=slot).exists()
