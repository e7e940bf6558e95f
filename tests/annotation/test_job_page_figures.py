"""The job page's figures at scale (issue 26, item 3): each response's work time is stored when it is
written, and the page averages that column; old rows get it from the migration; the page counts
flagged responses without reading their list; the review queue's flag filter gives the responses a
reviewer expects."""
import importlib
import statistics
from datetime import timedelta
from types import SimpleNamespace

import pytest
from django.apps import apps
from django.db import connection
from django.urls import reverse
from django.utils import timezone

from annotation.models import JobFlagReport, Response, Slot
from annotation.selectors.jobs import job_progress
from annotation.services.claims import claim_next_slot, submit_response
from annotation.services.quality import apply_flags
from tests.factories import good_answers, make_corpus, make_live_job

pytestmark = pytest.mark.django_db


def _submit(job, worker, *, claimed_ago: timedelta):
    """A submission whose claim is backdated: the worker took `claimed_ago` over it."""
    slot = claim_next_slot(job=job, worker=worker)
    Slot.objects.filter(pk=slot.pk).update(claimed_at=timezone.now() - claimed_ago)
    return submit_response(slot_id=slot.id, worker=worker, answers=good_answers(slot.item))


def test_a_submission_stores_its_work_time_and_the_page_averages_it(make_annotator):
    job = make_live_job(make_corpus(dialogs=3, user_turns=1))
    worker = make_annotator("ann")[1]
    for minutes in (1, 2, 6):
        _submit(job, worker, claimed_ago=timedelta(minutes=minutes))
    rows = list(Response.objects.filter(item__job=job).values_list("claimed_at", "submitted_at", "work_seconds"))
    for claimed, submitted, seconds in rows:
        assert seconds == pytest.approx((submitted - claimed).total_seconds(), abs=1e-6)
    assert sorted(round(s) for _c, _s, s in rows) == [60, 120, 360]  # the backdated claims, to the second
    assert job_progress(job).mean_seconds_per_response == pytest.approx(statistics.mean(s for _c, _s, s in rows))


def test_responses_made_in_bulk_store_their_work_time_too(make_annotator):
    job = make_live_job(make_corpus(dialogs=2, user_turns=1))
    worker = make_annotator("ann")[1]
    claimed = timezone.now() - timedelta(seconds=90)
    Response.objects.bulk_create([
        Response(slot=slot, item_id=slot.item_id, worker=worker, claimed_at=claimed, status=Response.Status.ACCEPTED, answers={})
        for slot in Slot.objects.filter(job=job)
    ])
    seconds = list(Response.objects.filter(item__job=job).values_list("work_seconds", flat=True))
    assert len(seconds) == 2 and all(89 < s < 120 for s in seconds)


def test_the_migration_fills_the_work_time_of_responses_stored_before_it(make_annotator):
    job = make_live_job(make_corpus(dialogs=3, user_turns=1))
    worker = make_annotator("ann")[1]
    for minutes in (3, 5, 8):
        _submit(job, worker, claimed_ago=timedelta(minutes=minutes, microseconds=123457))
    Response.objects.update(work_seconds=None)  # as every row was before the column
    migration = importlib.import_module("annotation.migrations.0018_job_page_stored_figures")
    # The function reads only the editor's connection (a real schema editor cannot open inside a
    # test's transaction on SQLite).
    migration.fill_work_seconds(apps, SimpleNamespace(connection=connection))
    for claimed, submitted, seconds in Response.objects.values_list("claimed_at", "submitted_at", "work_seconds"):
        assert seconds == pytest.approx((submitted - claimed).total_seconds(), abs=1e-6)


def test_the_job_page_counts_flagged_responses_as_the_stored_report_holds_them(make_annotator, organizer, client):
    job = make_live_job(make_corpus(dialogs=6, user_turns=1))
    speedy, careful = make_annotator("speedy")[1], make_annotator("careful")[1]
    for _ in range(3):
        _submit(job, speedy, claimed_ago=timedelta(seconds=1))  # far below the job's median time: flagged as fast
        _submit(job, careful, claimed_ago=timedelta(minutes=3))
    apply_flags(job)
    stored = JobFlagReport.objects.get(job=job)
    assert stored.responses_flagged == len(stored.response_flags) > 0
    client.force_login(organizer)
    page = client.get(reverse("organizer:job", kwargs={"pk": job.pk}))
    assert page.context["flagged_responses"] == len(stored.response_flags)
    n = len(stored.response_flags)
    text = page.content.decode()
    assert f"{n} response{'s' if n != 1 else ''} with a flag of {'their' if n != 1 else 'its'} own" in text
    # The sentence counts the flagged workers listed below it too: "0 flagged" above a list of two misled.
    workers = len(stored.worker_flags)
    assert f'<span id="flagged-worker-count">{workers} worker{"s" if workers != 1 else ""} flagged</span>' in text
    assert text.count('id="flagged-worker-') - 1 == workers  # the rows of the table below, besides the count


def test_the_flag_filter_shows_flagged_responses_and_those_of_flagged_workers_in_order(make_annotator, organizer, client):
    job = make_live_job(make_corpus(dialogs=8, user_turns=1))
    fast, careful = make_annotator("fast")[1], make_annotator("careful")[1]
    for _ in range(4):
        _submit(job, fast, claimed_ago=timedelta(seconds=1))
        _submit(job, careful, claimed_ago=timedelta(minutes=3))
    apply_flags(job)
    stored = JobFlagReport.objects.get(job=job)
    flagged_workers = {int(w) for w in stored.worker_flags}
    expected = sorted(
        pk for pk, worker in Response.objects.filter(item__job=job).values_list("pk", "worker_id")
        if str(pk) in stored.response_flags or worker in flagged_workers
    )
    assert expected and len(expected) < Response.objects.filter(item__job=job).count()  # the filter narrows
    client.force_login(organizer)
    queue = client.get(reverse("organizer:job-review", kwargs={"pk": job.pk}) + "?flag=any").context["queue"]
    assert [row.response_id for row in queue.page.object_list] == expected
    assert queue.page.paginator.count == len(expected)
    by_worker = client.get(reverse("organizer:job-review", kwargs={"pk": job.pk}) + f"?flag=any&worker={careful.pk}").context["queue"]
    assert all(row.worker_id == careful.pk for row in by_worker.page.object_list)
