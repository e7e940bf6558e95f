"""An export started from the job page runs in the background and the page follows it (issue 23,
item 4): the POST answers at once with the run pending, the progress endpoint gives its state and
the row to show, and once done the row lists the files (or the error, saying what to do)."""
import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import ExportRun, RunStatus

from .test_export_speech_errors import USER_TURNS, corpus_job, use_fake_speech  # noqa: F401 - corpus_job is a fixture

pytestmark = pytest.mark.django_db


def follow(client, run):
    return client.get(reverse("organizer:export-progress", args=[run.pk])).json()


def test_a_speech_error_export_starts_at_once_and_its_progress_is_followed_to_the_files(
    corpus_job, organizer, monkeypatch, django_capture_on_commit_callbacks  # noqa: F811
):
    use_fake_speech(monkeypatch)
    client = Client()
    client.force_login(organizer)
    job_page = reverse("organizer:job", args=[corpus_job.pk])
    with django_capture_on_commit_callbacks(execute=False) as queued:
        response = client.post(reverse("organizer:job-export", args=[corpus_job.pk]), {"speech_errors_wer": "0.2", "speech_errors_seed": "4"})
    assert response.status_code == 302 and response["Location"].endswith("#exports")
    assert len(queued) == 1  # the work is queued for after the commit, not done in the request
    run = ExportRun.objects.get()
    assert run.status == RunStatus.PENDING
    page = client.get(job_page).content.decode()
    assert "Export started in the background" in page
    assert f'data-progress-url="{reverse("organizer:export-progress", args=[run.pk])}"' in page and "progress.js" in page

    state = follow(client, run)
    assert (state["status"], state["finished"], state["done"]) == ("pending", False, 0)
    assert "data-progress-url" in state["html"] and "Waiting for the background worker" in state["html"]

    queued[0]()  # the worker takes it
    state = follow(client, run)
    run.refresh_from_db()
    assert state["status"] == "succeeded" and state["finished"] and state["error"] == ""
    # Done counts the export's rows and a pass over every user turn per speech step; it ends at its total.
    assert state["done"] == state["total"] == run.total and state["total"] > len(USER_TURNS) and state["progress"] == 1
    assert "data-progress-url" not in state["html"]  # the page stops polling
    assert "speech_errors/dialogs.jsonl" in state["html"] and reverse("api:export-zip", args=[run.pk]) in state["html"]
    download = client.get(reverse("api:export-file", args=[run.pk, "speech_errors/dialogs.jsonl"]))
    assert download.status_code == 200 and b"".join(download.streaming_content if download.streaming else [download.content])


def test_a_failed_export_row_says_what_to_do(corpus_job, organizer, monkeypatch, django_capture_on_commit_callbacks):  # noqa: F811
    use_fake_speech(monkeypatch, min_deleted=2)  # clean speech already has a floor above the target
    client = Client()
    client.force_login(organizer)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("organizer:job-export", args=[corpus_job.pk]), {"speech_errors_wer": "0.1"})
    run = ExportRun.objects.get()
    state = follow(client, run)
    assert state["status"] == "failed" and state["finished"] and "the floor is" in state["error"]
    assert 'role="alert"' in state["html"] and "the floor is" in state["html"] and "data-progress-url" not in state["html"]


def test_the_progress_of_an_export_is_for_organizers_only(corpus_job, make_annotator):  # noqa: F811
    run = ExportRun.objects.create(job=corpus_job)
    client = Client()
    assert client.get(reverse("organizer:export-progress", args=[run.pk])).status_code == 302  # to the login page
    client.force_login(make_annotator("ann")[0])
    assert client.get(reverse("organizer:export-progress", args=[run.pk])).status_code == 403
