"""The record of a job's flag runs (`FlagRun`, one row per job: its latest attempt), kept by
`services.attempts` as every such record is.

"Recompute now" (page and API) records the attempt as queued in the transaction that queues the
task; the task (`annotation.tasks.apply_worker_flags`, also queued per live job by the beat sweep)
marks it running, then succeeded or failed with the reason in words. A failure leaves the stored
`JobFlagReport` as it was: the pages show the earlier flags with the failure named beside them
(`selectors.flags.flag_run_state`).
"""
from django.db.models import Exists, OuterRef

from ..models import FlagRun, Job, JobFlagReport, Response, SpokenReading
from .attempts import AttemptRecord
from .quality import apply_flags
from .voting import vote_job_of

FLAG_RUNS: AttemptRecord[FlagRun] = AttemptRecord(
    FlagRun, "job", "annotation.tasks.apply_worker_flags", sweep_seconds_setting="QUORUM_FLAG_SWEEP_SECONDS"  # settled by sweep_worker_flags
)


def request_flag_run(job: Job, *, by=None) -> FlagRun:
    """"Recompute now": record the attempt as queued (who asked, when) and queue the flag run once
    the caller's transaction commits (`AttemptRecord.request`)."""
    return FLAG_RUNS.request(job, by=by)


def run_flags(job_id: int) -> dict | None:
    """The flag run of job `job_id` with its record: `apply_flags`'s counts, {"failed": reason} when
    it failed (the reason is on the row, the traceback in the log; `AttemptRecord.run` says why it
    is not raised), None when the job is gone."""
    job = Job.objects.filter(pk=job_id).first()
    if job is None:
        return None
    outcome = FLAG_RUNS.run(job, lambda: _apply_flags_with_its_votes(job))
    return {"failed": outcome.error} if outcome.failed else outcome.value


def _apply_flags_with_its_votes(job: Job) -> dict:
    """The job's flags, then those of the job voting on it: the voters' reliability model is fitted
    there, and the job's page shows it beside its own, so "Recompute now" brings both up to date."""
    counts = apply_flags(job)
    vote_job = vote_job_of(job)
    if vote_job is not None:
        apply_flags(vote_job)
    return counts


def jobs_to_sweep(now=None) -> list[int]:
    """The jobs whose flag run the beat sweep queues: every live job with responses (a vote job
    through the job it votes on), every job whose attempt is still queued or was lost by its
    worker (`AttemptRecord.settle`, which fails the lost ones with the reason first), and a job no
    longer live with a reading transcribed after its flags (the recogniser runs in the background,
    so a finished job's last readings may be heard after its last run)."""
    again = FLAG_RUNS.settle(now)
    heard_since = Exists(SpokenReading.objects.filter(job=OuterRef("job"), transcribed_at__gt=OuterRef("computed_at")))
    again |= set(JobFlagReport.objects.filter(heard_since).values_list("job_id", flat=True))
    has_responses = Exists(Response.objects.filter(item__job=OuterRef("pk")))
    rows = dict(Job.objects.filter(state=Job.State.LIVE).filter(has_responses).values_list("pk", "reviews_id"))
    # A vote job whose job is swept too is flagged by that job's run (`_apply_flags_with_its_votes`).
    live = {pk for pk, reviewed in rows.items() if reviewed not in rows}
    return sorted(live | again)
