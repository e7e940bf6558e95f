"""A corpus job asked for on the job form is made in the background (a job over 100,000 turns held
the request 15-41 s on PostgreSQL): the form answers at once with a page that follows the creation,
the job exists only once all its items and slots are written (so it cannot be launched half-made),
and a creation that fails part way leaves nothing, says why, and can be run again.

The worker is the test: queued tasks are recorded (`background.queue_now` replaced) and run when
the test says, as a worker process would pick them up."""
import pytest
from django.db import DatabaseError
from django.urls import reverse

from annotation.models import Item, Job, JobCreationRun, RunStatus, Slot
from annotation.services import jobs
from quorum import background
from tests.factories import make_corpus

TASK = "annotation.tasks.run_job_creation"
DIALOGS, USER_TURNS, REDUNDANCY = 3, 2, 3


@pytest.fixture
def queued(monkeypatch):
    """The (task, args) queued so far; `run_queued()` runs them as the worker would."""
    tasks: list[tuple[str, tuple]] = []
    monkeypatch.setattr(background, "queue_now", lambda name, *args, countdown=None: tasks.append((name, args)) or True)
    return tasks


def run_queued(tasks):
    while tasks:
        name, args = tasks.pop(0)
        background.task_named(name).apply(args=args)


def form_data(corpus, **changes):
    data = {
        "corpus": corpus.pk, "name": "big rewrites", "task_type": "rewrite", "selection_mode": "all", "seed": "0",
        "redundancy": str(REDUNDANCY), "reward": "0.50", "claim_timeout_minutes": "30", "instructions": "",
        "setting__rewrite__variants": "paraphrase, typos",
    }
    return {**data, **changes}


def progress(client, run):
    return client.get(reverse("organizer:job-creation-progress", kwargs={"pk": run.pk})).json()


@pytest.mark.django_db
def test_the_form_answers_at_once_and_the_page_follows_the_creation_to_the_job(organizer, client, queued):
    corpus = make_corpus(dialogs=DIALOGS, user_turns=USER_TURNS)
    client.force_login(organizer)
    response = client.post(reverse("organizer:job-new"), form_data(corpus))

    # Answered before any item was written: the page of the creation, waiting for the worker.
    run = JobCreationRun.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("organizer:job-creation", kwargs={"pk": run.pk})
    assert queued == [(TASK, (run.pk,))]
    assert not Job.objects.filter(name="big rewrites").exists()  # nothing to launch before its items exist
    page = client.get(response["Location"]).content.decode()
    assert "Creating the job “big rewrites”" in page and "Waiting for the background worker" in page
    assert 'id="creation-progress"' in page and f'data-progress-url="{reverse("organizer:job-creation-progress", kwargs={"pk": run.pk})}"' in page
    state = progress(client, run)
    assert (state["status"], state["finished"]) == ("pending", False)

    run_queued(queued)

    state = progress(client, run)
    rows = DIALOGS * USER_TURNS * (1 + REDUNDANCY)
    assert (state["status"], state["finished"], state["done"], state["total"]) == ("succeeded", True, rows, rows)
    assert "data-shows-output" in state["html"] and "data-progress-url" not in state["html"]
    job = Job.objects.get(name="big rewrites")
    assert (job.state, job.items.count(), Slot.objects.filter(job=job).count()) == ("draft", DIALOGS * USER_TURNS, DIALOGS * USER_TURNS * REDUNDANCY)
    assert job.settings["variants"] == ["paraphrase", "typos"] and job.created_by == organizer
    # The page of a creation that has made its job is the job's page, with what the form used to say.
    landed = client.get(reverse("organizer:job-creation", kwargs={"pk": run.pk}), follow=True)
    assert landed.redirect_chain[-1][0] == reverse("organizer:job", kwargs={"pk": job.pk})
    assert "Created draft job &#x27;big rewrites&#x27;" in landed.content.decode()


@pytest.mark.django_db
def test_a_bad_request_is_refused_on_the_form_and_records_no_creation(organizer, client, queued):
    corpus = make_corpus(dialogs=DIALOGS, user_turns=USER_TURNS)
    client.force_login(organizer)
    response = client.post(reverse("organizer:job-new"), form_data(corpus, selection_mode="dialogs", dialog_ids="d1 NOPE"))
    assert response.status_code == 200 and "dialogs not in corpus &#x27;restaurants&#x27;: NOPE" in response.content.decode()
    assert not JobCreationRun.objects.exists() and queued == []


@pytest.mark.django_db
def test_a_sample_larger_than_the_turns_fails_its_creation_with_the_reason_and_a_way_back(organizer, client, queued):
    corpus = make_corpus(dialogs=DIALOGS, user_turns=USER_TURNS)
    client.force_login(organizer)
    client.post(reverse("organizer:job-new"), form_data(corpus, selection_mode="sample", sample_size="100"))
    run_queued(queued)
    run = JobCreationRun.objects.get()
    assert (run.status, run.error_field) == (RunStatus.FAILED, "selection.size")
    page = client.get(reverse("organizer:job-creation", kwargs={"pk": run.pk})).content.decode()
    assert "a sample of 100 turns is more than the 6 user turns of corpus &#x27;restaurants&#x27;" in page
    assert 'id="creation-change"' in page and f"?corpus={corpus.pk}&amp;task_type=rewrite" in page
    assert not Job.objects.filter(name="big rewrites").exists()


@pytest.mark.django_db(transaction=True)  # the job's own transaction rolls back, as in production
def test_a_creation_that_fails_midway_leaves_nothing_says_why_and_can_be_tried_again(organizer, client, queued, monkeypatch):
    corpus = make_corpus(dialogs=DIALOGS, user_turns=USER_TURNS)
    client.force_login(organizer)
    client.post(reverse("organizer:job-new"), form_data(corpus))
    run = JobCreationRun.objects.get()
    insert_slots = jobs._insert_slots

    def items_written_then_the_disk_fills(job, redundancy, first_position=0):
        assert Item.objects.filter(job=job).count() == DIALOGS * USER_TURNS  # part way: the items are in
        raise DatabaseError("could not extend file: No space left on device")

    monkeypatch.setattr(jobs, "_insert_slots", items_written_then_the_disk_fills)
    run_queued(queued)

    run.refresh_from_db()
    assert run.status == RunStatus.FAILED and "DatabaseError" in run.error
    assert not Job.objects.filter(name="big rewrites").exists() and not Item.objects.exists() and not Slot.objects.exists()
    page = client.get(reverse("organizer:job-creation", kwargs={"pk": run.pk})).content.decode()
    assert "The job could not be created:" in page and "Nothing was created" in page and 'id="creation-retry"' in page
    assert "data-progress-url" not in page  # finished: the page stops asking

    monkeypatch.setattr(jobs, "_insert_slots", insert_slots)  # the disk has room again
    response = client.post(reverse("organizer:job-creation-retry", kwargs={"pk": run.pk}))
    assert response["Location"] == reverse("organizer:job-creation", kwargs={"pk": run.pk})
    assert progress(client, run)["status"] == "pending"
    run_queued(queued)
    job = Job.objects.get(name="big rewrites")
    assert (job.items.count(), Slot.objects.filter(job=job).count()) == (DIALOGS * USER_TURNS, DIALOGS * USER_TURNS * REDUNDANCY)
    assert JobCreationRun.objects.get().job == job
    # Once made, it is not made twice.
    client.post(reverse("organizer:job-creation-retry", kwargs={"pk": run.pk}))
    assert queued == [] and Job.objects.filter(name="big rewrites").count() == 1


@pytest.mark.django_db
def test_a_creation_the_broker_refused_says_so_and_the_lost_work_sweep_queues_it_again(organizer, client, monkeypatch, django_capture_on_commit_callbacks):
    from datetime import timedelta

    from django.utils import timezone

    from annotation.services.sweeps import settle_stuck_runs

    corpus = make_corpus(dialogs=DIALOGS, user_turns=USER_TURNS)
    client.force_login(organizer)
    monkeypatch.setattr(background, "runs_inline", lambda: False)  # a real broker, which is down
    monkeypatch.setattr(background, "queue_now", lambda name, *args, countdown=None: False)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("organizer:job-new"), form_data(corpus))
    run = JobCreationRun.objects.get()
    page = client.get(reverse("organizer:job-creation", kwargs={"pk": run.pk})).content.decode()
    assert "Pending" in page and "Not started: the background queue could not be reached" in page

    tasks: list[tuple[str, tuple]] = []
    monkeypatch.setattr(background, "queue_now", lambda name, *args, countdown=None: tasks.append((name, args)) or True)
    settle_stuck_runs(now=timezone.now() + timedelta(hours=2))
    assert tasks == [(TASK, (run.pk,))]
    run_queued(tasks)
    assert Job.objects.get(name="big rewrites").items.count() == DIALOGS * USER_TURNS
