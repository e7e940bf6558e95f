"""The vote count in SQL (`services.voting_tally`, one statement per vote) says what the Python rule
says (`voting.tally_parts` and `record_vote`'s whole-response count), on every database the suite
runs on: whole-response votes, part by part, mixed, parts missing or not an object."""
import random

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotation.models import Response, ReviewRound, Slot
from annotation.services import voting_tally
from annotation.services.voting import tally_parts

from .helpers import voting_job, write

pytestmark = pytest.mark.django_db

VERDICTS = ["for", "against", "abstain", None]


def _python_count(votes):
    against_by_part = tally_parts(votes)
    against = max(against_by_part.values()) if against_by_part else sum(1 for a in votes if a.get("vote") == "against")
    return sum(1 for a in votes if a.get("vote") in ("for", "against")) - against, against


def _vote_set(rng):
    votes = []
    for _ in range(rng.randint(0, 5)):
        answers = {}
        if rng.random() < 0.9:
            answers["vote"] = rng.choice(VERDICTS[:2]) if rng.random() < 0.8 else rng.choice(VERDICTS[2:])
        shape = rng.random()
        if shape < 0.4:
            answers["parts"] = {p: rng.choice(["for", "against"]) for p in rng.sample(["typos", "verbose", "paraphrase"], rng.randint(0, 3))}
        elif shape < 0.5:
            answers["parts"] = rng.choice([None, [], {}])  # the vote type stores an object or nothing
        votes.append(answers)
    return votes


@pytest.fixture
def round_(make_annotator):
    job, vote_job = voting_job(votes_per_response=9, against_threshold=9, max_rounds=9, model_max_votes=9)
    write(job, make_annotator("author")[1])
    return ReviewRound.objects.select_related("vote_item").get()


def _store(round_, votes, voters):
    Response.objects.filter(item=round_.vote_item).delete()
    slots = list(Slot.objects.filter(item=round_.vote_item).order_by("index"))
    for slot, worker, answers in zip(slots, voters, votes, strict=False):
        Response.objects.create(slot=slot, item=round_.vote_item, worker=worker, answers=answers, claimed_at=timezone.now(), status=Response.Status.ACCEPTED)


@pytest.fixture
def voters(make_annotator):
    return [make_annotator(f"voter{n}")[1] for n in range(5)]

def test_the_sql_count_is_the_python_rule(round_, voters):
    rng = random.Random(7)
    for _ in range(60):
        votes = _vote_set(rng)
        _store(round_, votes, voters)
        counted = voting_tally.count_votes(round_.vote_item_id)
        assert (counted.round.votes_for, counted.round.votes_against) == _python_count(votes), votes
        assert counted.votes_per_response == 9
        stored = ReviewRound.objects.get(pk=round_.pk)
        assert (stored.votes_for, stored.votes_against) == _python_count(votes)
        assert counted.waits_for_more == (sum(_python_count(votes)) < 9)


def test_one_statement_counts_and_a_settled_round_is_not_counted(round_, voters):
    _store(round_, [{"vote": "against", "parts": {"typos": "against"}}], voters)
    with CaptureQueriesContext(connection) as captured:
        counted = voting_tally.count_votes(round_.vote_item_id)
    assert len(captured.captured_queries) == 1
    assert counted.round.pk == round_.pk and counted.round.state == ReviewRound.State.VOTING and counted.round.item_id == round_.item_id
    ReviewRound.objects.filter(pk=round_.pk).update(state=ReviewRound.State.PASSED, votes_for=5, votes_against=0)
    assert voting_tally.count_votes(round_.vote_item_id) is None
    assert ReviewRound.objects.filter(pk=round_.pk, votes_for=5, votes_against=0).exists()  # left as decided
