"""A pairwise job's stored ranking report, computed in the background when its counted votes change.

The ranking page, its downloads and the API read the stored `PairwiseReport`; nothing is fitted
on a request (the fragility search alone took seconds at 20,000 votes). When a vote starts or stops
counting, or an automatic judge's verdicts are imported, `request_report` records a pending report and queues `evaluation.tasks.compute_pairwise_report`
to start QUORUM_PAIRWISE_REPORT_DELAY_SECONDS later. Votes counted meanwhile find that pending row
(one per job, a database constraint) and join it: a burst of votes costs one computation, which
reads the votes when it starts. The task claims the row, publishes done/total at each step (the
page's progress line), stores the report and removes the job's older ones. A report lost on the way
is queued again, or failed with the reason, by the beat sweep (`settle_lost_reports`).
"""
from __future__ import annotations

import logging
import time
from datetime import timedelta
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import connection
from django.db.models.constants import OnConflict
from django.db.models.sql import InsertQuery
from django.utils import timezone

from annotation.models import Job, RunStatus
from evaluation.campaigns import controls
from evaluation.campaigns.selectors import pairwise_records
from evaluation.judges import selectors as judges_selectors
from evaluation.models import PairwiseReport
from evaluation.stats import versions
from quorum.background import after_commit, queue_now
from quorum.lazy_modules import lazy
from quorum.strict_json import json_safe

if TYPE_CHECKING:
    from evaluation.stats import bradley_terry
else:
    bradley_terry = lazy("evaluation.stats.bradley_terry")

logger = logging.getLogger(__name__)

TASK = "evaluation.tasks.compute_pairwise_report"
#: The steps a computation reports as done/total: the votes read, the ranking's bootstrap, the
#: fragility search, the style fit and position bias.
STEPS = 4


def build_report(job, n_resamples: int | None = None, seed: int | None = None, step=lambda: None) -> dict:
    """The report of the job's counted votes as stored (JSON): {"rows" (`bradley_terry.export_rows`),
    "controls" (`controls.pairwise_controls`), "judge_sets" (the automatic judges' rank sets,
    `judges.selectors.pairwise_judge_rank_sets`), "votes", "bootstrap", "seed"}; without a vote,
    no rows and no controls.
    ValueError when the votes cannot be fitted (the comparison graph falls apart).
    `n_resamples` and `seed` default to `bradley_terry`'s (read when called: the web process loads
    the statistics only when a page needs them)."""
    n_resamples = bradley_terry.DEFAULT_BOOTSTRAP if n_resamples is None else n_resamples
    seed = bradley_terry.DEFAULT_SEED if seed is None else seed
    records = pairwise_records(job)
    step()
    if not records:  # nothing to rank; a judge's rank sets say why they are not computed either
        judge_sets = judges_selectors.pairwise_judge_rank_sets(job, records=records)
        return json_safe({"rows": [], "controls": None, "judge_sets": judge_sets, "votes": 0, "bootstrap": n_resamples, "seed": seed})
    ranking = bradley_terry.bootstrap([(r["a"], r["b"], r["outcome"], r["instance"]) for r in records], n_resamples=n_resamples, seed=seed)
    step()
    checks = controls.pairwise_controls(records, ranking, step=step)
    rows = bradley_terry.export_rows(ranking)
    judge_sets = judges_selectors.pairwise_judge_rank_sets(job, records=records)
    return json_safe({"rows": rows, "controls": checks, "judge_sets": judge_sets, "votes": len(records), "bootstrap": n_resamples, "seed": seed})


def request_report(job, *, delay: float | None = None, created_by=None) -> PairwiseReport:
    """The job's pending report, recorded now if none waits, its task queued after commit to start
    `delay` seconds later (QUORUM_PAIRWISE_REPORT_DELAY_SECONDS by default). A pending report that
    exists already is returned: it has not read the votes yet, so it will count this change (with
    `delay` 0, the organizer's "compute now", it is queued again to start at once; whichever delivery
    comes first computes it, the other finds it taken)."""
    delay = settings.QUORUM_PAIRWISE_REPORT_DELAY_SECONDS if delay is None else delay
    report, waited = _waiting_or_new(job, created_by)
    if waited and delay:
        return report
    after_commit(TASK, report.pk, countdown=delay or None)
    return report


def _waiting_or_new(job, created_by) -> tuple[PairwiseReport, bool]:
    """(the job's pending report, True), else (a new one, False)."""
    while True:
        report = PairwiseReport(job=job, created_by=created_by)
        if _insert_unless_one_waits(report):
            return report, False
        # pairwise_report_one_pending: a computation waits already
        waiting = PairwiseReport.objects.filter(job=job, status=RunStatus.PENDING).first()
        if waiting is not None:  # else it started meanwhile: this change needs one of its own
            return waiting, True


def _insert_unless_one_waits(report: PairwiseReport) -> bool:
    """Insert the pending `report` unless its job has one: INSERT ... ON CONFLICT DO NOTHING
    RETURNING id, one statement, where an insert refused by the constraint needs a savepoint to roll
    back to (it runs inside the vote's transaction). True with `report` saved."""
    fields = [f for f in PairwiseReport._meta.concrete_fields if not f.primary_key]
    query = InsertQuery(PairwiseReport, on_conflict=OnConflict.IGNORE)
    query.insert_values(fields, [report])
    compiler = query.get_compiler(connection=connection)
    compiler.returning_fields = [PairwiseReport._meta.pk]
    (sql, params), = compiler.as_sql()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    if row is None:
        return False
    report.pk = row[0]
    report._state.adding, report._state.db = False, connection.alias
    return True


def compute_report(report_id: int) -> PairwiseReport | None:
    """Compute a pending report (the task's work). None when it is not pending: taken by another
    delivery of the task, or gone with its job. Refusals of the fit are stored as the run's error."""
    now = timezone.now()
    if not PairwiseReport.objects.filter(pk=report_id, status=RunStatus.PENDING).update(status=RunStatus.RUNNING, started_at=now, done=0, total=STEPS):
        return None
    report = PairwiseReport.objects.select_related("job").get(pk=report_id)
    started = time.perf_counter()
    done = 0

    def step():
        nonlocal done
        done += 1
        PairwiseReport.objects.filter(pk=report_id).update(done=done)

    try:
        body = build_report(report.job, step=step)
    except ValueError as exc:
        report.status, report.error = RunStatus.FAILED, f"The votes cannot be ranked yet: {exc}. The report is computed again when votes change."
    else:
        report.status, report.report, report.votes = RunStatus.SUCCEEDED, body, body["votes"]
        report.done, report.method = STEPS, versions.PAIRWISE.current
    report.finished_at, report.seconds = timezone.now(), time.perf_counter() - started
    report.save(update_fields=["status", "report", "votes", "done", "error", "finished_at", "seconds", "method"])
    # The page shows the latest succeeded report and a failure newer than it: older ones are of
    # votes that have changed since (a failure keeps the last succeeded report, still the best there is).
    older = PairwiseReport.objects.filter(job_id=report.job_id, finished_at__lt=report.finished_at)
    statuses = [RunStatus.SUCCEEDED, RunStatus.FAILED] if report.status == RunStatus.SUCCEEDED else [RunStatus.FAILED]
    older.filter(status__in=statuses).delete()
    return report


def recompute_if_older(job, stored) -> PairwiseReport | None:
    """When the report the job shows (`selectors.stored_pairwise_report`) was computed by an older
    method and no computation is under way, ask for one now (in the background, followed as any
    other); the report under way otherwise, None when the shown report is current. A failed
    recomputation is not asked again here: the page keeps the older report marked and offers the button."""
    if not stored.older_method:
        return None
    if stored.under_way is not None:
        return stored.under_way
    if stored.failed is not None:
        return None
    return request_report(job, delay=0)


def older_method_jobs() -> list[int]:
    """Jobs whose latest succeeded report was computed by an older method, with nothing under way
    and no failure since (a ranking that cannot be computed now is not asked for at every sweep:
    its page keeps the older one marked and offers the button)."""
    latest: dict[int, tuple[int, bool]] = {}  # job -> (method of its latest succeeded report, failed since)
    busy: set[int] = set()
    rows = PairwiseReport.objects.order_by("job_id", "created_at", "pk").values_list("job_id", "status", "method")
    for job_id, status, method in rows:
        if status == RunStatus.SUCCEEDED:
            latest[job_id] = (method, False)
        elif status == RunStatus.FAILED and job_id in latest:
            latest[job_id] = (latest[job_id][0], True)
        elif status in (RunStatus.PENDING, RunStatus.RUNNING):
            busy.add(job_id)
    return [job_id for job_id, (method, failed) in latest.items() if versions.standing(versions.PAIRWISE, method).older and not failed and job_id not in busy]


def settle_lost_reports(now=None) -> dict:
    """The beat's safety net (`evaluation.tasks.sweep_pairwise_reports`): a report still pending
    QUORUM_RUN_DEADLINE_MINUTES after it was due (its task was lost, or the broker was down) is
    queued again; one left running that long (its worker was lost) fails with the reason, so the
    next vote, or the page's button, asks for a new one. A job whose shown report an older method
    computed gets a new one ("older_method": how many, when any)."""
    now = now or timezone.now()
    deadline = timedelta(minutes=settings.QUORUM_RUN_DEADLINE_MINUTES)
    due = now - deadline - timedelta(seconds=settings.QUORUM_PAIRWISE_REPORT_DELAY_SECONDS)
    pending = PairwiseReport.objects.filter(status=RunStatus.PENDING, created_at__lt=due).values_list("pk", flat=True)
    requeued = sum(1 for report_id in list(pending) if queue_now(TASK, report_id))
    failed = PairwiseReport.objects.filter(status=RunStatus.RUNNING, started_at__lt=now - deadline).update(
        status=RunStatus.FAILED, finished_at=now,
        error=f"Stopped: no worker finished it within {settings.QUORUM_RUN_DEADLINE_MINUTES} minutes of its start "
        "(the worker computing it was lost). The shown report is the last one stored; compute it again.",
    )
    # Reports stored by an older method are computed again (each a pending report of its own, as a vote asks).
    recomputed = 0
    for job_id in older_method_jobs():
        report, waited = _waiting_or_new(Job.objects.get(pk=job_id), None)
        if not waited:
            queue_now(TASK, report.pk)
            recomputed += 1
    return {"requeued": requeued, "failed": failed, **({"older_method": recomputed} if recomputed else {})}
