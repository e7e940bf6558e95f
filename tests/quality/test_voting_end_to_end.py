"""End to end: careless workers' rewrites pass the automatic checks, are voted down by careful
voters, and are re-collected until every item of the job holds one accepted, careful rewrite."""
import random

import pytest

from annotation.models import Item, Response, ReviewRound
from annotation.selectors.exports import export_dialogs_queryset
from annotation.selectors.quality import item_reviews, voting_summary
from annotation.services.claims import claim_next_slot, submit_response
from tests.factories import good_answers

from .helpers import careful_verdict, is_junk, junk_answers, voting_job

pytestmark = pytest.mark.django_db


def test_careless_rewrites_are_voted_down_and_recollected_until_the_job_passes(make_annotator):
    job, vote_job = voting_job(dialogs=3, user_turns=2, max_rounds=3)  # six items
    careless = [make_annotator(f"careless{i}")[1] for i in range(2)]
    careful = [make_annotator(f"careful{i}")[1] for i in range(2)]
    voters = [make_annotator(f"voter{i}")[1] for i in range(3)]
    sloppy_voter = make_annotator("sloppy")[1]
    rng = random.Random(5)

    for _sweep in range(50):
        progressed = False
        for writer in careless + careful:  # careless writers come first, so they get items first
            slot = claim_next_slot(job=job, worker=writer)
            if slot is not None:
                answers = junk_answers(slot.item) if writer in careless else good_answers(slot.item)
                submit_response(slot_id=slot.id, worker=writer, answers=answers)
                progressed = True
        for voter in [sloppy_voter] + voters:
            while (slot := claim_next_slot(job=vote_job, worker=voter)) is not None:
                verdict = rng.choice(["for", "against"]) if voter is sloppy_voter else careful_verdict(slot.item)
                submit_response(slot_id=slot.id, worker=voter, answers={"vote": verdict})
                progressed = True
        if not progressed:
            break

    responses = Response.objects.filter(item__job=job)
    junk = [r for r in responses if is_junk(r.answers["paraphrase"])]
    assert junk, "the careless writers wrote nothing"
    assert all(r.status == Response.Status.EXCLUDED for r in junk)
    assert all(r.status == Response.Status.ACCEPTED for r in responses if r not in junk)
    for item in job.items.all():
        assert item.state == Item.State.COMPLETE
        assert item.responses.filter(status=Response.Status.ACCEPTED).count() == 1
    assert all(review.final_state == "passed" for review in item_reviews(job))
    summary = voting_summary(job)
    assert summary.recollected == len(junk) and summary.flagged == 0 and summary.voting == 0
    assert summary.items_reviewed == 6 and 0 < summary.recollection_rate <= 1
    assert summary.vote_alpha is not None and summary.vote_alpha < 1  # the sloppy voter disagrees sometimes
    exported = [
        r.answers["paraphrase"]
        for dialog in export_dialogs_queryset(job)
        for turn in dialog.ordered_turns
        for item in turn.job_items
        for r in item.accepted_responses
    ]
    assert len(exported) == 6 and not any(is_junk(text) for text in exported)
    assert ReviewRound.objects.filter(response__worker__in=careless).exclude(state=ReviewRound.State.RECOLLECTED).count() == 0
