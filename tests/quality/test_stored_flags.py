"""Worker flags are stored by the flag run (the beat sweep, or "recompute now") and only read by the
pages and the API (issue 8): a page load never computes flags, shows when they were computed, and
costs the same number of queries however many responses the job has."""
import re
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from annotation.models import JobFlagReport, Response
from annotation.quality.flags import FlagReport, WorkerFlag, count_flags
from annotation.selectors import quality as quality_selectors
from annotation.selectors.flags import stored_flags
from annotation.services.quality import apply_flags, store_flag_report
from tests.annotation.test_api import client_for
from tests.factories import make_corpus, make_live_job

from .test_flag_schedule import rushed_job
from .test_flag_selectors import _do

pytestmark = pytest.mark.django_db


def _refuse_to_compute(monkeypatch):
    """Make any flag computation inside the request fail loudly."""
    def refuse(*args, **kwargs):
        raise AssertionError("flags were computed inside a request")

    monkeypatch.setattr(quality_selectors, "job_flags", refuse)
    monkeypatch.setattr(quality_selectors, "flag_tables", refuse)


def _job_page(client, job, query=""):
    return client.get(reverse("organizer:job", kwargs={"pk": job.pk}) + query)


def _queue(client, job, query=""):
    """The review queue's rows (every response of the job, first page)."""
    return client.get(reverse("organizer:job-review", kwargs={"pk": job.pk}) + query).context["queue"].page.object_list


def _codes(row):
    return [f.code for f in row.worker_flags]


# --- what the flag run stores --------------------------------------------------------------------


def test_the_flag_run_stores_the_whole_report_with_its_time():
    job, rusher = rushed_job()
    assert not JobFlagReport.objects.exists()
    apply_flags(job)
    row = JobFlagReport.objects.get(job=job)
    responses = Response.objects.filter(item__job=job)
    assert row.responses_seen == responses.count() == 12 and row.computed_at
    # Response flags: the same as recorded on each response.
    assert {int(pk): sorted(codes) for pk, codes in row.response_flags.items()} == {
        pk: checks["flags"] for pk, checks in responses.values_list("pk", "checks") if "flags" in checks
    }
    # Worker flags with their evidence; measures for every worker, flagged or not.
    evidence = {f["code"]: f for f in row.worker_flags[str(rusher.pk)]}
    assert {"fast", "pasted"} <= set(evidence)
    assert evidence["pasted"]["count"] == 6 and evidence["pasted"]["value"] == 1.0 and "mostly pasted" in evidence["pasted"]["message"]
    assert len(row.worker_measures) == 2 and row.worker_measures[str(rusher.pk)]["fast_share"] == 1.0


def test_a_second_run_replaces_the_report_and_an_older_run_never_overwrites_a_newer_one():
    job, rusher = rushed_job()
    apply_flags(job)
    first = JobFlagReport.objects.get(job=job)
    apply_flags(job)
    second = JobFlagReport.objects.get(job=job)
    assert JobFlagReport.objects.filter(job=job).count() == 1 and second.computed_at >= first.computed_at
    # A run that started before the stored one (the sweep overlapping "recompute now") is dropped.
    store_flag_report(job, FlagReport(responses_seen=1), second.computed_at - timedelta(minutes=5))
    kept = JobFlagReport.objects.get(job=job)
    assert kept.computed_at == second.computed_at and kept.responses_seen == 12


def test_the_report_survives_its_trip_through_json():
    report = FlagReport(
        workers={7: [WorkerFlag("fast", "3 of 4 responses far faster", 0.75, 3)], 8: []},
        responses={11: ["fast"], 12: ["fast", "pasted"]},
        measures={7: {"fast_share": 0.75, "agreement": None, "ratings": 4}, 8: {"fast_share": 0.0}},
        responses_seen=9,
    )
    back = FlagReport.from_json(report.as_json())
    assert back.workers == {7: report.workers[7]}  # workers without flags are not stored
    assert (back.responses, back.measures, back.responses_seen) == (report.responses, report.measures, 9)


# --- pages and API read only what is stored -------------------------------------------------------


def test_without_a_flag_run_the_pages_say_so_and_compute_nothing(organizer, client, monkeypatch):
    job, rusher = rushed_job()
    _refuse_to_compute(monkeypatch)
    client.force_login(organizer)
    response = _job_page(client, job, "?reviews=all")
    assert response.status_code == 200
    page = response.content.decode()
    assert "Worker flags have not been computed for this job yet." in page and 'id="flagged-workers"' not in page
    assert all(not row.response_flags and not row.worker_flags for row in _queue(client, job))
    worker_page = client.get(reverse("organizer:worker", kwargs={"pk": rusher.pk})).content.decode()
    assert "not computed yet" in worker_page and "mostly pasted" not in worker_page
    body = client_for(organizer).get(f"/api/jobs/{job.pk}/reviews/").data
    assert body["flags"] == {"computed_at": None, "responses_seen": 0, "workers": [], "run": None}  # no run recorded either
    assert not JobFlagReport.objects.exists()
    assert not any("flags" in checks for checks in Response.objects.values_list("checks", flat=True))


def test_after_the_sweep_the_pages_and_api_show_the_stored_flags_and_when(organizer, client, monkeypatch):
    job, rusher = rushed_job()
    apply_flags(job)
    stored = JobFlagReport.objects.get(job=job)
    _refuse_to_compute(monkeypatch)
    client.force_login(organizer)
    response = _job_page(client, job)
    page = response.content.decode()
    assert f'datetime="{stored.computed_at.isoformat()}"' in page and "over 12 responses" in page
    assert f'id="flagged-worker-{rusher.pk}"' in page and "6 of 6 responses mostly pasted rather than typed (100%)" in page
    rusher_rows = [row for row in _queue(client, job) if row.worker_id == rusher.pk]
    assert rusher_rows and all({"fast", "pasted"} <= set(row.response_flags) for row in rusher_rows)

    worker_page = client.get(reverse("organizer:worker", kwargs={"pk": rusher.pk})).content.decode()
    assert "6 of 6 responses mostly pasted rather than typed (100%)" in worker_page and "computed at" in worker_page

    body = client_for(organizer).get(f"/api/jobs/{job.pk}/reviews/").data
    assert body["flags"]["computed_at"] == stored.computed_at.isoformat().replace("+00:00", "Z")
    assert body["flags"]["responses_seen"] == 12
    (flagged,) = [w for w in body["flags"]["workers"] if w["worker_id"] == rusher.pk]
    assert {"fast", "pasted"} <= {f["code"] for f in flagged["flags"]} and flagged["measures"]["fast_share"] == 1.0


def test_new_responses_show_their_flags_only_after_the_next_run(organizer, client, make_annotator):
    job = make_live_job(make_corpus(name="open", dialogs=2, user_turns=2), redundancy=3, name="open")
    steady = make_annotator("steady")[1]
    for _ in range(4):
        _do(job, steady, 90)
    apply_flags(job)
    late = make_annotator("late-paster")[1]
    _do(job, late, 2, telemetry={"paraphrase": {"pasted_chars": 60, "typed_chars": 0}})
    client.force_login(organizer)
    rows = [row for row in _queue(client, job) if row.worker_id == late.pk]
    assert rows and rows[0].response_flags == [] and rows[0].worker_flags == []
    apply_flags(job)
    rows = [row for row in _queue(client, job) if row.worker_id == late.pk]
    assert "pasted" in rows[0].response_flags and "pasted" in _codes(rows[0])


def test_recompute_now_queues_the_flag_run_and_does_not_compute_in_the_request(organizer, client, django_capture_on_commit_callbacks):
    job, _ = rushed_job()
    client.force_login(organizer)
    with django_capture_on_commit_callbacks(execute=False) as queued:
        response = client.post(reverse("organizer:job-flags", kwargs={"pk": job.pk}))
    assert response.status_code == 302 and len(queued) == 1
    assert not JobFlagReport.objects.exists()  # queued, not run inside the request
    queued[0]()  # the worker runs it
    assert stored_flags(job).computed
    assert "Worker flags computed at" in _job_page(client, job).content.decode()


# --- query counts ----------------------------------------------------------------------------------


def _queries(fn) -> int:
    with CaptureQueriesContext(connection) as ctx:
        fn()
    return len(ctx.captured_queries)


def test_a_job_page_load_costs_the_same_queries_for_few_and_many_responses(organizer, client):
    small, _ = rushed_job("small", dialogs=1)  # 4 responses
    large, _ = rushed_job("large", dialogs=6)  # 24 responses
    apply_flags(small)
    apply_flags(large)
    client.force_login(organizer)
    api = client_for(organizer)
    for job in (small, large):  # warm up: sessions, content types, task-type registry
        _job_page(client, job)
        _queue(client, job)
        api.get(f"/api/jobs/{job.pk}/reviews/?all=true")
    page = {job.name: _queries(lambda job=job: _job_page(client, job)) for job in (small, large)}
    assert page["small"] == page["large"], page
    queue = {job.name: _queries(lambda job=job: _queue(client, job)) for job in (small, large)}
    assert queue["small"] == queue["large"], queue
    reviews = {job.name: _queries(lambda job=job: api.get(f"/api/jobs/{job.pk}/reviews/?all=true")) for job in (small, large)}
    assert reviews["small"] == reviews["large"], reviews


def test_the_job_page_shows_agreement_as_the_flag_run_stored_it(organizer, client, make_annotator, monkeypatch):
    """Agreement reads every counted response, so the page shows what the flag run stored (issue 8's
    follow-up: 0.36 s per view at 10,000 responses), and says when; the API still computes it now."""
    from annotation.services.claims import claim_next_slot, submit_response

    job = make_live_job(make_corpus(name="agree", dialogs=3, user_turns=1), task_type="hard_score", redundancy=2)
    plan = {0: 5, 1: 3, 2: 1}
    for n in range(2):
        worker = make_annotator(f"agree{n}")[1]
        while (slot := claim_next_slot(job=job, worker=worker)) is not None:
            score = plan[slot.item.position]
            submit_response(slot_id=slot.pk, worker=worker, answers={"criterion_1": score, "criterion_2": score})
    client.force_login(organizer)
    monkeypatch.setattr(quality_selectors, "job_agreement", lambda job: pytest.fail("agreement computed by the page"))
    before = _job_page(client, job).content.decode()
    assert 'id="agreement"' not in before and "have not been computed" in before
    monkeypatch.undo()

    apply_flags(job)
    live = {a.question: a.alpha for a in quality_selectors.job_agreement(job)}
    monkeypatch.setattr(quality_selectors, "job_agreement", lambda job: pytest.fail("agreement computed by the page"))
    page = _job_page(client, job)
    assert {a["question"]: a["alpha"] for a in page.context["agreement"]} == live == {"criterion_1": 1.0, "criterion_2": 1.0}
    body = page.content.decode()
    assert 'id="agreement"' in body and 'id="agreement-computed"' in body
    assert 'id="agreement-stale"' not in body  # computed after the last response
    stored = Response.objects.filter(item__job=job).count()
    JobFlagReport.objects.filter(job=job).update(computed_at=timezone.now() - timedelta(days=1))  # as if computed before them
    stale = _job_page(client, job).content.decode()
    assert f"Out of date: {stored} responses stored since then are not in these figures." in stale
    JobFlagReport.objects.filter(job=job).update(computed_at=timezone.now())
    # Three items are too few for a 95% interval ("[1.000, 1.000]" before): the page says so in words.
    assert '1.000 <span class="muted">(no interval: too few units, 3 of the 30 needed)</span>' in body
    # A report stored before alpha carried an interval is shown without one, not with an empty one.
    JobFlagReport.objects.filter(job=job).update(agreement=[{k: v for k, v in a.items() if not k.startswith("ci_")} for a in page.context["agreement"]])
    older = _job_page(client, job).content.decode()
    assert "<td>criterion_1</td><td>1.000</td>" in older


def _flag_counts_line(client, job) -> str | None:
    page = _job_page(client, job).content.decode()
    found = re.search(r'<span id="flag-counts">(.*?)</span>', page, re.S)
    return found.group(1) if found else None


def test_a_report_stored_before_per_flag_counts_shows_them_counted_from_its_flags(organizer, client, monkeypatch):
    """A report stored before `response_flag_counts` existed showed no per-flag counts on the job
    page until the next run: they are counted from its stored flags, as the run would have stored them."""
    job, _ = rushed_job()
    apply_flags(job)
    client.force_login(organizer)
    counted = _flag_counts_line(client, job)
    assert counted and "far faster" in counted and "mostly pasted" in counted
    JobFlagReport.objects.filter(job=job).update(response_flag_counts={})  # as the migration left an older report
    _refuse_to_compute(monkeypatch)
    assert _flag_counts_line(client, job) == counted
    assert stored_flags(job, with_responses=False).flag_counts == count_flags(JobFlagReport.objects.get(job=job).response_flags)
