"""An export asked for twice before the first has started (a double click on "Export results", a
retried API call) is one run: the second request gets the run already queued. Before, each click
queued a run of its own, and the job page listed two exports of the same data."""
import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import ExportRun, RunStatus
from annotation.services.exports import start_export
from tests.factories import make_corpus, make_live_job

pytestmark = pytest.mark.django_db


@pytest.fixture
def job():
    return make_live_job(make_corpus(dialogs=1, user_turns=1))


def test_the_same_export_asked_twice_before_it_starts_is_one_run(job, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as queued:
        first = start_export(job)
        again = start_export(job)
    assert again.pk == first.pk and len(queued) == 1

    ExportRun.objects.filter(pk=first.pk).update(status=RunStatus.RUNNING)  # under way: it may have read the data already
    with django_capture_on_commit_callbacks():
        assert start_export(job).pk != first.pk


def test_a_double_click_on_the_job_page_lists_one_export(job, organizer, django_capture_on_commit_callbacks):
    client = Client()
    client.force_login(organizer)
    with django_capture_on_commit_callbacks():  # not run: the first is still pending when the second click arrives
        for _click in range(2):
            client.post(reverse("organizer:job-export", args=[job.pk]), {})
    assert ExportRun.objects.filter(job=job).count() == 1
