""""Reconcile now" only queues the reconciliation: with the broker down it answers 202 as usual, the
outage is logged, and the beat's `reconcile_all` comes round later (`quorum.background.after_commit`;
before, the view called the task's `delay` in an on-commit callback, which raised into the request)."""
import pytest

from quorum import background
from tests.annotation.test_lost_work import broker_down  # noqa: F401  (the fixture)

pytestmark = pytest.mark.django_db


def test_reconcile_now_answers_while_the_broker_is_down(broker_down, organizer_api, job_factory, caplog, django_capture_on_commit_callbacks):  # noqa: F811
    job = job_factory()
    with django_capture_on_commit_callbacks(execute=True):
        response = organizer_api.post(f"/api/crowd/jobs/{job.pk}/reconcile/")
    assert response.status_code == 202 and response["Location"].endswith(f"/api/crowd/jobs/{job.pk}/")
    assert broker_down == [(job.pk,)] and "a sweep will queue it again" in caplog.text


def test_reconcile_now_queues_the_reconciliation_by_name(monkeypatch, organizer_api, job_factory, django_capture_on_commit_callbacks):
    queued = []
    monkeypatch.setattr(background, "queue_now", lambda name, *args, **kw: queued.append((name, *args)) or True)
    job = job_factory()
    with django_capture_on_commit_callbacks(execute=True):
        organizer_api.post(f"/api/crowd/jobs/{job.pk}/reconcile/")
    assert queued == [("hits.tasks.reconcile_job", job.pk)]
