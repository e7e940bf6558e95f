"""A reviewer overrides an automatic verdict on a response; the reason is kept."""
import pytest

from annotation.models import CheckOverride, Response, ReviewRound
from annotation.services.quality import QualityError, override_verdict

from .helpers import vote, voting_job, write

pytestmark = pytest.mark.django_db


@pytest.fixture
def voted_down(make_annotator):
    job, vote_job = voting_job(max_rounds=1)
    author = make_annotator("author")[1]
    response = write(job, author)
    for i in range(3):
        vote(vote_job, make_annotator(f"v{i}")[1], "against")
    response.refresh_from_db()
    return job, response


def test_a_reviewer_accepts_a_response_the_voters_turned_down(voted_down, organizer):
    job, response = voted_down
    assert response.status == Response.Status.EXCLUDED
    assert ReviewRound.objects.get(response=response).state == ReviewRound.State.EXHAUSTED  # flagged for the builder
    record = override_verdict(response, status="accepted", reason="Regional spelling, not a typo.", check="vote", by=organizer)
    response.refresh_from_db()
    assert response.status == Response.Status.ACCEPTED
    assert (record.previous_status, record.new_status, record.by, record.check_name) == ("excluded", "accepted", organizer, "vote")
    assert response.checks["override"]["reason"] == "Regional spelling, not a typo."


def test_repeating_an_override_records_it_once(voted_down, organizer):
    _job, response = voted_down
    first = override_verdict(response, status="accepted", reason="fine", check="vote", by=organizer)
    again = override_verdict(response, status="accepted", reason="fine", check="vote", by=organizer)
    assert first.pk == again.pk and CheckOverride.objects.count() == 1


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"status": "accepted", "reason": "  ", "check": "vote"}, "reason"),
        ({"status": "deleted", "reason": "x", "check": "vote"}, "status must be"),
        ({"status": "accepted", "reason": "x", "check": "mood"}, "check must be"),
        ({"status": "accepted", "reason": "x", "check": "vote", "recollect": True}, "only a rejected"),
    ],
)
def test_bad_overrides_are_refused_and_change_nothing(voted_down, kwargs, message):
    _job, response = voted_down
    with pytest.raises(QualityError, match=message):
        override_verdict(response, **kwargs)
    response.refresh_from_db()
    assert response.status == Response.Status.EXCLUDED and not CheckOverride.objects.exists()


def test_overriding_held_work_releases_it(make_annotator, organizer):
    job, _vote_job = voting_job()
    response = write(job, make_annotator("w")[1])
    Response.objects.filter(pk=response.pk).update(checks={"held": "held for review: the author failed 3 of 5 gold items"})
    override_verdict(response, status="rejected", reason="checked: copied text", check="gold", by=organizer)
    response.refresh_from_db()
    assert "held" not in response.checks and response.status == Response.Status.REJECTED
    assert ReviewRound.objects.get(response=response).state == ReviewRound.State.CANCELLED


def test_recollecting_a_response_the_vote_already_recollected_does_not_reopen_twice(make_annotator, organizer):
    job, vote_job = voting_job(max_rounds=3)
    response = write(job, make_annotator("author")[1])
    for i in range(3):
        vote(vote_job, make_annotator(f"v{i}")[1], "against")
    override_verdict(response, status="rejected", reason="plagiarised", check="vote", by=organizer, recollect=True)
    assert response.item.slots.count() == 2
