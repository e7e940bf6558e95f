"""Accepting in the review queue a response that is already accepted (the state of every response
of a job without voting) said "1 of 1 response changed" though nothing changed. The decision is
still recorded with its reason, and the page says the response already had that status."""
import pytest
from django.urls import reverse

from annotation.models import CheckOverride, Response

from .test_review_queue import rewrites  # noqa: F401 (a fixture)


@pytest.mark.django_db
def test_accepting_an_accepted_response_says_it_already_was(rewrites, organizer, client):  # noqa: F811
    client.force_login(organizer)
    job, first, second = rewrites["job"], rewrites["first"], rewrites["second"]
    Response.objects.filter(pk=second.pk).update(status=Response.Status.REJECTED)
    assert Response.objects.get(pk=first.pk).status == Response.Status.ACCEPTED
    done = client.post(
        reverse("organizer:job-review-bulk", kwargs={"pk": job.pk}),
        {"response": [first.pk, second.pk], "action": "accept", "reason": "read it: fine"},
    )
    page = client.get(done["Location"]).content.decode()
    assert "1 of 2 responses changed (1 already had that status)" in page
    assert f"Response {first.pk}: already accepted" in page and f"Response {second.pk}: accepted" in page
    assert CheckOverride.objects.filter(reason="read it: fine").count() == 2  # both decisions recorded
