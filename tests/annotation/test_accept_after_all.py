"""A reviewer accepts a voted-down response after all (builder walk A2, B3): the page says exactly
what becomes of the item and its re-collection, and the test set keeps the text that passed the vote,
by the rule the README states."""
import json

import pytest

from annotation.exporters.selection import earliest_accepted_rewrites
from annotation.models import Response
from annotation.services.claims import claim_next_slot, submit_response
from annotation.services.exports import export_job
from annotation.services.review import bulk_decide
from annotation.services.voting import enable_voting
from tests.factories import good_answers, make_corpus, make_live_job
from tests.quality.helpers import junk_answers, vote

pytestmark = pytest.mark.django_db


@pytest.fixture
def people(make_annotator):
    return {name: make_annotator(name)[1] for name in ("w1", "w2", "v1", "v2", "v3")}


def written(job, worker, answers_of):
    slot = claim_next_slot(job=job, worker=worker)
    return submit_response(slot_id=slot.pk, worker=worker, answers=answers_of(slot.item))


def voted_down_then_recollected(people, recollection_vote="for"):
    """w1's junk voted down 3 to 0; w2's re-collection voted on as `recollection_vote` (None: not yet written)."""
    job = make_live_job(make_corpus(dialogs=1, user_turns=1))
    vote_job = enable_voting(job)
    junk = written(job, people["w1"], junk_answers)
    for voter in ("v1", "v2", "v3"):
        vote(vote_job, people[voter], "against")
    junk.refresh_from_db()
    assert junk.status in (Response.Status.REJECTED, Response.Status.EXCLUDED)
    if recollection_vote is None:
        return job, junk, None
    good = written(job, people["w2"], good_answers)
    for voter in ("v1", "v3"):
        vote(vote_job, people[voter], recollection_vote)
    vote(vote_job, people["v2"], recollection_vote)
    good.refresh_from_db()
    return job, junk, good


def test_accepting_after_all_says_the_recollection_was_done_and_which_text_the_test_set_keeps(people, organizer, tmp_path):
    job, junk, good = voted_down_then_recollected(people)
    assert good.status == Response.Status.ACCEPTED

    [result] = bulk_decide(job, [junk.pk], action="accept", reason="Typos variant was fine; accept after all.", by=organizer)
    assert result.ok
    # Not "in a worker's hands": the re-collection was written, voted on and accepted.
    assert "in a worker's hands" not in result.message
    assert f"response {good.pk}" in result.message and "accepted" in result.message
    assert "one response more than asked" in result.message
    assert f"test set keeps response {good.pk}'s text" in result.message

    export_job(job, tmp_path / "out")
    (dialog,) = [json.loads(line) for line in (tmp_path / "out" / "paraphrase" / "dialogs.jsonl").open()]
    user_turn = next(t for t in dialog["turns"] if t["speaker"] == "user")
    assert user_turn["text"] == good.answers["paraphrase"]  # the text that passed the vote, not the earlier junk
    readme = (tmp_path / "out" / "README.md").read_text()
    assert "voted down" in readme and "accepted by a reviewer after all" in readme


def test_accepting_after_all_while_the_recollection_is_held_says_so(people, organizer):
    job, junk, _ = voted_down_then_recollected(people, recollection_vote=None)
    held = claim_next_slot(job=job, worker=people["w2"])
    assert held is not None
    [result] = bulk_decide(job, [junk.pk], action="accept", reason="fine after all", by=organizer)
    assert result.message.startswith("accepted; its item's re-collection is already in a worker's hands")
    assert "not submitted yet" in result.message
    assert "test set takes the re-collection's text if it passes the vote" in result.message


def test_a_voted_down_text_accepted_after_all_is_used_only_where_no_other_accepted_text_exists():
    class R:
        def __init__(self, pk, minutes, answers, down_parts=(), round_state="passed"):
            self.id, self.submitted_at, self.answers = pk, minutes, answers
            self.checks = {"voted_down_parts": list(down_parts)} if down_parts else {}
            self.round_state = round_state

    early = R(1, 0, {"paraphrase": "junk p", "typos": "fine t"}, down_parts=["paraphrase"], round_state="recollected")
    later = R(2, 5, {"paraphrase": "good p", "typos": "later t"})
    assert earliest_accepted_rewrites([early, later], ["paraphrase", "typos"]) == {"paraphrase": "good p", "typos": "fine t"}
    # Alone, the reviewer's choice is used.
    assert earliest_accepted_rewrites([early], ["paraphrase"]) == {"paraphrase": "junk p"}
    # A whole-response vote (no parts): the round says it was voted down.
    whole = R(3, 0, {"paraphrase": "junk"}, round_state="recollected")
    assert earliest_accepted_rewrites([whole, later], ["paraphrase"]) == {"paraphrase": "good p"}
