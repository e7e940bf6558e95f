""""Recompute flags now" (page and API) only queues the flag run: with the broker down it answers
as usual, the outage is logged, and the beat sweep that runs the same task comes round later. The
run is queued by name after commit (`quorum.background.after_commit`); before, the views called the
task's `delay` in an on-commit callback, which raised into the request: a 500 after the commit."""
import pytest
from django.test import Client

from tests.annotation.test_api_follow_runs import job_with_a_response

pytestmark = pytest.mark.django_db


def test_recompute_flags_answers_while_the_broker_is_down(broker_down, organizer, organizer_api, caplog, django_capture_on_commit_callbacks):
    job = job_with_a_response()
    page = Client()
    page.force_login(organizer)
    with django_capture_on_commit_callbacks(execute=True):
        api = organizer_api.post(f"/api/jobs/{job.pk}/flags/")
    with django_capture_on_commit_callbacks(execute=True):
        form = page.post(f"/organize/jobs/{job.pk}/flags/")
    assert api.status_code == 202 and api["Location"].endswith(f"/api/jobs/{job.pk}/reviews/")
    assert form.status_code == 302
    assert broker_down == [(job.pk,), (job.pk,)] and "a sweep will queue it again" in caplog.text


def test_recompute_flags_queues_the_flag_run_by_name(queued_by_name, organizer_api, django_capture_on_commit_callbacks):
    job = job_with_a_response()
    with django_capture_on_commit_callbacks(execute=True):
        organizer_api.post(f"/api/jobs/{job.pk}/flags/")
    assert queued_by_name == [("annotation.tasks.apply_worker_flags", job.pk)]
