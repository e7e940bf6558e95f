"""Reads of the stored worker flags: what the last flag run (the beat sweep, or "recompute now")
found, and when. Pages and the API read flags only through here; computing them reads every
response of a job and is left to `services.quality.apply_flags` in the background.
"""
from dataclasses import dataclass, field
from datetime import datetime

from ..models import FlagRun, Job, JobFlagReport, Response, SpokenReading, Worker
from ..quality.flags import RESPONSE_FLAG_WORDS, FlagReport, WorkerFlag, count_flags, flag_name
from .attempts import AttemptState, attempt_state


@dataclass(frozen=True)
class StoredFlags:
    """A job's stored flag report; `computed_at` is None while no run has computed one."""

    report: FlagReport = field(default_factory=FlagReport)
    computed_at: datetime | None = None
    agreement: list[dict] = field(default_factory=list)  # per question, as `selectors.quality.job_agreement` gives it
    responses_flagged: int = 0  # how many responses carry a flag, also when `report.responses` was not read
    flag_counts: dict = field(default_factory=dict)  # code -> responses carrying it (also when they were not read)

    @property
    def computed(self) -> bool:
        return self.computed_at is not None

    @property
    def responses_seen(self) -> int:
        return self.report.responses_seen

    @property
    def counts_in_words(self) -> list[tuple[str, int, str]]:
        """(code, responses carrying it, what it marks in words) per flag, most first."""
        # Sorted here: PostgreSQL's jsonb does not keep the order the counts were stored in.
        ordered = sorted(self.flag_counts.items(), key=lambda c: (-c[1], c[0]))
        return [(code, n, counted_flag_words(code, n)) for code, n in ordered]


def counted_flag_words(code: str, n: int) -> str:
    """What `n` responses carrying flag `code` are, as a count reads them ("1 response with a reading
    worth a listen", "4 responses far faster than the job's norm" without the number)."""
    words = RESPONSE_FLAG_WORDS.get(code, f"responses {flag_name(code)}")
    return words.replace("responses ", "response ", 1) if n == 1 else words


def _from_row(row: JobFlagReport) -> StoredFlags:
    data = {
        "responses": row.response_flags,
        "workers": row.worker_flags,
        "measures": row.worker_measures,
        "responses_seen": row.responses_seen,
    }
    # A report stored before alpha carried its interval reads as one without it.
    agreement = [{"ci_low": None, "ci_high": None, **question} for question in row.agreement or []]
    return StoredFlags(FlagReport.from_json(data), row.computed_at, agreement, row.responses_flagged, dict(row.response_flag_counts or {}))


def stored_flags(job: Job, *, with_responses: bool = True) -> StoredFlags:
    """The job's stored flags (one query, whatever the number of responses). Without responses,
    `report.responses` is empty and only `responses_flagged` counts them: the job page's summary
    need not decode a flag list that holds every flagged response (2 MB at 100,000)."""
    rows = JobFlagReport.objects.filter(job=job)
    row = (rows if with_responses else rows.defer("response_flags")).first()
    if row is None:
        return StoredFlags()
    if not row.response_flag_counts and row.responses_flagged:
        # A report stored before per-flag counts were kept (migration 0025): counted from its flags,
        # one query more while deferred, until the next run stores them.
        row.response_flag_counts = count_flags(row.response_flags)
    if not with_responses:
        row.response_flags = {}  # deferred: reading it would cost a query
    return _from_row(row)


def responses_since(job: Job, flags: StoredFlags) -> int:
    """Responses stored after the flags (and the agreement beside them) were computed: how far out
    of date they are. One count; 0 while nothing was computed."""
    if flags.computed_at is None:
        return 0
    return Response.objects.filter(item__job=job, submitted_at__gt=flags.computed_at).count()


def readings_since(job: Job, flags: StoredFlags) -> int:
    """Readings of responses the flags did read whose transcript came after them (the recogniser runs
    in the background): their "worth a listen" is not judged yet. One count; 0 while nothing was computed."""
    if flags.computed_at is None:
        return 0
    return SpokenReading.objects.filter(
        job=job, transcribed_at__gt=flags.computed_at, response__submitted_at__lte=flags.computed_at
    ).count()


def stored_worker_flags(job_ids) -> dict[int, StoredFlags]:
    """{job id: stored flags} for the jobs that have a report, without their per-response flags
    (a worker page needs only the workers' flags and measures). One query."""
    rows = JobFlagReport.objects.filter(job_id__in=list(job_ids)).defer("response_flags")
    out = {}
    for row in rows:
        row.response_flags = {}  # deferred: reading it would cost a query per job
        out[row.job_id] = _from_row(row)
    return out


@dataclass(frozen=True)
class FlaggedWorker:
    worker: Worker
    flags: list[WorkerFlag]
    measures: dict


def flagged_workers(flags: StoredFlags) -> list[FlaggedWorker]:
    """The flagged workers of a stored report with their evidence, most flags first (one query)."""
    report = flags.report
    ids = report.flagged_workers()
    if not ids:
        return []
    workers = Worker.objects.in_bulk(ids)
    rows = [FlaggedWorker(workers[w], report.workers[w], report.measures.get(w, {})) for w in ids if w in workers]
    rows.sort(key=lambda r: (-len(r.flags), r.worker.pk))
    return rows


def flag_run_state(job: Job, flags: StoredFlags) -> AttemptState | None:
    """The job's latest flag run attempt next to its stored `flags`; None when none was recorded. One query."""
    return attempt_state(FlagRun.objects.filter(job=job), flags.computed_at)
