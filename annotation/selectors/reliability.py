"""Reads for the reliability model (issue 22): the categorical judgements a job's model is fitted
on (read by the flag sweep only) and the stored fits pages, exports and voting read.

A judged task is one question of one item: for a vote job, one part of the response under vote
("<response id>:<part>"), so the model's outcome belongs to the voted response; otherwise
"<item id>:<question>". Only questions answered from choices are judgements (free text is not).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from quorum.lazy_modules import lazy

from .. import task_types
from ..models import Job, JobReliability, Response, ReviewRound
from ..quality.reliability import JUDGEMENT_COLUMNS

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy("pandas")


@dataclass
class Judgements:
    table: pd.DataFrame  # task, worker, label
    gold: dict = field(default_factory=dict)  # task -> known label
    writer_of: dict = field(default_factory=dict)  # task -> author of the voted response (vote jobs)


def choice_questions(job: Job) -> set[str]:
    kind = task_types.get(job.task_type)
    return {f["name"] for f in kind.answer_fields(job.settings) if f.get("choices")} | {"vote"}


def judgements(job: Job) -> Judgements:
    """Every confirmed categorical answer of the job, gold items' included: their known answers are
    the fit's known truth, which anchors every worker who answered them (two queries)."""
    kind = task_types.get(job.task_type)
    questions = choice_questions(job)
    reviews = job.reviews_id is not None
    rows = Response.objects.confirmed().filter(item__job=job).values_list(
        "worker_id", "item_id", "answers", "item__subject_response_id", "item__subject_response__worker_id"
    )
    table, writer_of = [], {}
    for worker, item, answers, subject, writer in rows.iterator(chunk_size=5000):
        prefix = subject if reviews and subject is not None else item
        for question, value in kind.agreement_values(answers, job.settings).items():
            if question not in questions or value in (None, ""):
                continue
            task = f"{prefix}:{question}"
            table.append((task, worker, str(value)))
            if reviews and writer is not None:
                writer_of[task] = writer
    gold = {}
    for item, answers in job.items.filter(gold__isnull=False).values_list("pk", "gold"):
        for question, value in kind.agreement_values(answers or {}, job.settings).items():
            if question in questions and value not in (None, ""):
                gold[f"{item}:{question}"] = str(value)
    return Judgements(pd.DataFrame(table, columns=JUDGEMENT_COLUMNS), gold, writer_of)


def voted_down_counts(job: Job) -> tuple[dict, int, int]:
    """{writer: (voted down, decided)} over the job's decided vote rounds, and the job's totals (one query)."""
    from django.db.models import Count, Q

    down = (ReviewRound.State.RECOLLECTED, ReviewRound.State.EXHAUSTED)
    decided = (*down, ReviewRound.State.PASSED)
    rows = (
        ReviewRound.objects.filter(item__job=job, state__in=decided)
        .values("response__worker_id")
        .annotate(n=Count("pk"), down=Count("pk", filter=Q(state__in=down)))
    )
    per_writer = {r["response__worker_id"]: (r["down"], r["n"]) for r in rows}
    return per_writer, sum(d for d, _ in per_writer.values()), sum(n for _, n in per_writer.values())


@dataclass(frozen=True)
class StoredReliability:
    job_id: int
    computed_at: Any
    labels: list
    priors: list
    tasks: dict
    workers: dict
    writers: dict
    judgements: int

    def worker(self, worker_id: int) -> dict | None:
        return self.workers.get(str(worker_id))


def _from_row(row: JobReliability) -> StoredReliability:
    return StoredReliability(row.job_id, row.computed_at, row.labels, row.priors, row.tasks, row.workers, row.writers, row.judgements)


def stored_reliability(job: Job | int, *, with_tasks: bool = True) -> StoredReliability | None:
    """The job's stored fit (one query), None while no run has fitted one."""
    qs = JobReliability.objects.filter(job_id=getattr(job, "pk", job))
    if not with_tasks:
        qs = qs.defer("tasks")
    row = qs.first()
    if row is None:
        return None
    if not with_tasks:
        row.tasks = {}  # deferred: reading it would cost a query
    return _from_row(row)


def stored_reliabilities(job_ids) -> dict[int, StoredReliability]:
    """{job id: stored fit without its tasks} for the jobs that have one (one query): the worker page."""
    rows = JobReliability.objects.filter(job_id__in=list(job_ids)).defer("tasks")
    out = {}
    for row in rows:
        row.tasks = {}
        out[row.job_id] = _from_row(row)
    return out


def vote_job_reliability(job: Job) -> StoredReliability | None:
    """The stored fit of the job that votes on `job`'s responses, if any (one query)."""
    row = JobReliability.objects.filter(job__reviews=job).order_by("job_id").first()
    return None if row is None else _from_row(row)


@dataclass(frozen=True)
class ReliabilityRow:
    worker: Any  # a Worker
    role: str  # "voter", "rater" or "writer"
    answers: int
    accuracy: float | None
    accuracy_interval: tuple | None
    spammer_score: float | None
    spammer_interval: tuple | None


@dataclass(frozen=True)
class ReliabilityOverview:
    computed_at: Any = None
    rows: list = field(default_factory=list)

    @property
    def computed(self) -> bool:
        return self.computed_at is not None


def _rows_of(fit: StoredReliability, role: str, workers: dict) -> list[ReliabilityRow]:
    rows = []
    for w, r in fit.workers.items():
        if int(w) in workers:
            rows.append(ReliabilityRow(workers[int(w)], role, r.get("answers", 0), r.get("accuracy"), tuple(r.get("accuracy_interval") or ()),
                                       r.get("spammer_score"), tuple(r.get("spammer_interval") or ())))
    for w, r in fit.writers.items():
        if int(w) in workers:
            rows.append(ReliabilityRow(workers[int(w)], "writer", r.get("parts", 0), r.get("usable"), tuple(r.get("usable_interval") or ()), None, None))
    return rows


def reliability_overview(job: Job) -> ReliabilityOverview:
    """The stored model of the job and of the job voting on it, per worker, least reliable first
    (two queries, whatever the number of responses)."""
    from django.db.models import Q

    from ..models import Worker

    fits = [_from_row(row) for row in JobReliability.objects.filter(Q(job=job) | Q(job__reviews=job)).defer("tasks")]
    if not fits:
        return ReliabilityOverview()
    ids = {int(w) for f in fits for w in (*f.workers, *f.writers)}
    workers = Worker.objects.select_related("user").in_bulk(ids)
    rows = []
    for fit in fits:
        role = "rater" if fit.job_id == job.pk else "voter"
        if role == "rater" and job.reviews_id:
            role = "voter"
        rows += _rows_of(fit, role, workers)
    rows.sort(key=lambda r: (r.spammer_score if r.spammer_score is not None else (r.accuracy or 0), r.worker.pk))
    return ReliabilityOverview(max(f.computed_at for f in fits), rows)


def worker_reliability_rows(worker_id: int, job_ids) -> list[dict]:
    """One worker's stored reliability over the given jobs and the jobs voting on them (one query):
    [{"job": the job the worker worked on, "role": "voter"/"rater"/"writer", ...stored numbers}]."""
    from django.db.models import Q

    ids = list(job_ids)
    rows = JobReliability.objects.filter(Q(job_id__in=ids) | Q(job__reviews_id__in=ids)).defer("tasks").select_related("job")
    out = []
    for row in rows:
        if (r := row.workers.get(str(worker_id))) is not None:
            out.append({"job": row.job, "role": "voter" if row.job.reviews_id else "rater", **r})
        if (r := row.writers.get(str(worker_id))) is not None and row.job.reviews_id:
            out.append({"job_id": row.job.reviews_id, "job": row.job, "role": "writer", **r})
    return out


# --- What exports read (issue 22) -----------------------------------------------------------------


def decision_of(job: Job) -> dict:
    """Which rule decided the votes on this job's responses (a vote job: on the job it reviews), for
    the export's manifest and README (one query)."""
    from ..models import DecisionRule, QualityPolicy

    reviewed = job.reviews_id or job.pk
    policy = QualityPolicy.objects.filter(job_id=reviewed).first()
    if policy is None or not (policy.voting_enabled or ReviewRound.objects.filter(item__job_id=reviewed).exists()):
        return {"voting": False, "rule": None}
    rule = {"voting": True, "rule": policy.decision_rule, "description": DecisionRule(policy.decision_rule).label}
    if policy.decision_rule == DecisionRule.MODEL:
        rule.update(model_sure=policy.model_sure, model_max_votes=policy.model_max_votes, votes_per_response=policy.votes_per_response)
    else:
        rule.update(against_threshold=policy.against_threshold, votes_per_response=policy.votes_per_response)
    return rule


def item_model_columns(job: Job, item_ids) -> tuple[list[str], dict]:
    """The stored model's outcome and confidence per question of each item, as extra items.csv
    columns ([`<question>_model`, `<question>_model_confidence`, ...], {item id: {column: value}});
    for a vote job an item's tasks are its response's voted parts (two queries)."""
    fit = stored_reliability(job)
    if fit is None:
        return [], {}
    from ..models import Item

    prefix_of = {pk: pk for pk in item_ids}
    if job.reviews_id:
        prefix_of = dict(Item.objects.filter(pk__in=list(item_ids)).values_list("pk", "subject_response_id"))
    by_prefix: dict[str, dict] = {}
    for task, row in fit.tasks.items():
        prefix, _, question = task.partition(":")
        by_prefix.setdefault(prefix, {})[question] = row
    questions = sorted({q for rows in by_prefix.values() for q in rows})
    columns = [c for q in questions for c in (f"{q}_model", f"{q}_model_confidence")]
    out = {}
    for item, prefix in prefix_of.items():
        rows = by_prefix.get(str(prefix), {})
        out[item] = {c: v for q, row in rows.items() for c, v in ((f"{q}_model", row["outcome"]), (f"{q}_model_confidence", row["confidence"]))}
    return columns, out


def worker_reliability_table(job: Job) -> list[dict]:
    """Per worker the stored reliability of this job (as rater or voter) and, for a job that is voted
    on, of its vote job (as voter, and as writer), with the worker as `provider:id` (three queries)."""
    from django.db.models import Q

    from ..models import Worker

    fits = list(JobReliability.objects.filter(Q(job=job) | Q(job__reviews=job)).defer("tasks").select_related("job"))
    ids = {int(w) for f in fits for w in (*f.workers, *f.writers)}
    names = {w.pk: f"{w.provider}:{w.external_id}" for w in Worker.objects.filter(pk__in=ids)}
    rows = []
    for fit in fits:
        role = "voter" if fit.job.reviews_id else "rater"
        for w, r in fit.workers.items():
            rows.append({"worker": names.get(int(w), w), "role": role, "job_id": fit.job_id, "answers": r["answers"],
                         "accuracy": r["accuracy"], "accuracy_low": r["accuracy_interval"][0], "accuracy_high": r["accuracy_interval"][1],
                         "spammer_score": r["spammer_score"], "spammer_low": r["spammer_interval"][0], "spammer_high": r["spammer_interval"][1],
                         "fitted_at": fit.computed_at.isoformat()})
        for w, r in fit.writers.items():
            rows.append({"worker": names.get(int(w), w), "role": "writer", "job_id": fit.job_id, "answers": r["parts"],
                         "accuracy": r["usable"], "accuracy_low": r["usable_interval"][0], "accuracy_high": r["usable_interval"][1],
                         "spammer_score": None, "spammer_low": None, "spammer_high": None, "fitted_at": fit.computed_at.isoformat()})
    rows.sort(key=lambda r: (str(r["worker"]), r["role"]))
    return rows
