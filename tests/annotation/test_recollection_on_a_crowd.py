"""A rewrite voted down on a job whose crowd was chosen (in-house crowd settings saved) is collected
again: the new place is posted like the launch's, so another annotator can take it. Before, the
re-collected slot was never posted, and every annotator who clicked "Next item" read "Every place
the budget pays for is taken"."""
import pytest

from annotation.models import Item, Response
from annotation.services.claims import claim_next_slot
from annotation.services.jobs import create_job, launch_job
from annotation.services.voting import enable_voting
from hits.models import Posting
from hits.services.config import configure_crowd
from tests.factories import make_corpus
from tests.quality.helpers import vote, write

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_rewrite_voted_down_on_an_in_house_crowd_job_is_taken_by_another_annotator(make_annotator):
    job = create_job(corpus=make_corpus(dialogs=1, user_turns=1), name="Hotel rewrites", redundancy=1)
    configure_crowd(job, provider="inhouse")
    vote_job = enable_voting(job, votes_per_response=2, against_threshold=2)
    job = launch_job(job)
    writer, first_voter, second_voter, next_writer = (make_annotator(name)[1] for name in ("wes", "vic", "val", "nia"))

    written = write(job, writer)
    vote_job.refresh_from_db()
    vote(vote_job, first_voter, "against", "unreadable")
    vote(vote_job, second_voter, "against", "unreadable")
    assert Response.objects.get(pk=written.pk).status == Response.Status.EXCLUDED
    assert Item.objects.get(job=job).state == Item.State.OPEN

    slot = claim_next_slot(job=job, worker=next_writer)  # refused with "Every place ... is taken" before

    assert slot is not None and slot.collection == 2
    assert sum(p.assignments for p in Posting.objects.filter(job=job)) == 2  # the first place and the re-collected one
