"""Worker flags recorded without a shell (issue 5): a Celery task per job, a beat sweep over live
jobs, a "Recompute flags" button on the job page and POST /api/jobs/<id>/flags/."""
import runpy
from pathlib import Path

import pytest
from celery import current_app
from django.conf import settings
from django.urls import reverse

from annotation.models import Response
from annotation.services.jobs import pause_job
from annotation.services.quality import set_quality
from annotation.tasks import apply_worker_flags, sweep_worker_flags
from tests.annotation.test_api import client_for
from tests.factories import make_corpus, make_live_job

from .test_flag_selectors import _do

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]


def rushed_job(name="rushed", dialogs=3):
    """A live job where one worker pastes everything in seconds and another takes their time."""
    from django.contrib.auth import get_user_model

    from quorum.roles import make_annotator

    job = make_live_job(make_corpus(name=name, dialogs=dialogs, user_turns=2), redundancy=2, name=name)
    users = get_user_model().objects
    steady = make_annotator(users.create_user(f"{name}-steady"))
    rusher = make_annotator(users.create_user(f"{name}-rusher"))
    for _ in range(dialogs * 2):
        _do(job, steady, 90)
        _do(job, rusher, 3, telemetry={"paraphrase": {"pasted_chars": 60, "typed_chars": 0}})
    return job, rusher


def recorded(job):
    """{response id: recorded flags} for the job's responses that have any recorded."""
    return {pk: checks["flags"] for pk, checks in Response.objects.filter(item__job=job).values_list("pk", "checks") if "flags" in (checks or {})}


def rusher_flags(job, rusher):
    return [set(checks.get("flags", [])) for checks in Response.objects.filter(item__job=job, worker=rusher).values_list("checks", flat=True)]


# --- the tasks --------------------------------------------------------------------------------------------


def test_the_task_records_the_flags_of_one_job_and_a_rerun_changes_nothing():
    job, rusher = rushed_job()
    assert recorded(job) == {}
    result = apply_worker_flags.delay(job.pk).get()
    assert result["recorded"] == result["flagged_responses"] > 0 and result["soft_rejected"] == 0
    assert all({"fast", "pasted"} <= flags for flags in rusher_flags(job, rusher))
    assert apply_worker_flags(job.pk)["recorded"] == 0  # idempotent
    assert apply_worker_flags(999999) is None  # a deleted job is not an error


def test_the_task_soft_rejects_when_the_job_says_so():
    job, rusher = rushed_job()
    set_quality(job, flags_reject=True)
    apply_worker_flags(job.pk)
    assert not Response.objects.filter(worker=rusher, item__job=job, status=Response.Status.ACCEPTED).exists()


def test_the_sweep_covers_live_jobs_with_responses_only():
    live, _ = rushed_job("live")
    paused, _ = rushed_job("paused")
    pause_job(paused)
    make_live_job(make_corpus(name="quiet", dialogs=1), name="quiet")  # live, no responses yet

    assert sweep_worker_flags.delay().get() == 1
    assert recorded(live) and recorded(paused) == {}


def test_the_beat_schedule_runs_the_sweep():
    [entry] = [e for e in settings.CELERY_BEAT_SCHEDULE.values() if e["task"] == "annotation.tasks.sweep_worker_flags"]
    assert entry["task"] in current_app.tasks  # the name beat sends is a task the worker knows
    assert entry["schedule"].total_seconds() == 900


def test_the_sweep_interval_comes_from_the_environment(monkeypatch):
    # The settings module read afresh, as a new process reads it, without starting one.
    monkeypatch.setenv("QUORUM_ENV", "test")
    monkeypatch.setenv("QUORUM_FLAG_SWEEP_SECONDS", "120")
    fresh = runpy.run_path(str(ROOT / "quorum" / "settings.py"))
    assert fresh["CELERY_BEAT_SCHEDULE"]["sweep-worker-flags"]["schedule"].total_seconds() == 120.0


# --- the button and the API -------------------------------------------------------------------------------


def test_recompute_flags_button_records_the_flags(organizer, client, django_capture_on_commit_callbacks):
    job, rusher = rushed_job()
    client.force_login(organizer)
    page = client.get(reverse("organizer:job", kwargs={"pk": job.pk})).content.decode()
    assert 'id="flags-form"' in page and "Recompute flags" in page
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("organizer:job-flags", kwargs={"pk": job.pk}))
    assert response.status_code == 302 and response["Location"].endswith("#reviews")
    assert all({"fast", "pasted"} <= flags for flags in rusher_flags(job, rusher))
    assert "Recomputing worker flags" in client.get(response["Location"]).content.decode()


def test_api_recomputes_flags_in_the_background(organizer, django_capture_on_commit_callbacks):
    job, rusher = rushed_job()
    api = client_for(organizer)
    with django_capture_on_commit_callbacks(execute=False) as queued:
        response = api.post(f"/api/jobs/{job.pk}/flags/")
    assert response.status_code == 202 and response.data["job"] == job.pk
    assert len(queued) == 1 and recorded(job) == {}  # queued on commit, not run inside the request
    queued[0]()
    assert all({"fast", "pasted"} <= flags for flags in rusher_flags(job, rusher))


@pytest.mark.parametrize("role,expected", [("anonymous", 401), ("annotator", 403)])
def test_api_flags_is_for_organizers_only(role, expected, make_annotator, django_capture_on_commit_callbacks):
    job, _ = rushed_job()
    api = client_for(make_annotator("ann")[0] if role == "annotator" else None)
    with django_capture_on_commit_callbacks(execute=True) as queued:
        response = api.post(f"/api/jobs/{job.pk}/flags/")
    assert response.status_code == expected and "detail" in response.data
    assert queued == [] and recorded(job) == {}


def test_api_flags_of_a_missing_job_is_404_and_get_is_refused(organizer):
    api = client_for(organizer)
    assert api.post("/api/jobs/999999/flags/").status_code == 404
    job, _ = rushed_job()
    assert api.get(f"/api/jobs/{job.pk}/flags/").status_code == 405


def test_recomputing_a_voted_jobs_flags_fits_its_voters_reliability(make_annotator, organizer, client, django_capture_on_commit_callbacks):
    from annotation.services.voting import enable_voting

    from .helpers import vote, write

    job = make_live_job(make_corpus(dialogs=3, user_turns=1))
    vote_job = enable_voting(job)
    for name in ("w1", "w2", "w3"):
        write(job, make_annotator(name)[1])
    for name in ("v1", "v2", "v3"):
        voter = make_annotator(name)[1]
        while vote(vote_job, voter, "for") is not None:
            pass
    client.force_login(organizer)
    page = client.get(reverse("organizer:job", kwargs={"pk": job.pk})).content.decode()
    assert "No model yet" in page
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("organizer:job-flags", kwargs={"pk": job.pk}))  # on the rewrite job, not its vote job
    page = client.get(reverse("organizer:job", kwargs={"pk": job.pk})).content.decode()
    assert "No model yet" not in page and "Fitted " in page
