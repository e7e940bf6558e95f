"""The page a builder sees right after "Create draft job", while no worker has taken the creation
yet: its sentences read as sentences ("…written. Waiting for the background worker. This page
follows it…", not "worker; This page")."""
import pytest
from django.urls import reverse

from quorum import background
from tests.factories import make_corpus

from .test_job_creation_in_background import form_data


@pytest.mark.django_db
def test_the_waiting_creation_page_reads_as_sentences(organizer, client, monkeypatch):
    monkeypatch.setattr(background, "queue_now", lambda name, *args, countdown=None: True)  # queued; no worker runs it
    client.force_login(organizer)
    response = client.post(reverse("organizer:job-new"), form_data(make_corpus(dialogs=1, user_turns=1)))
    page = client.get(response["Location"]).content.decode()
    text = " ".join(page[page.index('id="job-creation"'):].split())
    assert "Waiting for the background worker. This page follows it and opens the job once it has all its items" in text
