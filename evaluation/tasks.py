"""Celery tasks of the evaluation app: thin wrappers that load by id and call a service."""
from celery import shared_task

from evaluation.campaigns.services.adaptive import campaigns_to_look_at, run_look
from evaluation.campaigns.services.objective import run_scoring, settle_lost_scoring
from evaluation.campaigns.services.pairwise import compute_report as compute_pairwise
from evaluation.campaigns.services.pairwise import settle_lost_reports
from evaluation.campaigns.services.results_runs import request_campaign_results, run_campaign_results, sweep_results_runs
from evaluation.campaigns.services.runs import execute as execute_campaign_run
from evaluation.campaigns.services.runs import settle_stuck_runs
from evaluation.fed.results import run_fed_results, sweep_fed_results
from evaluation.interactive.services.scheduled import run_due_schedules
from evaluation.interactive.services.systems import run_system_check
from quorum import background


@shared_task(acks_late=True)
def compute_campaign_results(campaign_id):
    """Compute (or find) the stored report of a campaign's current inputs, and write its files
    (the campaign page's downloads; instance scores read every rating, too slow for a request),
    the attempt on its `CampaignResultsRun` (running, then succeeded or failed with why).
    Idempotent: the same inputs version is computed at most once and gives the same numbers
    (fixed seed); the files are rewritten with the same content. {"failed": reason} when it
    failed (stored, not raised: see `AttemptRecord.run`); None when the campaign is gone."""
    return run_campaign_results(campaign_id)


@shared_task
def sweep_campaign_results():
    """Beat: results computations the broker refused or lost are queued again; those whose worker
    was lost fail with the reason first, then are queued again."""
    return sweep_results_runs()


@shared_task
def run_scheduled_interactive_evaluations():
    """Beat: RADDLE's evaluation service. Each enabled schedule offers its due entries (top-k by
    automatic score, with an endpoint, not evaluated recently) an interactive campaign. Safe to
    repeat: an entry evaluated within the schedule's window is not due again."""
    return run_due_schedules()


@shared_task(acks_late=True)
def run_adaptive_look(campaign_id):
    """Look at an adaptive campaign whose round is complete: add the next round or stop (then its
    results are computed). Idempotent and safe to run concurrently (the service locks the campaign)."""
    look = run_look(campaign_id)
    if look is None:
        return None
    if look.decision != look.Decision.CONTINUE:
        request_campaign_results(look.campaign)  # recorded as every computation is, queued at the commit
    return {"campaign": campaign_id, "look": look.number, "decision": look.decision, "added_ratings": look.added_ratings}


@shared_task(acks_late=True)
def sweep_adaptive_campaigns():
    """Beat entry, the safety net behind the per-rating hook: one look task per adaptive campaign still running."""
    return sum(1 for campaign_id in campaigns_to_look_at() if background.queue_now("evaluation.tasks.run_adaptive_look", campaign_id))


@shared_task(acks_late=True)
def check_dialog_system(system_id):
    """Run a registered system's contract check and store it rule by rule (the systems page shows
    the progress). Safe to repeat: a second run replaces the first's results."""
    system = run_system_check(system_id)
    return None if system is None else {"system": system_id, "passed": system.check_passed}


@shared_task(acks_late=True)
def run_objective_scoring(run_id):
    """Compute the objective scores of a test set's entries (score_entries), progress on the run row.
    Safe to repeat: a finished run is left alone; a redelivered one scores again, with the same numbers."""
    run = run_scoring(run_id)
    return None if run is None else {"run": run_id, "status": run.status}


@shared_task
def sweep_objective_scoring():
    """Beat: objective scoring runs lost by the broker are queued again, those whose worker was lost fail with the reason."""
    return settle_lost_scoring()


@shared_task(acks_late=True)
def run_campaign_run(run_id):
    """A planner run or a human-evaluation import a campaign page started (`campaigns/services/runs.py`).
    Safe to repeat: a run that is no longer pending is left alone."""
    run = execute_campaign_run(run_id)
    return None if run is None else {"run": run_id, "status": run.status}


@shared_task
def sweep_campaign_runs():
    """Beat: planner runs and human-evaluation imports lost on the way come back (queued again while
    pending, failed with the reason when their worker was lost)."""
    return settle_stuck_runs()


@shared_task(acks_late=True)
def compute_pairwise_report(report_id):
    """A pairwise job's ranking report, stored for its page, downloads and API (`campaigns/services/pairwise.py`).
    Safe to repeat: a report that is no longer pending is left alone."""
    report = compute_pairwise(report_id)
    return None if report is None else {"report": report_id, "job": report.job_id, "status": report.status, "votes": report.votes}


@shared_task
def sweep_pairwise_reports():
    """Beat: pairwise ranking reports lost on the way come back (queued again while pending, failed with the reason when their worker was lost)."""
    return settle_lost_reports()


@shared_task(acks_late=True)
def compute_fed_results(fed_set_id):
    """A FED set's results from its counted answers as they stand, stored for its page, CSV, API and
    command (`fed/results.py`), the attempt on its `FedResultsRun`. Idempotent: the same state of
    the answers is computed at most once."""
    return run_fed_results(fed_set_id)


@shared_task
def sweep_fed_results_runs():
    """Beat: FED results computations the broker refused or lost are queued again; those whose worker
    was lost fail with the reason first, then are queued again."""
    return sweep_fed_results()
