"""The dashboard's recent imports and exports follow their running runs as the job and import pages
do: a pending or running row carries the progress hook that `static/progress.js` follows, and its
progress endpoint answers with that same row (`?fragment=dashboard`) until the run has ended."""
import pytest
from django.urls import reverse

from annotation.models import ExportRun, ImportRun, RunStatus
from annotation.services.jobs import create_job
from tests.factories import make_corpus

pytestmark = pytest.mark.django_db


@pytest.fixture
def signed_in(client, organizer):
    client.force_login(organizer)
    return client


@pytest.fixture
def runs():
    job = create_job(corpus=make_corpus(), name="the job", redundancy=1)
    return {
        "running import": ImportRun.objects.create(corpus_name="arriving", source_format="jsonl", status=RunStatus.RUNNING, done=1, total=4),
        "finished import": ImportRun.objects.create(corpus_name="arrived", source_format="jsonl", status=RunStatus.SUCCEEDED, done=4, total=4),
        "pending export": ExportRun.objects.create(job=job, status=RunStatus.PENDING),
        "failed export": ExportRun.objects.create(job=job, status=RunStatus.FAILED, error="disk full"),
    }


def hook(run) -> str:
    name = "organizer:import-progress" if isinstance(run, ImportRun) else "organizer:export-progress"
    return f'data-progress-url="{reverse(name, args=[run.pk])}?fragment=dashboard"'


def test_the_dashboards_running_rows_carry_the_progress_hook_and_finished_rows_do_not(signed_in, runs):
    page = signed_in.get(reverse("organizer:dashboard")).content.decode()
    assert "progress.js" in page
    assert hook(runs["running import"]) in page and hook(runs["pending export"]) in page
    assert page.count("data-progress-url") == 2  # the finished import and the failed export are still
    assert f'id="dashboard-import-{runs["finished import"].pk}"' in page and f'id="dashboard-export-{runs["failed export"].pk}"' in page
    assert '<progress value="0.25" max="1" aria-label="Import of arriving">' in page


def test_a_dashboard_row_is_followed_until_its_run_has_ended(signed_in, runs):
    export = runs["pending export"]
    url = reverse("organizer:export-progress", args=[export.pk])
    state = signed_in.get(url, {"fragment": "dashboard"}).json()
    assert state["status"] == "pending" and state["html"].strip().startswith(f'<tr id="dashboard-export-{export.pk}"')
    assert hook(export) in state["html"] and "the job" in state["html"]

    ExportRun.objects.filter(pk=export.pk).update(status=RunStatus.SUCCEEDED, files=["responses.csv", "items.csv"])
    state = signed_in.get(url, {"fragment": "dashboard"}).json()
    assert state["finished"] and "data-progress-url" not in state["html"] and "<progress" not in state["html"]
    assert "Succeeded" in state["html"] and "<td>2</td>" in state["html"]  # its two files counted, as the dashboard does

    imported = runs["running import"]
    state = signed_in.get(reverse("organizer:import-progress", args=[imported.pk]), {"fragment": "dashboard"}).json()
    assert state["html"].strip().startswith(f'<tr id="dashboard-import-{imported.pk}"') and "25%" in state["html"]


def test_the_run_pages_keep_their_own_fragment_and_an_unknown_one_is_a_400(signed_in, runs):
    export = runs["pending export"]
    url = reverse("organizer:export-progress", args=[export.pk])
    assert signed_in.get(url).json()["html"].strip().startswith(f'<tr id="export-run-{export.pk}"')  # the job page's row
    refused = signed_in.get(url, {"fragment": "sidebar"})
    assert refused.status_code == 400 and "unknown fragment 'sidebar'" in refused.json()["detail"] and "'dashboard'" in refused.json()["detail"]
