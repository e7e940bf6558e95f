"""A review decision on a job without voting was recorded as overriding the "Vote outcome" (the review
queue's default) though there was no vote. There it records that no automatic verdict was overridden,
and the page does not offer the vote; a job with voting keeps the vote outcome as its default."""
import pytest
from django.urls import reverse

from annotation.models import CheckOverride, QualityPolicy, Response, ResponseTransition

from .test_review_queue import rewrites  # noqa: F401 (a fixture)


def _bulk(client, job, response, **extra):
    return client.post(
        reverse("organizer:job-review-bulk", kwargs={"pk": job.pk}),
        {"response": [response.pk], "action": "reject", "reason": "lost the area", **extra},
    )


@pytest.mark.django_db
def test_a_decision_without_a_vote_overrides_no_vote(rewrites, organizer, client):  # noqa: F811
    client.force_login(organizer)
    job, first = rewrites["job"], rewrites["first"]
    page = client.get(reverse("organizer:job-review", kwargs={"pk": job.pk})).content.decode()
    assert "Vote outcome" not in page and 'value="vote"' not in page
    assert '<select name="check" id="bulk-check"><option value="none">None (no automatic verdict)</option>' in page

    _bulk(client, job, first)
    record = CheckOverride.objects.get(response=first)
    assert record.check_name == CheckOverride.Check.NONE
    assert ResponseTransition.objects.filter(response=first, reason="Reviewer's decision: lost the area").exists()
    decisions = client.get(reverse("organizer:job-review-decisions", kwargs={"pk": job.pk})).content.decode()
    assert "None (no automatic verdict)" in decisions and "Vote outcome" not in decisions


@pytest.mark.django_db
def test_a_vote_outcome_asked_for_on_a_job_without_a_vote_is_refused_and_changes_nothing(rewrites, organizer, client):  # noqa: F811
    client.force_login(organizer)
    job, first = rewrites["job"], rewrites["first"]
    page = client.get(_bulk(client, job, first, check="vote")["Location"]).content.decode()
    assert "Nothing was changed: this job has no vote, so there is no vote outcome to override." in page
    assert not CheckOverride.objects.filter(response=first).exists()
    assert Response.objects.get(pk=first.pk).status == Response.Status.ACCEPTED


@pytest.mark.django_db
def test_a_job_with_voting_still_overrides_the_vote_outcome_by_default(rewrites, organizer, client):  # noqa: F811
    client.force_login(organizer)
    job, first = rewrites["job"], rewrites["first"]
    QualityPolicy.objects.create(job=job, voting_enabled=True)
    page = client.get(reverse("organizer:job-review", kwargs={"pk": job.pk})).content.decode()
    assert '<select name="check" id="bulk-check"><option value="vote">Vote outcome</option>' in page
    assert "None (no automatic verdict)" not in page
    _bulk(client, job, first)
    assert CheckOverride.objects.get(response=first).check_name == CheckOverride.Check.VOTE


@pytest.mark.django_db
def test_the_api_records_no_override_on_a_job_without_a_vote(rewrites, organizer, client):  # noqa: F811
    client.force_login(organizer)
    first = rewrites["first"]
    answer = client.post(
        f"/api/responses/{first.pk}/override/", {"status": "rejected", "reason": "lost the area"}, content_type="application/json"
    )
    assert answer.status_code == 200, answer.content
    assert answer.json()["check"] == "none"
