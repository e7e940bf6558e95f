"""Undoing a reviewer's rejection of a crowd rating (issue 23) puts its ratings back in the
campaign, as the rejection took them out: the undo is a move of the response's life like any other."""
import pytest

from annotation.models import Response
from annotation.services.review import bulk_decide
from annotation.services.review_undo import undo_decisions
from evaluation.campaigns.services.crowd import create_crowd_campaign, launch_crowd_job, sync_campaign_ratings
from evaluation.models import Rating

from .crowd_data import make_test_set, rate_everything

pytestmark = pytest.mark.django_db


def test_an_undone_rejection_brings_the_ratings_back(tmp_path, make_annotator, organizer, django_capture_on_commit_callbacks):
    test_set, finalists = make_test_set(tmp_path / "data")
    crowd = create_crowd_campaign("dstc9-crowd", test_set, finalists, order_seed=7)
    launch_crowd_job(crowd.campaign)
    crowd.refresh_from_db()
    _user, worker = make_annotator("vic")
    rate_everything(crowd.job, worker, django_capture_on_commit_callbacks)
    total = Rating.objects.filter(campaign=crowd.campaign).count()
    responses = list(Response.objects.filter(worker=worker).order_by("pk")[:3])

    decisions = bulk_decide(crowd.job, [r.pk for r in responses], action="reject", reason="rated without reading", by=organizer)
    assert Rating.objects.filter(campaign=crowd.campaign).count() == total - 2 * len(responses)  # two questions each

    undone = undo_decisions(crowd.job, [d.decision_id for d in decisions], reason="the timing was fine", by=organizer)

    assert all(u.ok for u in undone)
    assert Rating.objects.filter(campaign=crowd.campaign).count() == total
    assert sync_campaign_ratings(crowd.campaign) == {"added": 0, "removed": 0}  # nothing left to repair
