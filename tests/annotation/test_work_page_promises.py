"""What the work page tells a worker about keeping their work holds for the page they are on: a page
of recordings keeps no draft (static/drafts.js leaves it alone), so it must not promise that a reload
keeps what was done there, and must say that a reload loses the recordings."""
import re

import pytest
from django.test import Client
from django.urls import reverse

from annotation.services.claims import claim_next_slot
from annotation.work_tokens import make_token
from tests.factories import make_corpus, make_live_job

pytestmark = pytest.mark.django_db

KEPT = "so that a reload does not lose it"
LOST = "a reload, or leaving the page, loses them (the browser asks first)"


def _notice(make_annotator, **job) -> str:
    user, worker = make_annotator("wren")
    slot = claim_next_slot(job=make_live_job(make_corpus(dialogs=1, user_turns=1), **job), worker=worker)
    client = Client()
    client.force_login(user)
    html = client.get(reverse("work", args=[make_token(slot)])).content.decode()
    found = re.search(r'<p class="muted telemetry-notice" id="telemetry-notice">(.*?)</p>', html, re.S)
    assert found, "the work page has no notice of what it records and keeps"
    return " ".join(found.group(1).split())


def test_a_recording_page_says_a_reload_loses_the_recordings(make_annotator):
    notice = _notice(make_annotator, task_type="spoken_reading", settings={"readings": 2})
    assert KEPT not in notice
    assert LOST in notice


def test_a_writing_page_still_says_a_reload_keeps_the_text(make_annotator):
    notice = _notice(make_annotator)
    assert KEPT in notice
    assert LOST not in notice
