"""The vote and hard-score task types through the generic annotator work page."""
import re

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Response
from annotation.services.claims import claim_next_slot
from annotation.services.jobs import create_job, launch_job
from annotation.work_tokens import make_token
from tests.factories import make_corpus

from .helpers import voting_job, write

pytestmark = pytest.mark.django_db


def logged_in(make_annotator, name):
    user, worker = make_annotator(name)
    client = Client()
    assert client.login(username=name, password=f"{name}-pass-1")
    return client, worker


def test_a_voter_sees_the_rewrite_in_its_dialog_and_votes(make_annotator):
    job, vote_job = voting_job(dialogs=1, user_turns=2)
    author = make_annotator("author")[1]
    write(job, author)
    write(job, author)  # second turn: its vote item carries the earlier dialog
    client, voter = logged_in(make_annotator, "voter")
    slot = claim_next_slot(job=vote_job, worker=voter)
    page = client.get(reverse("work", args=[make_token(slot)]))
    assert page.status_code == 200
    html = page.content.decode()
    for row in slot.item.payload["shown"]:
        assert row["text"].replace("'", "&#x27;") in html
    # One yes/no per variant: each is its own utterance of the test sets (CGoDial voting).
    for variant in ("paraphrase", "typos", "verbose", "simplified"):
        assert f'type="radio" name="vote__{variant}" value="against"' in html
    refused = client.post(reverse("work", args=[make_token(slot)]), {"vote__paraphrase": "for", "reason": ""})
    assert refused.status_code == 400 and "Typos: choose yes or no" in refused.content.decode()
    votes = {"vote__paraphrase": "for", "vote__typos": "against", "vote__verbose": "for", "vote__simplified": "for"}
    saved = client.post(reverse("work", args=[make_token(slot)]), {**votes, "reason": "centre is missing"})
    assert saved.status_code == 302
    assert Response.objects.get(worker=voter).answers == {
        "vote": "against", "reason": "centre is missing",
        "parts": {"paraphrase": "for", "typos": "against", "verbose": "for", "simplified": "for"},
    }


def test_hard_score_page_shows_one_scale_per_criterion_and_stores_scores(make_annotator):
    job = launch_job(create_job(corpus=make_corpus(dialogs=1, user_turns=1), name="hard", task_type="hard_score"))
    client, worker = logged_in(make_annotator, "scorer")
    slot = claim_next_slot(job=job, worker=worker)
    html = client.get(reverse("work", args=[make_token(slot)])).content.decode()
    assert "Hard to understand" in html and "Spoken features on keywords" in html
    assert html.count('type="radio" name="criterion_1"') == 5
    # Each point says its number once ("1 not at all", not "1 1 (not at all)"), and the published
    # criterion's name comes with what it asks in plain words.
    assert re.search(r"<strong>1</strong> not at all</label>", html) and "<strong>1</strong> 1" not in html
    assert re.search(r"<strong>2</strong></label>", html)
    assert "key words (names, places, times, numbers)" in html
    assert "answers N/A" not in html  # no question here offers N/A: the key hint does not mention it
    saved = client.post(reverse("work", args=[make_token(slot)]), {"criterion_1": "4", "criterion_2": "2"})
    assert saved.status_code == 302
    assert Response.objects.get(worker=worker).answers == {"criterion_1": 4, "criterion_2": 2}
