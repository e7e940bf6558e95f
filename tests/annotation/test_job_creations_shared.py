"""Organizers are one team: every organizer sees and acts on every organizer's jobs, imports and
exports, on the pages and in the API alike. A job's creation follows the same rule; the API used to
answer another organizer's creation with a 404 (and list only the requester's) while the pages
opened it to every organizer, and the dashboard listed only the viewer's own (it lists every
organizer's now, naming who asked). Someone who is not an organizer gets none of it."""
import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.models import JobCreationRun, RunStatus
from quorum import background
from quorum.roles import make_organizer
from tests.factories import make_corpus

pytestmark = pytest.mark.django_db


def run_queued(queued):
    """Run the tasks queued so far, as a worker would."""
    while queued:
        name, *args = queued.pop(0)
        background.task_named(name).apply(args=args)


def signed_in(user, api=False):
    if api:
        client = APIClient()
        client.force_authenticate(user)
        return client
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def failed_creation(organizer, queued_by_name):
    """Olga's creation of a job from a sample larger than the corpus's turns: failed, nothing made."""
    corpus = make_corpus(dialogs=2, user_turns=2)
    signed_in(organizer).post(reverse("organizer:job-new"), {
        "corpus": corpus.pk, "name": "olga's rewrites", "task_type": "rewrite", "selection_mode": "sample", "sample_size": "100",
        "seed": "0", "redundancy": "1", "reward": "0.50", "claim_timeout_minutes": "30",
    })
    run_queued(queued_by_name)
    run = JobCreationRun.objects.get()
    assert run.status == RunStatus.FAILED and run.created_by == organizer
    return run


@pytest.fixture
def otto(django_user_model):
    user = django_user_model.objects.create_user("otto", password="organizer-pass-2")
    make_organizer(user)
    return user


def test_another_organizer_follows_changes_and_tries_again_a_creation_on_the_pages(failed_creation, otto, queued_by_name):
    run, web = failed_creation, signed_in(otto)
    page = web.get(reverse("organizer:job-creation", kwargs={"pk": run.pk})).content.decode()
    assert "a sample of 100 turns is more than the 4 user turns" in page and 'id="creation-retry"' in page
    assert web.get(reverse("organizer:job-creation-progress", kwargs={"pk": run.pk})).json()["status"] == "failed"
    form = web.get(reverse("organizer:job-new"), {"from_creation": run.pk}).context["form"]
    assert form.initial["name"] == "olga's rewrites"
    web.post(reverse("organizer:job-creation-retry", kwargs={"pk": run.pk}))
    run.refresh_from_db()
    assert run.status == RunStatus.PENDING and [name for name, *_ in queued_by_name] == ["annotation.tasks.run_job_creation"]


def test_another_organizer_lists_and_follows_a_creation_in_the_api_as_they_do_its_job(failed_creation, otto, organizer):
    run, api = failed_creation, signed_in(otto, api=True)
    assert [row["name"] for row in api.get("/api/job-creations/").data["results"]] == ["olga's rewrites"]
    shown = api.get(f"/api/job-creations/{run.pk}/")
    assert shown.status_code == 200 and (shown.data["status"], shown.data["error_field"]) == ("failed", "selection.size")
    # The same answer its requester gets: nothing in it is theirs alone.
    assert signed_in(organizer, api=True).get(f"/api/job-creations/{run.pk}/").data == shown.data


def row_of(page: str, run) -> str:
    row = page[page.index(f'id="dashboard-creation-{run.pk}"'):]
    return row[:row.index("</tr>")]


def test_the_dashboard_lists_another_organizers_failed_creation_naming_who_asked(failed_creation, otto, organizer):
    run = failed_creation
    row = row_of(signed_in(otto).get(reverse("organizer:dashboard")).content.decode(), run)
    assert "olga&#x27;s rewrites" in row and "Failed" in row and "a sample of 100 turns is more than the 4 user turns" in row
    assert "asked by olga" in row and reverse("organizer:job-creation-retry", kwargs={"pk": run.pk}) in row
    # Its requester's own row names no one, and neither does the row progress.js puts in its place.
    assert "asked by" not in row_of(signed_in(organizer).get(reverse("organizer:dashboard")).content.decode(), run)
    follow = f"{reverse('organizer:job-creation-progress', kwargs={'pk': run.pk})}?fragment=dashboard"
    assert "asked by olga" in signed_in(otto).get(follow).json()["html"]
    assert "asked by" not in signed_in(organizer).get(follow).json()["html"]


def test_the_dashboard_lists_creations_newest_first_at_most_as_many_as_imports(failed_creation, otto, organizer):
    corpus = failed_creation.corpus
    later = [
        JobCreationRun.objects.create(corpus=corpus, name=f"olga's job {n}", task_type="rewrite", created_by=organizer) for n in range(10)
    ]
    page = signed_in(otto).get(reverse("organizer:dashboard")).content.decode()
    shown = [run for run in [failed_creation, *later] if f'id="dashboard-creation-{run.pk}"' in page]
    assert shown == later  # the ten newest, as the imports and exports; the older failure is past them
    positions = [page.index(f'id="dashboard-creation-{run.pk}"') for run in reversed(later)]
    assert positions == sorted(positions)  # newest first


def test_someone_who_is_not_an_organizer_gets_no_creation(failed_creation, make_annotator):
    annotator, _ = make_annotator("ann")
    web, api = signed_in(annotator), signed_in(annotator, api=True)
    assert web.get(reverse("organizer:dashboard")).status_code == 403
    for name in ("organizer:job-creation", "organizer:job-creation-progress"):
        assert web.get(reverse(name, kwargs={"pk": failed_creation.pk})).status_code == 403
    assert web.post(reverse("organizer:job-creation-retry", kwargs={"pk": failed_creation.pk})).status_code == 403
    assert api.get("/api/job-creations/").status_code == 403
    assert api.get(f"/api/job-creations/{failed_creation.pk}/").status_code == 403
    failed_creation.refresh_from_db()
    assert failed_creation.status == RunStatus.FAILED
