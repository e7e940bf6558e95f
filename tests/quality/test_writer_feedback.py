"""Feedback to writers (issue 10, part 3): a voted-down rewrite and the voters' reasons reach its
author on the job list and on the next item of the job, escaped, without a query more per page."""
import pytest
from django.urls import reverse

from annotation.services.claims import claim_next_slot
from annotation.work_tokens import make_token

from .helpers import vote, voting_job, write

pytestmark = pytest.mark.django_db
HOSTILE = '<script>alert("x")</script>'


def test_the_author_sees_the_voted_down_rewrite_and_the_reasons(make_annotator, client):
    job, vote_job = voting_job(dialogs=2)
    user, author = make_annotator("author")
    voters = [make_annotator(f"v{i}")[1] for i in range(3)]
    down = write(job, author)
    vote(vote_job, voters[0], "against", f"the area is missing {HOSTILE}")
    vote(vote_job, voters[1], "against", "")
    vote(vote_job, voters[2], "for", "fine")  # two of three said no: voted down, re-collected
    client.force_login(user)

    home = client.get(reverse("home")).content.decode()
    assert 'id="feedback"' in home and f'data-response="{down.pk}"' in home
    assert "the area is missing &lt;script&gt;" in home and HOSTILE not in home
    assert "fine" not in home  # only the reasons of those who said no
    assert down.answers["typos"] in home

    # The author's next item in that job says it too.
    slot = claim_next_slot(job=job, worker=author)
    page = client.get(reverse("work", kwargs={"token": make_token(slot)})).content.decode()
    assert 'id="feedback"' in page and "the area is missing &lt;script&gt;" in page and HOSTILE not in page
    # Both pages show the rewrites in the form's order, by their labels (the database keeps its own order).
    for shown in (home, page):
        labels = [shown.index(f'<span class="muted">{label}:</span>') for label in ("Paraphrase", "Typos", "Verbose", "Simplified")]
        assert labels == sorted(labels)


def test_nothing_is_said_while_the_vote_passes(make_annotator, client):
    job, vote_job = voting_job(dialogs=2)
    user, author = make_annotator("author")
    write(job, author)
    for i in range(3):
        vote(vote_job, make_annotator(f"v{i}")[1], "for", "good")
    client.force_login(user)
    assert 'id="feedback"' not in client.get(reverse("home")).content.decode()
    slot = claim_next_slot(job=job, worker=author)
    assert 'id="feedback"' not in client.get(reverse("work", kwargs={"token": make_token(slot)})).content.decode()
