"""Voting decided by the reliability model (issue 22): the job setting, asking one more voter while
unsure, and voters weighed by the matrices the last sweep stored."""
import pytest
from django.utils import timezone

from annotation.models import DecisionRule, JobReliability, QualityPolicy, Response, ReviewRound
from annotation.services.voting import VotingError, enable_voting

from .helpers import vote, voting_job, write

pytestmark = pytest.mark.django_db


@pytest.fixture
def people(make_annotator):
    return {name: make_annotator(name)[1] for name in ("author", "v1", "v2", "v3", "v4", "v5")}


def test_the_published_rule_is_the_default():
    job, _ = voting_job()
    assert QualityPolicy.objects.get(job=job).decision_rule == DecisionRule.PUBLISHED


def test_model_settings_are_checked():
    job, _ = voting_job()
    with pytest.raises(VotingError, match="decision_rule"):
        enable_voting(job, decision_rule="coin")
    with pytest.raises(VotingError, match="model_max_votes cannot be below"):
        enable_voting(job, decision_rule=DecisionRule.MODEL, votes_per_response=3, model_max_votes=2)


def _model_job(**extra):
    return voting_job(decision_rule=DecisionRule.MODEL, votes_per_response=2, model_max_votes=4, **extra)


def test_two_agreeing_votes_settle_it_without_a_sweep(people):
    job, vote_job = _model_job()
    response = write(job, people["author"])
    vote(vote_job, people["v1"], "for")
    vote(vote_job, people["v2"], "for")
    round_ = ReviewRound.objects.get(response=response)
    assert round_.state == ReviewRound.State.PASSED
    assert "P(unusable) = 0.10" in response.transitions.order_by("pk").last().reason


def test_while_unsure_one_more_voter_is_asked_up_to_the_cap(people):
    job, vote_job = _model_job()
    response = write(job, people["author"])
    vote(vote_job, people["v1"], "for")
    vote(vote_job, people["v2"], "against")
    assert ReviewRound.objects.get(response=response).state == ReviewRound.State.VOTING
    assert vote_job.items.get().slots.count() == 3
    vote(vote_job, people["v3"], "against")  # P(unusable) = 0.75: still unsure
    assert vote_job.items.get().slots.count() == 4
    vote(vote_job, people["v4"], "against")  # 0.9: sure
    round_ = ReviewRound.objects.get(response=response)
    assert round_.state == ReviewRound.State.RECOLLECTED
    response.refresh_from_db()
    assert response.status == Response.Status.EXCLUDED


def test_the_stored_model_gives_an_always_yes_voter_no_weight(people):
    job, vote_job = _model_job()
    spam = [[0.0, 1.0], [0.0, 1.0]]  # [true against, true for] -> always "for"
    careful = [[0.95, 0.05], [0.05, 0.95]]
    JobReliability.objects.create(
        job=vote_job, computed_at=timezone.now(), judgements=100, labels=["against", "for"], priors=[0.3, 0.7],
        workers={str(people["v1"].pk): {"confusion": spam}, str(people["v2"].pk): {"confusion": careful}},
    )
    response = write(job, people["author"])
    vote(vote_job, people["v1"], "for")
    vote(vote_job, people["v2"], "against")  # one careful "no" outweighs the yes-man
    round_ = ReviewRound.objects.get(response=response)
    assert round_.state == ReviewRound.State.RECOLLECTED
    assert "the model of the last sweep" in response.transitions.order_by("pk").last().reason
