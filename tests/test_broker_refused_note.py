"""Work started while the broker is unreachable (kombu's OperationalError when the task is sent) is
kept, and the click answers as usual; the run's own fragment says the queue could not be reached,
when, and by when Quorum tries again by itself. Before, an export showed "Pending 0% Waiting for the
background worker" until the lost-work sweep queued it again, two hours later, with nothing said."""
import re
from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from kombu.exceptions import OperationalError

from annotation.models import ExportRun, FlagRun, RunStatus
from annotation.services import flag_runs
from annotation.services.exports import run_export
from tests.annotation.test_api_follow_runs import job_with_a_response

pytestmark = pytest.mark.django_db

NOTE = re.compile(
    r"the background queue could not be reached at (\d\d:\d\d) UTC; Quorum will try again by itself by (\d\d:\d\d) UTC "
    r"\(or start a worker, or check the broker\)"
)


@pytest.fixture
def unreachable_broker(monkeypatch):
    """Celery as in production (not eager), its sends refused as kombu refuses them with Redis down."""
    from quorum import background

    def refuse(self, *args, **kwargs):
        raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(background, "runs_inline", lambda: False)
    monkeypatch.setattr("celery.app.task.Task.delay", refuse)
    monkeypatch.setattr("celery.app.task.Task.apply_async", refuse)


@pytest.fixture
def page(organizer):
    client = Client()
    client.force_login(organizer)
    return client


def _hhmm(moment) -> str:
    return timezone.localtime(moment).strftime("%H:%M")


def _minutes_since(start) -> set[str]:
    """The HH:MM a note written between `start` and now may carry (the clock may pass a minute)."""
    return {_hhmm(start), _hhmm(timezone.now())}


def test_an_export_the_broker_refused_says_so_and_when_quorum_tries_again(
    unreachable_broker, page, settings, django_capture_on_commit_callbacks,
):
    job = job_with_a_response()
    clicked_at = timezone.now()
    with django_capture_on_commit_callbacks(execute=True):
        clicked = page.post(reverse("organizer:job-export", args=[job.pk]))
    assert clicked.status_code == 302  # never a 500 on the button
    run = ExportRun.objects.get(job=job)
    assert run.status == RunStatus.PENDING  # kept: the sweep queues it again

    state = page.get(reverse("organizer:export-progress", args=[run.pk])).json()
    assert state["status"] == "pending" and not state["finished"]
    refused, retry = NOTE.search(state["html"]).groups()
    assert refused in _minutes_since(clicked_at)
    due = run.created_at + timedelta(minutes=settings.QUORUM_RUN_DEADLINE_MINUTES, seconds=settings.QUORUM_LOST_WORK_SWEEP_SECONDS)
    assert retry == _hhmm(due)
    assert "Waiting for the background worker" not in state["html"] and "data-progress-url" in state["html"]  # still followed
    assert NOTE.search(page.get(reverse("organizer:job", args=[job.pk])).content.decode())  # the job page's row says it too
    # So does the dashboard's Recent exports row, and the fragment progress.js replaces it with.
    dashboard = page.get(reverse("organizer:dashboard")).content.decode()
    row = dashboard.split(f'id="dashboard-export-{run.pk}"')[1].split("</tr>")[0]
    assert "Not started: " in row and NOTE.search(row)
    fragment = page.get(reverse("organizer:export-progress", args=[run.pk]), {"fragment": "dashboard"}).json()["html"]
    assert NOTE.search(fragment) and "data-progress-url" in fragment

    run_export(run.pk)  # the sweep queued it again, a worker runs it
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED and run.error == ""


def test_a_flag_run_the_broker_refused_says_so_and_the_flag_sweep_takes_it(
    unreachable_broker, page, settings, django_capture_on_commit_callbacks,
):
    job = job_with_a_response()
    clicked_at = timezone.now()
    with django_capture_on_commit_callbacks(execute=True):
        clicked = page.post(reverse("organizer:job-flags", kwargs={"pk": job.pk}))
    assert clicked.status_code == 302
    run = FlagRun.objects.get(job=job)
    assert run.status == FlagRun.Status.QUEUED
    html = page.get(reverse("organizer:job-flags-progress", kwargs={"pk": job.pk})).json()["html"]
    refused, retry = NOTE.search(html).groups()
    assert refused in _minutes_since(clicked_at)
    assert retry == _hhmm(run.queued_at + timedelta(seconds=settings.QUORUM_FLAG_SWEEP_SECONDS))
    assert job.pk in flag_runs.jobs_to_sweep()  # the next flag sweep queues it again


def test_a_campaign_run_and_a_scoring_run_the_broker_refused_say_so_until_they_start(
    unreachable_broker, page, tmp_path, django_capture_on_commit_callbacks,
):
    """The campaign page's planner and the objective scores' Compute kept "Waiting for the
    background worker" (and nothing) while the broker refused their task."""
    from evaluation.campaigns.services.campaigns import create_campaign
    from evaluation.campaigns.services.imports import import_entries, import_test_set
    from evaluation.campaigns.services.objective import run_scoring
    from evaluation.campaigns.services.runs import execute
    from evaluation.models import CampaignRun, ObjectiveScoringRun
    from tests.evaluation.test_campaign_runs import GOAL, progress
    from tests.evaluation.test_objective_scoring import FIXTURES
    from tests.evaluation.test_power import write_pilot

    test_set = import_test_set("DSTC9 Track 1", "test", FIXTURES / "labels.json", FIXTURES / "knowledge.json")
    import_entries(test_set, FIXTURES / "entries", scores_path=FIXTURES / "score.csv")
    campaign = create_campaign("pilot", test_set, [])
    clicked_at = timezone.now()
    with write_pilot(tmp_path / "pilot.csv").open("rb") as handle, django_capture_on_commit_callbacks(execute=True):
        assert page.post(reverse("evaluation:campaign-results", args=[campaign.pk]), {**GOAL, "pilot_file": handle}).status_code == 302
    run = CampaignRun.objects.get()
    state = progress(page, run)
    assert state["status"] == "pending" and "data-progress-url" in state["html"]
    assert NOTE.search(state["html"]).group(1) in _minutes_since(clicked_at)
    assert "Waiting for the background worker" not in state["html"]
    execute(run.pk)  # the sweep queued it again, a worker runs it
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED and run.error == "" and not NOTE.search(progress(page, run)["html"])

    objective = f"/evaluation/test-sets/{test_set.pk}/objective/"
    with django_capture_on_commit_callbacks(execute=True):
        assert page.post(objective + "compute/").status_code == 302
    scoring = ObjectiveScoringRun.objects.get()
    assert scoring.status == RunStatus.PENDING and NOTE.search(page.get(objective).content.decode())
    run_scoring(scoring.pk)
    scoring.refresh_from_db()
    assert scoring.status == RunStatus.SUCCEEDED and not NOTE.search(page.get(objective).content.decode())


def test_a_sweep_the_broker_refuses_again_moves_the_promised_retry_on(unreachable_broker, page, settings):
    """The lost-work sweep queued a pending export again while the broker was still down: its page
    kept saying Quorum would try again "by" a time already past."""
    from annotation.services import sweeps

    job = job_with_a_response()
    run = ExportRun.objects.create(job=job)
    long_ago = timezone.now() - timedelta(minutes=settings.QUORUM_RUN_DEADLINE_MINUTES + 90)
    stale = "the background queue could not be reached at 01:00 UTC; Quorum will try again by itself by 01:30 UTC (or start a worker, or check the broker)"
    ExportRun.objects.filter(pk=run.pk).update(created_at=long_ago, error=stale)

    swept_at = timezone.now()
    assert sweeps.settle_stuck_runs()["requeued"] == 0  # refused again: kept pending, nothing lost
    run.refresh_from_db()
    assert run.status == RunStatus.PENDING
    refused, retry = NOTE.search(run.error).groups()
    assert refused in _minutes_since(swept_at)
    assert retry in {_hhmm(at + timedelta(seconds=settings.QUORUM_LOST_WORK_SWEEP_SECONDS)) for at in (swept_at, timezone.now())}
    state = page.get(reverse("organizer:export-progress", args=[run.pk])).json()
    assert NOTE.search(state["html"]).groups() == (refused, retry)


def test_a_flag_sweep_the_broker_refuses_again_moves_the_promised_retry_on(unreachable_broker, settings):
    from annotation.tasks import sweep_worker_flags

    job = job_with_a_response()
    stale = "the background queue could not be reached at 01:00 UTC; Quorum will try again by itself by 01:05 UTC (or start a worker, or check the broker)"
    FlagRun.objects.create(job=job, status=FlagRun.Status.QUEUED, queued_at=timezone.now() - timedelta(hours=3), error=stale)

    swept_at = timezone.now()
    assert sweep_worker_flags() == 0
    run = FlagRun.objects.get(job=job)
    assert run.status == FlagRun.Status.QUEUED
    refused, retry = NOTE.search(run.error).groups()
    assert refused in _minutes_since(swept_at)
    assert retry in {_hhmm(at + timedelta(seconds=settings.QUORUM_FLAG_SWEEP_SECONDS)) for at in (swept_at, timezone.now())}
