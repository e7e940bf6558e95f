"""Crowd entries cannot be forged (issue 8): invented identities on a one-place listing.

Anyone who knows a HIT id or a study id can invent assignmentId/workerId (MTurk) or
PROLIFIC_PID/SESSION_ID (Prolific). Through the real entry views and against the local fakes:
a posting admits at most as many workers as it has assignments, and nothing an invented identity
stores ever counts.
"""
from urllib.parse import urlencode

import pytest

from annotation.models import Slot
from hits.models import Posting, ProviderAssignment
from hits.services.config import configure_crowd
from hits.services.postings import launch_crowd_job, post_job

INVENTED = 10


def _one_place_job(job_factory, provider):
    job = job_factory(turns=3, name=f"{provider} one place")
    configure_crowd(job, provider=provider, budget="20", assignments_per_posting=1)
    launch_crowd_job(job)
    post_job(job, concurrency=1)
    posting = Posting.objects.filter(job=job).order_by("seq").first()
    # One listing with one place: the others are not what this test is about.
    Posting.objects.filter(job=job).exclude(pk=posting.pk).delete()
    Posting.objects.filter(pk=posting.pk).update(assignments=1)
    return job, Posting.objects.get(pk=posting.pk)


def _mturk_entry(job, posting, i):
    return f"/crowd/mturk/{job.pk}/?" + urlencode({
        "assignmentId": f"3INVENTED{i:020d}", "hitId": posting.external_id, "workerId": f"A1INVENTED{i:04d}",
        "turkSubmitTo": "https://www.mturk.com",
    })


def _prolific_entry(job, posting, i):
    return f"/crowd/prolific/{job.pk}/?" + urlencode({
        "PROLIFIC_PID": f"invented{i:04d}", "STUDY_ID": posting.external_id, "SESSION_ID": f"session{i:04d}",
    })


@pytest.mark.parametrize("provider, entry", [("mturk", _mturk_entry), ("prolific", _prolific_entry)])
def test_ten_invented_identities_get_at_most_one_place(request, job_factory, client, work_tokens, provider, entry):
    request.getfixturevalue(f"fake_{provider}")
    job, posting = _one_place_job(job_factory, provider)
    answers = [client.get(entry(job, posting, i)) for i in range(INVENTED)]
    admitted = [r for r in answers if r.status_code == 302]
    assert len(admitted) <= 1
    assert all(r.status_code == 409 and "return it" in r.content.decode() for r in answers if r.status_code != 302)
    assert Slot.objects.filter(job=job).exclude(state=Slot.State.OPEN).count() <= 1
    assert ProviderAssignment.objects.filter(posting=posting, place__isnull=False).count() <= 1
