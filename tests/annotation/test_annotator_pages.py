"""Annotator pages (issue 10, part 4): "Item N of M" counts the worker's own items on every task
type; slot chips name the slot; the choice keys are listed on the page."""
import pytest
from django.urls import reverse

from annotation.services.claims import claim_next_slot, submit_response
from annotation.services.voting import enable_voting
from annotation.work_tokens import make_token
from tests.factories import good_answers, make_corpus, make_live_job

pytestmark = pytest.mark.django_db


def _page(client, user, slot):
    client.force_login(user)
    return client.get(reverse("work", kwargs={"token": make_token(slot)})).content.decode()


def test_a_vote_page_counts_the_voters_items_not_the_item_position(make_annotator, client):
    job = make_live_job(make_corpus(dialogs=3, user_turns=1), name="rewrites")
    vote_job = enable_voting(job)
    writer = make_annotator("wren")[1]
    for _ in range(3):  # three rewrites: three vote items, numbered after the rewrite job's own positions
        slot = claim_next_slot(job=job, worker=writer)
        submit_response(slot_id=slot.id, worker=writer, answers=good_answers(slot.item))
    user, voter = make_annotator("vic")
    slot = claim_next_slot(job=vote_job, worker=voter)
    page = _page(client, user, slot)
    assert "Item 1 of 3 ·" in page
    assert 'id="key-hint"' in page and "<kbd>y</kbd> yes, <kbd>n</kbd> no" in page
    submit_response(slot_id=slot.id, worker=voter, answers={"vote": "for", "reason": ""})
    assert "Item 2 of 3 ·" in _page(client, user, claim_next_slot(job=vote_job, worker=voter))


def test_a_writer_voting_is_counted_only_the_items_they_may_vote_on(make_annotator, client):
    from annotation.selectors.work import annotator_jobs

    job = make_live_job(make_corpus(dialogs=5, user_turns=1), name="rewrites")
    vote_job = enable_voting(job)
    user, writer = make_annotator("wren")
    other = make_annotator("olga")[1]
    for worker, n in ((writer, 2), (other, 3)):  # five vote items, two of them on wren's own rewrites
        for _ in range(n):
            slot = claim_next_slot(job=job, worker=worker)
            submit_response(slot_id=slot.id, worker=worker, answers=good_answers(slot.item))
    [row] = [r for r in annotator_jobs(writer) if r.job.pk == vote_job.pk]
    assert row.available_to_you == 3  # "You never see your own work here": not 5
    page = _page(client, user, claim_next_slot(job=vote_job, worker=writer))
    assert "Item 1 of 3 ·" in page


def test_a_rewrite_page_shows_slot_and_value_on_each_chip(make_annotator, client):
    job = make_live_job(make_corpus(dialogs=1, user_turns=1), name="rewrites")
    user, worker = make_annotator("ann")
    page = _page(client, user, claim_next_slot(job=job, worker=worker))
    assert '<li class="chip"><span class="chip-slot">pricerange</span> <mark class="slot" lang="en">cheap</mark></li>' in page
    assert '<span class="chip-slot">area</span>' in page
    assert "Item 1 of 1 ·" in page


def test_a_corpus_questionnaire_names_the_speaker_of_the_turn_it_scores(make_annotator, client):
    user, worker = make_annotator("sam")
    job = make_live_job(make_corpus(dialogs=1, user_turns=1), task_type="hard_score", name="hard")
    slot = claim_next_slot(job=job, worker=worker)
    assert "User · score this turn" in _page(client, user, slot)
    # A preset over system turns (a response rating) shows the same page: it must not call the
    # system's turn the user's.
    turn = slot.item.turn
    turn.speaker = "system"
    turn.save(update_fields=["speaker"])
    page = _page(client, user, slot)
    assert "System · score this turn" in page and "User · score this turn" not in page
