"""Every 202 of the annotation API names, in Location, the absolute URL a client follows to learn
how its work stands: the import run, the export run, the review list whose flags a recomputation
replaces. A GET on it answers 200 with the state, and a failure with its reason."""

import io

import pytest

from annotation.models import ExportRun, ImportRun, RunStatus
from annotation.services.claims import claim_next_slot, submit_response
from tests.annotation.test_api import client_for, multiwoz_upload
from tests.api_follow import followed
from tests.factories import good_answers, make_corpus, make_live_job

pytestmark = pytest.mark.django_db


def test_a_corpus_upload_names_its_import_run_and_the_corpus_once_imported(organizer, django_capture_on_commit_callbacks):
    client = client_for(organizer)
    with django_capture_on_commit_callbacks() as queued:
        response = client.post("/api/corpora/", multiwoz_upload(name="restaurants"), format="multipart")
    waiting = followed(client, response)
    assert (waiting["status"], waiting["finished"], waiting["corpus_url"]) == ("pending", False, None)
    for callback in queued:  # the worker runs the import
        callback()
    done = client.get(response["Location"]).json()
    assert done["status"] == "succeeded" and done["finished"] and done["error"] == ""
    corpus = client.get(done["corpus_url"])
    assert corpus.status_code == 200 and corpus.json()["name"] == "restaurants"


def test_a_failed_import_reports_its_error_where_the_202_points(organizer, django_capture_on_commit_callbacks):
    client = client_for(organizer)
    broken = io.BytesIO(b'{"d1": {"log": [{"text": "hi"')  # cut short
    broken.name = "data.json"
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            "/api/corpora/", {"name": "broken", "source_format": "multiwoz", "data": broken}, format="multipart"
        )
    failed = followed(client, response)
    assert failed["status"] == "failed" and failed["finished"] and failed["error"]
    assert failed["corpus_url"] is None
    assert ImportRun.objects.get(pk=failed["id"]).error == failed["error"]


def test_an_export_names_its_run_and_once_written_its_files_and_zip(organizer, django_capture_on_commit_callbacks):
    client = client_for(organizer)
    job = job_with_a_response()
    with django_capture_on_commit_callbacks() as queued:
        response = client.post(f"/api/jobs/{job.pk}/exports/", {}, format="json")
    waiting = followed(client, response)
    assert waiting["status"] == "pending" and waiting["files"] == [] and waiting["zip_url"] is None
    for callback in queued:
        callback()
    done = client.get(response["Location"]).json()
    assert done["status"] == "succeeded" and done["finished"]
    assert "responses.csv" in [f["name"] for f in done["files"]]
    download = client.get(done["zip_url"])
    assert download.status_code == 200 and download["Content-Type"] == "application/zip"


def test_a_failed_export_reports_its_error(organizer):
    client = client_for(organizer)
    job = make_live_job(make_corpus())
    run = ExportRun.objects.create(job=job, status=RunStatus.FAILED, error="The disk is full; free some space and export again.")
    body = client.get(f"/api/exports/{run.pk}/").json()
    assert (body["status"], body["finished"], body["error"]) == (
        "failed",
        True,
        "The disk is full; free some space and export again.",
    )
    assert body["zip_url"] is None and body["url"].endswith(f"/api/exports/{run.pk}/")


def test_recomputing_flags_names_the_review_list_whose_flags_change(organizer, django_capture_on_commit_callbacks):
    client = client_for(organizer)
    job = job_with_a_response()
    with django_capture_on_commit_callbacks() as queued:
        response = client.post(f"/api/jobs/{job.pk}/flags/")
    assert response.json()["computed_at"] is None  # no flags stored yet
    before = followed(client, response)
    assert response["Location"].endswith(f"/api/jobs/{job.pk}/reviews/") and before["flags"]["computed_at"] is None
    for callback in queued:
        callback()
    after = client.get(response["Location"]).json()
    assert after["flags"]["computed_at"] is not None
    again = client.post(f"/api/jobs/{job.pk}/flags/")
    assert again.json()["computed_at"] == after["flags"]["computed_at"]  # what to wait past next time


def test_another_organizers_run_is_followed_and_other_people_are_refused(
    organizer, django_user_model, make_annotator, django_capture_on_commit_callbacks
):
    from quorum.roles import make_organizer

    colleague = django_user_model.objects.create_user("carl")
    make_organizer(colleague)
    with django_capture_on_commit_callbacks(execute=True):
        response = client_for(colleague).post("/api/corpora/", multiwoz_upload(name="theirs"), format="multipart")
    location = response["Location"]
    assert client_for(organizer).get(location).status_code == 200  # every organizer sees every run
    assert client_for(make_annotator("ann")[0]).get(location).status_code == 403
    assert client_for().get(location).status_code == 401


def job_with_a_response():
    """A live job with one submitted response, so that its export and its flags have something to read."""
    from django.contrib.auth import get_user_model

    from quorum.roles import make_annotator

    job = make_live_job(make_corpus())
    worker = make_annotator(get_user_model().objects.create_user("writer"))
    slot = claim_next_slot(job=job, worker=worker)
    submit_response(slot_id=slot.id, worker=worker, answers=good_answers(slot.item))
    return job
