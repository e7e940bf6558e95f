"""A flag run keeps a record of its latest attempt (`FlagRun`): "recompute now" says it is queued,
the run says it is running, then the stored flags show, or the failure is named with its reason
beside the flags of the earlier run, which a failure leaves as they were. The broker being down and
a worker lost mid-run give an honest line too, and the beat sweep runs such an attempt again."""
import html
import re
from datetime import timedelta

import pytest
from django.conf import settings
from django.urls import reverse
from django.utils import dateformat, timezone

from annotation.models import FlagRun, JobFlagReport, Response
from annotation.services import attempts, flag_runs
from annotation.services import quality as quality_services
from annotation.services.jobs import pause_job
from annotation.tasks import apply_worker_flags, sweep_worker_flags
from tests.annotation.test_api import client_for
from tests.attempts import look_while_running

from .test_flag_schedule import rushed_job

pytestmark = pytest.mark.django_db


def _shown(t) -> str:
    """A time as the pages print it."""
    return dateformat.format(timezone.localtime(t), "Y-m-d H:i:s T")


def _flags_line(client, job, page="organizer:job") -> str:
    """The text of the flags line (`#flags-computed`) of the job page or the review queue."""
    body = client.get(reverse(page, kwargs={"pk": job.pk})).content.decode()
    line = re.search(r'<p[^>]*id="flags-computed"[^>]*>(.*?)</p>', body, re.S).group(1)
    return html.unescape(" ".join(re.sub(r"<[^>]+>", "", line).split()))


def _both_lines(client, job) -> list[str]:
    return [_flags_line(client, job), _flags_line(client, job, "organizer:job-review")]


def _odd_data(monkeypatch, message="float division by zero"):
    """The computation fails as it would on data it cannot handle."""
    def fail(job):
        raise ZeroDivisionError(message)

    monkeypatch.setattr(quality_services, "job_flags", fail)


@pytest.fixture
def page(organizer, client):
    client.force_login(organizer)  # the organizer's browser
    return client


def _recompute(api, job, capture):
    with capture(execute=True):
        return api.post(f"/api/jobs/{job.pk}/flags/")


def test_a_failed_run_keeps_the_earlier_flags_and_the_pages_and_the_api_name_the_failure(
    organizer, page, monkeypatch, django_capture_on_commit_callbacks,
):
    job, rusher = rushed_job()
    apply_worker_flags(job.pk)
    before = JobFlagReport.objects.get(job=job)
    recorded = dict(Response.objects.filter(item__job=job).values_list("pk", "checks"))
    _odd_data(monkeypatch)
    api = client_for(organizer)

    answer = _recompute(api, job, django_capture_on_commit_callbacks)  # the task runs in-process at the commit

    assert answer.status_code == 202  # a failed run is no failed request
    after = JobFlagReport.objects.get(job=job)
    assert (after.computed_at, after.response_flags, after.worker_flags) == (before.computed_at, before.response_flags, before.worker_flags)
    assert dict(Response.objects.filter(item__job=job).values_list("pk", "checks")) == recorded
    run = FlagRun.objects.get(job=job)
    for line in _both_lines(page, job):
        assert line.startswith(
            f"The recomputation at {_shown(run.started_at)} failed: ZeroDivisionError: float division by zero. "
            f"The flags below are from {_shown(before.computed_at)}."
        ), line
        assert "Traceback" not in line
    assert "Worker flags computed at" in _flags_line(page, job)  # the earlier flags are still shown
    reviews = api.get(f"/api/jobs/{job.pk}/reviews/").data["flags"]
    assert reviews["run"]["status"] == "failed" and reviews["run"]["current"] is True
    assert reviews["run"]["error"] == "ZeroDivisionError: float division by zero"
    assert reviews["computed_at"] == answer.data["computed_at"] and reviews["workers"]  # the earlier flags, with their workers


def test_a_failure_before_any_flags_were_stored_says_so(organizer, page, monkeypatch, django_capture_on_commit_callbacks):
    job, _ = rushed_job()
    _odd_data(monkeypatch, "x" * 1000 + "\nsecond line")
    _recompute(client_for(organizer), job, django_capture_on_commit_callbacks)
    error = FlagRun.objects.get(job=job).error
    assert len(error) <= attempts.ERROR_CHARS and "second line" not in error  # trimmed, one line
    line = _flags_line(page, job)
    assert "failed: ZeroDivisionError: xxx" in line and "Worker flags have not been computed for this job yet." in line
    assert not JobFlagReport.objects.filter(job=job).exists()


def test_a_success_after_a_failure_clears_the_failure_line(organizer, page, monkeypatch, django_capture_on_commit_callbacks):
    job, _ = rushed_job()
    apply_worker_flags(job.pk)
    api = client_for(organizer)
    _odd_data(monkeypatch)
    _recompute(api, job, django_capture_on_commit_callbacks)
    assert all("failed" in line for line in _both_lines(page, job))

    monkeypatch.undo()  # the data is fixed
    answer = _recompute(api, job, django_capture_on_commit_callbacks)

    assert answer.status_code == 202
    report = JobFlagReport.objects.get(job=job)
    for line in _both_lines(page, job):
        assert "failed" not in line and "Recomputing" not in line
        assert _shown(report.computed_at) in line
    run = api.get(f"/api/jobs/{job.pk}/reviews/").data["flags"]["run"]
    assert run["status"] == "succeeded" and run["error"] == "" and run["current"] is False


def test_recompute_now_says_queued_then_running_then_shows_the_flags(organizer, page, monkeypatch, django_capture_on_commit_callbacks):
    job, _ = rushed_job()
    apply_worker_flags(job.pk)  # flags of an earlier run
    with django_capture_on_commit_callbacks(execute=False) as queued:
        response = page.post(reverse("organizer:job-flags", kwargs={"pk": job.pk}))
    assert response.status_code == 302
    run = FlagRun.objects.get(job=job)
    assert run.status == FlagRun.Status.QUEUED and run.requested_by == organizer
    for line in _both_lines(page, job):
        assert line.startswith(f"Recomputing worker flags: queued at {_shown(run.queued_at)}."), line
        assert "Worker flags computed at" in line or "Flags as computed at" in line  # the earlier flags meanwhile
    assert client_for(organizer).get(f"/api/jobs/{job.pk}/reviews/").data["flags"]["run"]["status"] == "queued"

    seen_while_running = look_while_running(monkeypatch, quality_services, "job_flags", lambda: _flags_line(page, job))
    queued[0]()  # the worker takes it

    started = FlagRun.objects.get(job=job).started_at
    assert seen_while_running == [seen_while_running[0]] and seen_while_running[0].startswith(
        f"Recomputing worker flags: running since {_shown(started)}."
    )
    line = _flags_line(page, job)
    assert "Recomputing" not in line and f"Worker flags computed at {_shown(JobFlagReport.objects.get(job=job).computed_at)}" in line


def test_the_api_202_says_the_run_is_queued(organizer, django_capture_on_commit_callbacks):
    job, _ = rushed_job()
    with django_capture_on_commit_callbacks(execute=False):
        answer = client_for(organizer).post(f"/api/jobs/{job.pk}/flags/")
    run = answer.data["run"]
    assert answer.status_code == 202 and run["status"] == "queued" and run["current"] is True
    assert run["queued_at"] and run["started_at"] is None and run["error"] == ""


def test_asking_again_during_a_run_is_not_marked_done_by_the_older_run(
    organizer, page, monkeypatch, queued_by_name, django_capture_on_commit_callbacks,
):
    """The organizer clicks "recompute now" while a (sweep's) run computes: that run ends, and the
    page still says the new one is queued, since its flags were read before the click."""
    job, _ = rushed_job()
    compute = quality_services.job_flags

    def click_during_the_run(job_):
        report = compute(job_)
        flag_runs.request_flag_run(job_, by=organizer)
        return report

    monkeypatch.setattr(quality_services, "job_flags", click_during_the_run)
    with django_capture_on_commit_callbacks(execute=True):
        apply_worker_flags(job.pk)
    assert queued_by_name == [("annotation.tasks.apply_worker_flags", job.pk)]
    assert FlagRun.objects.get(job=job).status == FlagRun.Status.QUEUED
    assert _flags_line(page, job).startswith("Recomputing worker flags: queued at")


# --- the broker down, a worker lost ------------------------------------------------------------------------


def test_with_the_broker_down_the_run_is_recorded_as_queued_and_says_the_queue_did_not_take_it(
    broker_down, organizer, page, django_capture_on_commit_callbacks,
):
    job, _ = rushed_job()
    answer = _recompute(client_for(organizer), job, django_capture_on_commit_callbacks)
    assert answer.status_code == 202 and broker_down == [(job.pk,)]
    run = client_for(organizer).get(f"/api/jobs/{job.pk}/reviews/").data["flags"]["run"]
    assert run["status"] == "queued" and "queue could not be reached" in run["error"] and run["current"] is True
    run = FlagRun.objects.get(job=job)
    for line in _both_lines(page, job):
        assert line.startswith(
            f"Recomputing worker flags: queued at {_shown(run.queued_at)}, but the background queue could not be reached "
            f"at {run.queued_at:%H:%M} UTC; Quorum will try again by itself by "
            f"{run.queued_at + timedelta(seconds=settings.QUORUM_FLAG_SWEEP_SECONDS):%H:%M} UTC (or start a worker, or check the broker)."
        ), line


def test_the_sweep_runs_an_attempt_the_broker_lost_also_on_a_job_that_is_not_live(
    organizer, page, queued_by_name, django_capture_on_commit_callbacks,
):
    job, _ = rushed_job()
    pause_job(job)  # the sweep's own round covers live jobs only
    with django_capture_on_commit_callbacks(execute=True):
        flag_runs.request_flag_run(job, by=organizer)  # queued_by_name: it reached no worker
    assert flag_runs.jobs_to_sweep() == []  # it may be waiting behind others yet
    FlagRun.objects.filter(job=job).update(queued_at=timezone.now() - attempts.QUEUED_GRACE - timedelta(seconds=1))
    assert flag_runs.jobs_to_sweep() == [job.pk]

    assert sweep_worker_flags.delay().get() == 1
    assert queued_by_name[-1] == ("annotation.tasks.apply_worker_flags", job.pk)  # queued by the sweep
    apply_worker_flags(job.pk)  # a worker runs it

    assert FlagRun.objects.get(job=job).status == FlagRun.Status.SUCCEEDED
    line = _flags_line(page, job)
    assert "Recomputing" not in line and "Worker flags computed at" in line


def test_a_run_left_running_by_a_lost_worker_is_failed_by_the_sweep_and_run_again(organizer, page, monkeypatch):
    job, _ = rushed_job()
    apply_worker_flags(job.pk)
    long_ago = timezone.now() - timedelta(minutes=settings.QUORUM_RUN_DEADLINE_MINUTES + 5)
    JobFlagReport.objects.filter(job=job).update(computed_at=long_ago - timedelta(minutes=15))  # the sweep's run before
    FlagRun.objects.filter(job=job).update(status=FlagRun.Status.RUNNING, started_at=long_ago, finished_at=None)
    # A worker killed mid-run: the page says since when, so the organizer can judge.
    assert _flags_line(page, job).startswith(f"Recomputing worker flags: running since {_shown(long_ago)}.")

    queued = []
    monkeypatch.setattr(apply_worker_flags, "delay", lambda job_id: queued.append(job_id))
    assert sweep_worker_flags() == 1 and queued == [job.pk]

    line = _flags_line(page, job)
    assert line.startswith(
        f"The recomputation at {_shown(long_ago)} failed: no result within {settings.QUORUM_RUN_DEADLINE_MINUTES} minutes "
        "of its start (the worker running it was lost); the beat sweep queued it again."
    ), line
    monkeypatch.undo()
    apply_worker_flags(job.pk)  # the queued run
    assert "failed" not in _flags_line(page, job) and FlagRun.objects.get(job=job).status == FlagRun.Status.SUCCEEDED


def test_a_recent_running_attempt_is_left_alone_by_the_sweep():
    job, _ = rushed_job()
    pause_job(job)
    FlagRun.objects.create(job=job, status=FlagRun.Status.RUNNING, started_at=timezone.now())
    assert flag_runs.jobs_to_sweep() == []
    assert FlagRun.objects.get(job=job).status == FlagRun.Status.RUNNING
