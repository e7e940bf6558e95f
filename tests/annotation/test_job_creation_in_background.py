"""A corpus job asked for on the job form is made in the background (a job over 100,000 turns held
the request 15-41 s on PostgreSQL): the form answers at once with a page that follows the creation,
the job exists only once all its items and slots are written (so it cannot be launched half-made),
and a creation that fails part way leaves nothing, says why, and can be run again.

The worker is the test: queued tasks are recorded (`background.queue_now` replaced) and run when
the test says, as a worker process would pick them up.

`POST /api/jobs/` and `manage.py create_job` make a corpus job the same way: the API answers 202 with
the creation to follow, the command records the creation and makes it in its own process."""
import io
from decimal import Decimal

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
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
    """The job form as a builder fills it in, every field away from its default."""
    data = {
        "corpus": corpus.pk, "name": "big rewrites", "task_type": "rewrite", "selection_mode": "all", "seed": "0",
        "redundancy": str(REDUNDANCY), "reward": "0.75", "claim_timeout_minutes": "45", "instructions": "Keep the slot values.",
        "setting__rewrite__variants": "paraphrase, typos", "setting__rewrite__typo_max_edit_ratio": "0.25",
    }
    return {**data, **changes}


def api_body(corpus, **changes):
    """The API's request for the job form_data asks for."""
    body = {
        "corpus": corpus.pk, "name": "big rewrites", "task_type": "rewrite", "redundancy": REDUNDANCY, "reward": "0.75",
        "claim_timeout_minutes": 45, "instructions": "Keep the slot values.", "settings": {"variants": ["paraphrase", "typos"]},
    }
    return {**body, **changes}


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
    assert f'href="{reverse("organizer:job-new")}?from_creation={run.pk}" id="creation-change"' in page
    assert not Job.objects.filter(name="big rewrites").exists()


@pytest.mark.django_db
def test_change_the_request_fills_in_the_form_as_the_builder_filled_it(organizer, client, queued, make_annotator):
    corpus = make_corpus(dialogs=DIALOGS, user_turns=USER_TURNS)
    _, annotator = make_annotator("ann")
    client.force_login(organizer)
    asked = form_data(corpus, selection_mode="sample", sample_size="100", seed="7", annotators=[annotator.pk])
    client.post(reverse("organizer:job-new"), asked)
    run_queued(queued)
    run = JobCreationRun.objects.get()
    assert run.status == RunStatus.FAILED

    form = client.get(reverse("organizer:job-new"), {"from_creation": run.pk}).context["form"]
    shown = {name: form[name].value() for name in asked}
    assert shown == {
        **asked, "corpus": corpus.pk, "redundancy": REDUNDANCY, "reward": Decimal("0.75"), "claim_timeout_minutes": 45,
        "sample_size": 100, "seed": 7, "annotators": [annotator.pk], "setting__rewrite__typo_max_edit_ratio": 0.25,
    }
    # The dialogs chosen come back too.
    client.post(reverse("organizer:job-new"), form_data(corpus, name="chosen", selection_mode="dialogs", dialog_ids="d1 d2"))
    chosen = JobCreationRun.objects.get(name="chosen")
    form = client.get(reverse("organizer:job-new"), {"from_creation": chosen.pk}).context["form"]
    assert (form["selection_mode"].value(), form["dialog_ids"].value()) == ("dialogs", "d1 d2")


@pytest.mark.django_db
def test_the_dashboard_lists_creations_under_way_and_failed_until_made(organizer, client, queued, django_user_model):
    from quorum.roles import make_organizer

    corpus = make_corpus(dialogs=DIALOGS, user_turns=USER_TURNS)
    client.force_login(organizer)
    client.post(reverse("organizer:job-new"), form_data(corpus))
    client.post(reverse("organizer:job-new"), form_data(corpus, name="too big", selection_mode="sample", sample_size="100"))
    waiting, too_big = JobCreationRun.objects.get(name="big rewrites"), JobCreationRun.objects.get(name="too big")

    page = client.get(reverse("organizer:dashboard")).content.decode()
    assert page.index("Jobs being created") < page.index("<h2>Jobs</h2>")
    assert f'<a href="{reverse("organizer:job-creation", kwargs={"pk": waiting.pk})}">big rewrites</a>' in page
    follow = f"{reverse('organizer:job-creation-progress', kwargs={'pk': waiting.pk})}?fragment=dashboard"
    assert "Waiting for the background worker" in page and follow in page
    assert f'id="dashboard-creation-{waiting.pk}"' in client.get(follow).json()["html"]  # the row, as progress.js replaces it

    run_queued(queued)
    page = client.get(reverse("organizer:dashboard")).content.decode()
    assert f'id="dashboard-creation-{waiting.pk}"' not in page  # made: it is in the list of jobs now
    assert ">big rewrites</a></td>" in page
    row = page[page.index(f'id="dashboard-creation-{too_big.pk}"'):]
    row = row[:row.index("</tr>")]
    assert "Failed" in row and "a sample of 100 turns is more than the 6 user turns" in row
    assert reverse("organizer:job-creation-retry", kwargs={"pk": too_big.pk}) in row and "Try again" in row
    assert f"?from_creation={too_big.pk}" in row

    # Another organizer's dashboard lists it too, naming who asked (tests/annotation/test_job_creations_shared.py).
    other = django_user_model.objects.create_user("otto", password="organizer-pass-2")
    make_organizer(other)
    client.force_login(other)
    assert f'id="dashboard-creation-{too_big.pk}"' in client.get(reverse("organizer:dashboard")).content.decode()
    # Asked for again (changed), the failed one leaves the list.
    client.force_login(organizer)
    client.post(reverse("organizer:job-new"), form_data(corpus, name="too big", selection_mode="sample", sample_size="2"))
    assert f'id="dashboard-creation-{too_big.pk}"' not in client.get(reverse("organizer:dashboard")).content.decode()


@pytest.mark.django_db
def test_the_api_answers_202_with_the_creation_to_follow_to_the_job(organizer, organizer_api, queued):
    corpus = make_corpus(dialogs=DIALOGS, user_turns=USER_TURNS)
    response = organizer_api.post("/api/jobs/", api_body(corpus), format="json")

    run = JobCreationRun.objects.get()
    assert response.status_code == 202 and queued == [(TASK, (run.pk,))]
    assert response["Location"] == f"http://testserver/api/job-creations/{run.pk}/" == response.data["url"]
    assert (response.data["status"], response.data["finished"], response.data["job"], response.data["job_url"]) == ("pending", False, None, None)
    assert not Job.objects.filter(name="big rewrites").exists()

    run_queued(queued)
    state = organizer_api.get(response["Location"]).data
    job = Job.objects.get(name="big rewrites")
    assert (state["status"], state["finished"], state["job"], state["job_url"]) == ("succeeded", True, job.pk, f"http://testserver/api/jobs/{job.pk}/")
    made = organizer_api.get(state["job_url"]).data
    assert (made["item_count"], made["redundancy"], made["reward"], made["claim_timeout_minutes"]) == (DIALOGS * USER_TURNS, REDUNDANCY, "0.75", 45)
    assert made["instructions"] == "Keep the slot values." and job.created_by == organizer

    # A bad field: a 400 with the reason, nothing recorded or queued.
    refused = organizer_api.post("/api/jobs/", api_body(corpus, selection={"mode": "dialogs", "dialog_ids": ["NOPE"]}), format="json")
    assert refused.status_code == 400 and "NOPE" in str(refused.data["selection"])
    assert JobCreationRun.objects.count() == 1 and queued == []


@pytest.mark.django_db
def test_create_job_records_the_creation_and_makes_it_in_its_process(organizer, queued):
    corpus = make_corpus(dialogs=DIALOGS, user_turns=USER_TURNS)
    out = io.StringIO()
    call_command("create_job", corpus.name, "--name", "big rewrites", "--redundancy", str(REDUNDANCY), stdout=out)
    job = Job.objects.get(name="big rewrites")
    run = JobCreationRun.objects.get()
    rows = DIALOGS * USER_TURNS * (1 + REDUNDANCY)
    assert (run.status, run.job, run.done, run.total) == (RunStatus.SUCCEEDED, job, rows, rows) and queued == []
    printed = out.getvalue()
    assert f"Writing items and slots: {rows} of {rows} rows" in printed
    assert f"Created draft job {job.pk} ('big rewrites') with {DIALOGS * USER_TURNS} items." in printed

    with pytest.raises(CommandError, match="failed, nothing was created: a sample of 100 turns is more than the 6 user turns"):
        call_command("create_job", corpus.name, "--name", "too big", "--sample", "100", stdout=io.StringIO())
    assert JobCreationRun.objects.get(name="too big").status == RunStatus.FAILED and not Job.objects.filter(name="too big").exists()


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
