"""Fit and store a job's reliability model (issue 22), and add what it finds to the job's flags.

Called by the flag run (`services.quality.apply_flags`: the beat sweep or "recompute now", in
Celery), never by a page: the fit reads every categorical answer of the job.
The maths is `quality/reliability.py`; the reads are `selectors/reliability.py`.

Flags added to the job's `FlagReport` (evidence for a reviewer, never a rejection):
- `unreliable_voter` (a vote job) / `unreliable_rater` (any other job with categorical answers):
  at least `reliability.MIN_ANSWERS` answers and a spammer score confidently low;
- `voted_down`: a writer whose responses are voted down well above the job's rate.

On categorical judgements the model's evidence supersedes the straight-lining pattern: a worker
whose answers the model finds follow the item (`reliability.follows_the_item`) is not flagged for
giving one answer to items that mostly call for it (a careful voter on good rewrites says yes).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from quorum.lazy_modules import lazy

from ..models import Job, JobReliability
from ..quality import reliability
from ..quality.flags import FlagReport, WorkerFlag
from ..selectors import reliability as reads
from .stored_reports import store_latest

if TYPE_CHECKING:
    import numpy as np
else:
    np = lazy("numpy")


def fit_job(job: Job, report: FlagReport, computed_at) -> JobReliability | None:
    """Fit the job's model, store it, and add its flags and measures to `report` (before it is stored)."""
    data = reads.judgements(job)
    _add_voted_down(job, report)
    if data.table.empty:
        return None
    fitted = reliability.fit(data.table, data.gold, seed=job.pk)
    what = "parts" if job.reviews_id else "answers"
    code = "unreliable_voter" if job.reviews_id else "unreliable_rater"
    for worker, r in fitted.workers.items():
        m = report.measures.setdefault(worker, {})
        m["reliability_accuracy"] = r.accuracy
        m["reliability_spammer_score"] = r.spammer_score
        m["reliability_answers"] = r.answers
        flag = reliability.unreliable_flag(r, fitted.labels, what)
        if flag is not None:
            report.workers.setdefault(worker, []).append(WorkerFlag(code, flag.message, flag.value, flag.count))
        elif reliability.follows_the_item(r):
            _explain_runs(report, worker, r)
    writers = _writers(fitted, data.writer_of)
    return store(job, fitted, writers, computed_at, len(data.table))


def _explain_runs(report: FlagReport, worker, r: reliability.WorkerReliability) -> None:
    """A run of one answer is what the items called for when the model finds the worker's answers
    follow the item (most voted parts are usable, so a careful voter says yes to most): the
    straight-lining flag is replaced by that evidence in the worker's measures."""
    flags = report.workers.get(worker, [])
    kept = [f for f in flags if f.code != "straight_lining"]
    if len(kept) != len(flags):
        report.workers[worker] = kept
        # Measures are numbers: 1 says the flag was lifted; reliability_spammer_score says why.
        report.measures.setdefault(worker, {})["straight_lining_explained"] = 1


def _add_voted_down(job: Job, report: FlagReport) -> None:
    per_writer, job_down, job_voted = reads.voted_down_counts(job)
    for writer, (down, voted) in per_writer.items():
        flag = reliability.voted_down_flag(down, voted, job_down, job_voted)
        report.measures.setdefault(writer, {})["voted_down_share"] = down / voted if voted else None
        if flag is not None:
            report.workers.setdefault(writer, []).append(WorkerFlag(flag.code, flag.message, flag.value, flag.count))


def _writers(fitted: reliability.ReliabilityFit, writer_of: dict) -> dict:
    """Per author of voted responses: the share of their voted parts judged usable (the sum of the
    posterior probabilities of the vote type's "for" answer), with its interval (`share_estimate`)."""
    if not writer_of or not fitted.labels:
        return {}
    usable_label = _usable_label(fitted.labels)
    if usable_label is None:
        return {}
    sums: dict = {}
    for task, writer in writer_of.items():
        row = fitted.tasks.get(task)
        if row is None:
            continue
        p = row["confidence"] if row["outcome"] == usable_label else 1 - row["confidence"]
        total, n = sums.get(writer, (0.0, 0))
        sums[writer] = (total + p, n + 1)
    out = {}
    for writer, (total, n) in sums.items():
        # One model for the figure and its interval: the Jeffreys posterior of the share (the
        # figure was total / n beside a +1-prior Beta interval: 4 of 4 read "100% [48, 99]").
        usable, low, high = (float(x[0]) for x in reliability.share_estimate(total, n))
        out[str(writer)] = {"parts": n, "usable": round(usable, 4), "usable_interval": [round(low, 4), round(high, 4)]}
    return out


def _usable_label(labels: list) -> str | None:
    from ..task_types.vote import FOR  # the vote type says what "usable" is

    return FOR if FOR in labels else None


def store(job: Job, fitted: reliability.ReliabilityFit, writers: dict, computed_at, judgements: int) -> JobReliability:
    """Replace the job's stored fit, unless a run that started later stored its own."""
    data = fitted.as_json()
    values = {
        "computed_at": computed_at, "judgements": judgements, "labels": data["labels"], "priors": data["priors"],
        "tasks": _plain(data["tasks"]), "workers": data["workers"], "writers": writers,
    }
    return store_latest(JobReliability, job, values)


def _plain(tasks: dict) -> dict:
    """Task rows as JSON takes them (the majority may be a numpy value)."""
    return {t: {k: (v.item() if isinstance(v, np.generic) else v) for k, v in row.items()} for t, row in tasks.items()}
