"""CGoDial voting with re-collection: who may vote, the two-of-three rule, rounds, late votes."""
from datetime import timedelta

import numpy as np
import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation.models import CheckOverride, Item, Response, ReviewRound, Slot
from annotation.quality import agreement
from annotation.selectors.quality import item_reviews, voting_summary
from annotation.services.claims import ClaimError, ResponseRejected, claim_next_slot, release_expired_claims, submit_response
from annotation.services.quality import override_verdict
from annotation.services.voting import VotingError, enable_voting, record_vote, vote_job_of
from tests.factories import good_answers, make_corpus, make_live_job

from .helpers import vote, voting_job, write

pytestmark = pytest.mark.django_db


@pytest.fixture
def people(make_annotator):
    return {name: make_annotator(name)[1] for name in ("author", "v1", "v2", "v3", "v4", "second")}


def test_an_accepted_rewrite_goes_to_three_votes_and_waits_for_them(people):
    job, vote_job = voting_job()
    response = write(job, people["author"])
    assert vote_job.task_type == "vote" and vote_job.reviews == job and vote_job.state == "live"
    vote_item = vote_job.items.get()
    assert vote_item.subject_response == response
    assert vote_item.payload["utterance"] == response.item.payload["utterance"]
    assert {row["text"] for row in vote_item.payload["shown"]} == set(response.answers.values())
    assert vote_item.slots.count() == 3
    response.refresh_from_db()
    assert response.status == Response.Status.AWAITING_REVIEW  # under vote: neither exported nor paid as accepted
    assert ReviewRound.objects.get(response=response).state == ReviewRound.State.VOTING


def test_a_draft_jobs_vote_job_is_a_draft_and_goes_live_with_its_job(people):
    """A vote job of a draft job used to go live at once: listed live, with nothing to vote on,
    while the job it votes on had not started."""
    from annotation.models import Job
    from annotation.services.jobs import create_job, launch_job

    job = create_job(corpus=make_corpus(), name="draft rewrites", redundancy=1)
    vote_job = enable_voting(job)
    assert vote_job.state == Job.State.DRAFT and vote_job.launched_at is None
    job = launch_job(job)
    vote_job.refresh_from_db()
    assert vote_job.state == Job.State.LIVE and vote_job.launched_at is not None
    write(job, people["author"])
    assert vote(vote_job, people["v1"], "for") is not None


def test_the_author_never_gets_their_own_rewrite_to_vote_on(people):
    job, vote_job = voting_job()
    write(job, people["author"])
    assert claim_next_slot(job=vote_job, worker=people["author"]) is None
    assert all(vote(vote_job, people[v], "for") is not None for v in ("v1", "v2", "v3"))
    assert not Response.objects.filter(item__job=vote_job, worker=people["author"]).exists()


def test_the_database_refuses_a_vote_slot_held_by_the_author(people):
    job, vote_job = voting_job()
    write(job, people["author"])
    slot = Slot.objects.filter(job=vote_job).first()
    with pytest.raises(IntegrityError), transaction.atomic():
        Slot.objects.filter(pk=slot.pk).update(state=Slot.State.CLAIMED, worker=people["author"], claimed_at=timezone.now())


def test_an_author_submitting_to_a_vote_slot_directly_is_refused(people):
    job, vote_job = voting_job()
    write(job, people["author"])
    slot = Slot.objects.filter(job=vote_job).first()
    with pytest.raises(ClaimError, match="your own work"):
        submit_response(slot_id=slot.pk, worker=people["author"], answers={"vote": "for"})
    assert not Response.objects.filter(item__job=vote_job).exists()


def test_two_votes_against_soft_reject_and_reopen_the_item_for_someone_else(people):
    job, vote_job = voting_job()
    first = write(job, people["author"])
    vote(vote_job, people["v1"], "against", "the slot value 'centre' is hard to spot")
    vote(vote_job, people["v2"], "for")
    assert ReviewRound.objects.get(response=first).state == ReviewRound.State.VOTING  # not before the third vote
    vote(vote_job, people["v3"], "against")
    first.refresh_from_db()
    round1 = ReviewRound.objects.get(response=first)
    assert first.status == Response.Status.EXCLUDED
    assert (round1.state, round1.votes_for, round1.votes_against) == (ReviewRound.State.RECOLLECTED, 1, 2)
    item = first.item
    item.refresh_from_db()
    assert item.state == Item.State.OPEN
    assert claim_next_slot(job=job, worker=people["author"]) is None  # the author does not redo it
    second = write(job, people["second"])
    assert second.item_id == item.pk
    assert ReviewRound.objects.get(response=second).round == 2
    item.refresh_from_db()
    assert item.state == Item.State.COMPLETE


def test_one_vote_against_accepts_the_rewrite(people):
    job, vote_job = voting_job()
    response = write(job, people["author"])
    for voter, verdict in (("v1", "against"), ("v2", "for"), ("v3", "for")):
        vote(vote_job, people[voter], verdict)
    response.refresh_from_db()
    assert response.status == Response.Status.ACCEPTED
    assert ReviewRound.objects.get(response=response).state == ReviewRound.State.PASSED
    assert Slot.objects.filter(item=response.item).count() == 1  # nothing reopened


def test_the_job_can_reject_instead_of_soft_rejecting(people):
    job, vote_job = voting_job(on_voted_down="reject")
    response = write(job, people["author"])
    for voter in ("v1", "v2", "v3"):
        vote(vote_job, people[voter], "against")
    response.refresh_from_db()
    assert response.status == Response.Status.REJECTED


@pytest.fixture
def more_people(make_annotator):
    return {name: make_annotator(name)[1] for name in ("w1", "w2", "w3", "w4", "w5", "w6", "v1", "v2", "v3", "v4")}


def _both_responses_voted_down(job, vote_job, people, writers):
    first = [write(job, people[w]) for w in writers]
    for _ in first:
        for voter in ("v1", "v2", "v3"):
            vote(vote_job, people[voter], "against")
    return first


def test_with_two_responses_per_item_each_turned_down_response_is_replaced_in_the_next_round(more_people):
    job = make_live_job(make_corpus(dialogs=1, user_turns=1), redundancy=2)
    vote_job = enable_voting(job, max_rounds=2)
    _both_responses_voted_down(job, vote_job, more_people, ("w1", "w2"))
    replacements = [write(job, more_people[w]) for w in ("w3", "w4")]
    # Both replacements are the item's second collection: round 2, not 2 and 3 (one count per
    # turned-down response), which would have spent the item's last round at once.
    assert sorted(ReviewRound.objects.get(response=r).round for r in replacements) == [2, 2]
    for _ in replacements:
        for voter in ("v1", "v2", "v3"):
            vote(vote_job, more_people[voter], "against")
    # max_rounds=2: the second turned-down pair is flagged for the builder, not collected a third time.
    states = sorted(ReviewRound.objects.filter(response__in=replacements).values_list("state", flat=True))
    assert states == [ReviewRound.State.EXHAUSTED] * 2
    assert job.items.get().slots.count() == 4


def test_accepting_a_turned_down_response_withdraws_the_re_collection_no_one_has_started(more_people, organizer):
    from annotation.services.review import bulk_decide

    job = make_live_job(make_corpus(dialogs=1, user_turns=1), redundancy=2)
    vote_job = enable_voting(job)
    first, second = _both_responses_voted_down(job, vote_job, more_people, ("w1", "w2"))
    item = job.items.get()
    assert item.slots.filter(state=Slot.State.OPEN).count() == 2  # both being collected again
    held = claim_next_slot(job=job, worker=more_people["w3"])  # one replacement is in a worker's hands

    results = bulk_decide(job, [first.pk, second.pk], action="accept", reason="fine after all", by=organizer)
    messages = [r.message for r in results]
    assert messages[0] == "accepted; its item's re-collection, which no one had started, is withdrawn"
    assert messages[1].startswith("accepted; its item's re-collection is already in a worker's hands")
    assert item.slots.filter(state=Slot.State.OPEN).count() == 0
    assert claim_next_slot(job=job, worker=more_people["w4"]) is None  # no paid work the builder no longer needs
    write_held = submit_response(slot_id=held.pk, worker=more_people["w3"], answers=good_answers(item))
    assert write_held.item_id == item.pk  # the worker who had started keeps their work
    item.refresh_from_db()
    assert item.state == Item.State.COMPLETE


def test_an_accept_that_withdrew_a_re_collection_cannot_be_undone(more_people, organizer):
    from annotation.services.quality import QualityError
    from annotation.services.review import bulk_decide
    from annotation.services.review_undo import undo_decision

    job = make_live_job(make_corpus(dialogs=1, user_turns=1))
    vote_job = enable_voting(job)
    [first] = _both_responses_voted_down(job, vote_job, more_people, ("w1",))
    [result] = bulk_decide(job, [first.pk], action="accept", reason="fine after all", by=organizer)
    with pytest.raises(QualityError, match="took back its item's re-collection"):
        undo_decision(CheckOverride.objects.get(pk=result.decision_id), reason="changed my mind", by=organizer)
    # Re-collecting it again reopens the item once more.
    [again] = bulk_decide(job, [first.pk], action="recollect", reason="no, it is unreadable", by=organizer)
    assert again.message == "rejected (not paid), item re-collected"
    assert job.items.get().slots.filter(state=Slot.State.OPEN).count() == 1


def test_the_loop_stops_at_the_maximum_rounds_and_flags_the_item(people):
    job, vote_job = voting_job(max_rounds=2)
    for writer in ("author", "second"):
        write(job, people[writer])
        for voter in ("v1", "v2", "v3"):
            vote(vote_job, people[voter], "against")
    rounds = list(ReviewRound.objects.order_by("round").values_list("round", "state"))
    assert rounds == [(1, ReviewRound.State.RECOLLECTED), (2, ReviewRound.State.EXHAUSTED)]
    item = job.items.get()
    assert item.state == Item.State.COMPLETE and item.slots.count() == 2  # not reopened a third time
    [flagged] = item_reviews(job, flagged_only=True)
    assert flagged.item_id == item.pk and [r.votes_against for r in flagged.rounds] == [3, 3]
    summary = voting_summary(job)
    assert (summary.voted_down, summary.recollected, summary.flagged) == (2, 1, 1)


def test_a_vote_after_the_rewrite_was_recollected_by_a_reviewer_is_kept_but_not_counted(people, organizer):
    job, vote_job = voting_job()
    response = write(job, people["author"])
    vote(vote_job, people["v1"], "for")
    held = claim_next_slot(job=vote_job, worker=people["v2"])  # v2 is reading the rewrite...
    override_verdict(response, status=Response.Status.REJECTED, reason="copied from the web", check="vote", by=organizer, recollect=True)
    assert claim_next_slot(job=vote_job, worker=people["v3"]) is None  # the open vote slot is withdrawn
    late = submit_response(slot_id=held.pk, worker=people["v2"], answers={"vote": "for"})
    assert "not counted" in late.checks["ignored"]
    round_ = ReviewRound.objects.get(response=response)
    assert (round_.state, round_.votes_for) == (ReviewRound.State.RECOLLECTED, 1)
    response.refresh_from_db()
    assert response.status == Response.Status.REJECTED
    assert job.items.get().slots.filter(state=Slot.State.OPEN).count() == 1  # reopened once, by the override


def test_a_vote_whose_claim_expired_after_the_decision_is_refused_with_a_reason(people, make_annotator):
    job, vote_job = voting_job()
    write(job, people["author"])
    slow = claim_next_slot(job=vote_job, worker=people["v4"])
    release_expired_claims(now=timezone.now() + timedelta(hours=2))
    for voter in ("v1", "v2", "v3"):
        vote(vote_job, people[voter], "against")
    with pytest.raises(ClaimError, match="expired"):
        submit_response(slot_id=slow.pk, worker=people["v4"], answers={"vote": "for"})
    assert ReviewRound.objects.get().votes_against == 3


def test_counting_a_vote_twice_changes_nothing(people):
    job, vote_job = voting_job()
    response = write(job, people["author"])
    votes = [vote(vote_job, people[v], "against") for v in ("v1", "v2", "v3")]
    record_vote(votes[-1])  # a retried hook
    record_vote(votes[0])
    assert Slot.objects.filter(item=response.item).count() == 2  # reopened exactly once
    assert not any("ignored" in Response.objects.get(pk=v.pk).checks for v in votes)  # all three counted
    assert ReviewRound.objects.get(response=response).votes_against == 3


def test_enable_voting_is_idempotent_and_puts_earlier_responses_to_the_vote(people):
    job = make_live_job(make_corpus(dialogs=1, user_turns=2))
    earlier = write(job, people["author"])
    vote_job = enable_voting(job)
    assert enable_voting(job, max_rounds=4).pk == vote_job.pk
    assert vote_job_of(job).pk == vote_job.pk
    assert ReviewRound.objects.get(response=earlier).round == 1
    write(job, people["second"])
    assert vote_job.items.count() == 2
    assert job.quality.max_rounds == 4


def test_bad_voting_settings_are_refused_and_change_nothing():
    job = make_live_job()
    with pytest.raises(VotingError, match="against_threshold"):
        enable_voting(job, votes_per_response=3, against_threshold=4)
    with pytest.raises(VotingError, match="on_voted_down"):
        enable_voting(job, on_voted_down="delete")
    assert vote_job_of(job) is None
    vote_job = enable_voting(job)
    with pytest.raises(VotingError, match="cannot be voted on"):
        enable_voting(vote_job)


def test_a_vote_must_be_yes_or_no(people):
    job, vote_job = voting_job()
    write(job, people["author"])
    slot = claim_next_slot(job=vote_job, worker=people["v1"])
    with pytest.raises(ResponseRejected, match="choose yes or no"):
        submit_response(slot_id=slot.pk, worker=people["v1"], answers={"vote": "maybe"})


def test_summary_reports_recollection_rate_and_vote_alpha(people, make_annotator):
    job, vote_job = voting_job(dialogs=2, user_turns=2)  # four items
    writers = [make_annotator(f"w{i}")[1] for i in range(4)]
    for w in writers:
        write(job, w)
    # Item 1 and 2: unanimous; item 3: split; item 4: voted down unanimously.
    plans = [("for", "for", "for"), ("for", "for", "for"), ("for", "against", "for"), ("against", "against", "against")]
    voters = [people["v1"], people["v2"], people["v3"]]
    for plan in plans:
        for voter, verdict in zip(voters, plan, strict=False):
            vote(vote_job, voter, verdict)
    summary = voting_summary(job)
    assert summary.items_reviewed == 4 and summary.items_recollected == 1
    assert summary.recollection_rate == pytest.approx(0.25)
    # A whole-response vote covers each of the 4 variants, and each variant is decided on its own, so
    # the units are (item, variant): 16 units of 3 votes. Nominal alpha by hand: pairable values
    # n = 48; item 3's 4 units each have 4 of 6 ordered pairs disagreeing, weighted 1/(3-1) ->
    # D_o = 4 * 2 / 48 = 1/6; n_for = 32, n_against = 16 -> D_e = 2 * 32 * 16 / (48 * 47).
    assert summary.vote_alpha == pytest.approx(1 - (1 / 6) / (2 * 32 * 16 / (48 * 47)))
    assert summary.votes == 12
    # Its interval would resample the four responses, each with its four parts (not the 16 parts
    # apart); four are far too few for one that covers 95%, and the summary says so.
    units = np.array([[3, 0]] * 8 + [[2, 1]] * 4 + [[0, 3]] * 4, dtype=float)
    assert summary.vote_alpha_ci_low is None and summary.vote_alpha_ci_high is None
    assert summary.vote_alpha_ci_withheld == "no interval: too few responses, 4 of the 50 needed"
    # Resampled whole, the responses' alphas spread wider than the 16 parts' apart (too few for an interval of their own).
    by_part = agreement.bootstrap_alphas(units, np.array([0, 1]), "nominal")
    assert np.nanstd(agreement.bootstrap_alphas_by_cluster(units, np.repeat(np.arange(4), 4), np.array([0, 1]), "nominal")) > np.nanstd(by_part)


def _vote_parts(vote_job, worker, against=(), reason=""):
    """The worker votes yes on every variant but those in `against`."""
    slot = claim_next_slot(job=vote_job, worker=worker)
    answers = {f"vote__{v}": ("against" if v in against else "for") for v in ("paraphrase", "typos", "verbose", "simplified")}
    return submit_response(slot_id=slot.id, worker=worker, answers={**answers, "reason": reason})


def test_each_variant_is_voted_on_and_two_noes_on_one_variant_recollect(people):
    from annotation.selectors.feedback import voted_down

    job, vote_job = voting_job()
    response = write(job, people["author"])
    assert [p["name"] for p in vote_job.settings["parts"]] == ["paraphrase", "typos", "verbose", "simplified"]
    _vote_parts(vote_job, people["v1"], against={"typos"}, reason="'tabel' is fine but 'ppl' is not a typo")
    _vote_parts(vote_job, people["v2"], against={"typos", "verbose"}, reason="typos unreadable")
    _vote_parts(vote_job, people["v3"])
    round_ = ReviewRound.objects.get(response=response)
    response.refresh_from_db()
    assert round_.state == ReviewRound.State.RECOLLECTED and (round_.votes_against, round_.votes_for) == (2, 1)
    assert response.status == Response.Status.EXCLUDED and response.checks["voted_down_parts"] == ["typos"]
    assert "on typos" in response.transitions.get(to_status=Response.Status.EXCLUDED).reason
    # The writer learns which variant and why.
    (feedback,) = voted_down(people["author"])
    assert feedback.parts_against == {"typos": 2, "verbose": 1}
    # Shown by the form's labels and order, whatever order the database keeps the answers in.
    assert feedback.turned_down == [("Typos", 2), ("Verbose", 1)]
    assert [(label, turned_down) for label, _text, turned_down in feedback.shown] == [
        ("Paraphrase", False), ("Typos", True), ("Verbose", True), ("Simplified", False)
    ]
    assert feedback.reasons == ["'tabel' is fine but 'ppl' is not a typo", "typos unreadable"]


def test_vote_agreement_is_measured_per_variant_where_the_decisions_are(people, make_annotator):
    """Two voters who each vote one different variant down agree on "the response has a bad variant"
    but on no variant's fate: per-variant alpha shows the disagreement the whole-response vote hides."""
    job, vote_job = voting_job(dialogs=1, user_turns=2)
    for writer in (make_annotator("wa")[1], make_annotator("wb")[1]):
        write(job, writer)
    for _ in range(2):  # both responses get the same pair of votes
        _vote_parts(vote_job, people["v1"], against={"paraphrase"})
        _vote_parts(vote_job, people["v2"], against={"typos"})
    summary = voting_summary(job)
    # Units (response, variant): paraphrase and typos split 1:1 on both responses; verbose and
    # simplified agree "for". n = 16 pairable values (12 for, 4 against); the 4 split units have
    # both ordered pairs disagreeing, weighted 1/(2-1): D_o = 8 / 16; D_e = 2 * 12 * 4 / (16 * 15).
    assert summary.vote_alpha == pytest.approx(1 - (8 / 16) / (2 * 12 * 4 / (16 * 15)))
    assert summary.vote_alpha < 0 and summary.votes == 4


def test_noes_spread_over_different_variants_do_not_recollect(people):
    job, vote_job = voting_job()
    response = write(job, people["author"])
    _vote_parts(vote_job, people["v1"], against={"paraphrase"})
    _vote_parts(vote_job, people["v2"], against={"typos"})
    _vote_parts(vote_job, people["v3"])
    response.refresh_from_db()
    assert ReviewRound.objects.get(response=response).state == ReviewRound.State.PASSED
    assert response.status == Response.Status.ACCEPTED  # no variant had two noes
