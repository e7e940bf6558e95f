""""Reconcile now" only queues the reconciliation: with the broker down it answers 202 as usual, the
outage is logged, and the beat's `reconcile_all` comes round later (`quorum.background.after_commit`;
before, the view called the task's `delay` in an on-commit callback, which raised into the request)."""
import pytest

pytestmark = pytest.mark.django_db


def test_reconcile_now_answers_while_the_broker_is_down(broker_down, organizer_api, job_factory, caplog, django_capture_on_commit_callbacks):
    job = job_factory()
    with django_capture_on_commit_callbacks(execute=True):
        response = organizer_api.post(f"/api/crowd/jobs/{job.pk}/reconcile/")
    assert response.status_code == 202 and response["Location"].endswith(f"/api/crowd/jobs/{job.pk}/")
    assert broker_down == [(job.pk,)] and "a sweep will queue it again" in caplog.text


def test_reconcile_now_queues_the_reconciliation_by_name(queued_by_name, organizer_api, job_factory, django_capture_on_commit_callbacks):
    job = job_factory()
    with django_capture_on_commit_callbacks(execute=True):
        organizer_api.post(f"/api/crowd/jobs/{job.pk}/reconcile/")
    assert queued_by_name == [("hits.tasks.reconcile_job", job.pk)]
