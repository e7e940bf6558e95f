"""The review queue's compact table (issue 23): one row per response with its item, worker, an
excerpt of the answer, flags, state and decision buttons; the choice of view is remembered per
organizer; a row's button decides that response only, with the reason typed above."""
import pytest
from django.urls import reverse

from annotation.models import Response
from annotation.services.claims import claim_next_slot, submit_response
from quorum.roles import make_organizer
from tests.factories import good_answers, make_corpus, make_live_job

pytestmark = pytest.mark.django_db


@pytest.fixture
def job(make_annotator):
    job = make_live_job(make_corpus(dialogs=3, user_turns=1), name="rewrites")
    worker = make_annotator("ann")[1]
    for _ in range(3):
        slot = claim_next_slot(job=job, worker=worker)
        submit_response(slot_id=slot.id, worker=worker, answers=good_answers(slot.item))
    return job


def _queue(client, job):
    return client.get(reverse("organizer:job-review", kwargs={"pk": job.pk})).content.decode()


def test_the_compact_view_is_remembered_per_organizer(client, organizer, django_user_model, job):
    client.force_login(organizer)
    assert 'id="review-compact"' not in _queue(client, job)  # the full cards by default
    back = reverse("organizer:job-review", kwargs={"pk": job.pk})
    chosen = client.post(reverse("organizer:review-view"), {"view": "compact", "next": back})
    assert chosen.status_code == 302 and chosen["Location"] == back
    page = _queue(client, job)
    assert 'id="review-compact"' in page and page.count('<tr class="review-row"') == 3
    first = Response.objects.filter(item__job=job).order_by("pk").first()
    assert f'{first.answers["paraphrase"]}</span> <span class="muted">(+3 more)</span>' in page  # the answer's excerpt

    other = django_user_model.objects.create_user("otto", password="x-pass-12345")
    make_organizer(other)
    client.force_login(other)
    assert 'id="review-compact"' not in _queue(client, job)  # another organizer's choice is their own
    client.force_login(organizer)
    assert 'id="review-compact"' in _queue(client, job)  # a new session keeps it
    offsite = client.post(reverse("organizer:review-view"), {"view": "full", "next": "https://evil.example/"})
    assert offsite["Location"] == reverse("organizer:dashboard")


def test_a_rows_button_decides_that_response_only(client, organizer, job):
    client.force_login(organizer)
    responses = list(Response.objects.filter(item__job=job).order_by("pk"))
    url = reverse("organizer:job-review-bulk", kwargs={"pk": job.pk})
    client.post(url, {"row_action": f"exclude:{responses[1].pk}", "response": [r.pk for r in responses], "reason": "off topic"})
    assert [Response.objects.get(pk=r.pk).status for r in responses] == ["accepted", "excluded", "accepted"]
    page = client.get(reverse("organizer:job-review", kwargs={"pk": job.pk})).content.decode()
    assert 'id="undo-last"' in page  # the decision just made can be undone from the result
    refused = client.post(url, {"row_action": f"reject:{responses[0].pk}", "reason": ""}, follow=True)
    assert "Nothing was changed: give the reason" in refused.content.decode()
    assert Response.objects.get(pk=responses[0].pk).status == "accepted"
