"""The record of a campaign's results computations (`CampaignResultsRun`, one row per campaign: its
latest attempt), kept by `annotation.services.attempts` as a job's flag runs are.

"Compute" (the campaign page, POST results/) and an adaptive campaign that stopped record the
attempt as queued in the transaction that queues `evaluation.tasks.compute_campaign_results`; the
task marks it running, computes the stored `CampaignResult` of the campaign's inputs and writes its
files, then marks it succeeded, or failed with the reason in words. A failure leaves the stored
results as they were: the page shows the earlier ones, stale, with the failure named above them
(`selectors.results_run_state`). The beat task `sweep_campaign_results` queues again an attempt the
broker refused and fails, then queues again, one a lost worker left running. The
`compute_results` and `leaderboard` commands run the same attempt in their own process
(`compute_results_here`), so the page shows theirs too.
"""
from annotation.services.attempts import AttemptRecord
from evaluation.campaigns import selectors
from evaluation.errors import EvaluationInputError
from evaluation.models import Campaign, CampaignResult, CampaignResultsRun, Rating

from .campaigns import compute_campaign_results
from .exports import export_campaign
from .inputs import refresh_inputs_version

RESULTS_RUNS: AttemptRecord[CampaignResultsRun] = AttemptRecord(CampaignResultsRun, "campaign", "evaluation.tasks.compute_campaign_results")
TASK = RESULTS_RUNS.task


def request_campaign_results(campaign: Campaign, *, by=None) -> CampaignResultsRun:
    """Record an attempt at the campaign's results as queued (who asked, when) and queue it once
    the caller's transaction commits. A campaign without entries or ratings is refused here, in
    words, with nothing recorded: there is nothing to compute."""
    _refuse_without_inputs(campaign)
    return RESULTS_RUNS.request(campaign, by=by)


def recompute_if_older_method(campaign: Campaign, *, by=None) -> CampaignResultsRun | None:
    """Queue the campaign's results again when the ones it shows were computed by an older method
    (`selectors.shows_older_method`) and no attempt is under way or failed since: what the page
    does when it is read, so that a range computed by an older method is replaced without anyone
    pressing Compute results. None when nothing was queued."""
    if not selectors.shows_older_method(campaign):
        return None
    state = selectors.results_run_state(campaign, None)
    if state is not None and (state.under_way or state.failed):
        return None  # on its way, or it failed: the page says so and offers the button
    try:
        return request_campaign_results(campaign, by=by)
    except EvaluationInputError:
        return None  # nothing to compute any more (no entries or ratings): the page says so


def compute_results_here(campaign: Campaign) -> CampaignResult:
    """The campaign's stored results for its current inputs, computed in this process first when
    they are missing (the `compute_results` and `leaderboard` commands). The computation is an
    attempt on the same record as a queued one, so the campaign page says when it ran, or that it
    failed and why. Raises EvaluationInputError with the reason when there is nothing to compute
    (nothing recorded) or the computation failed (recorded)."""
    version = refresh_inputs_version(campaign)
    if CampaignResult.objects.filter(campaign=campaign, inputs_version=version).exists():
        return compute_campaign_results(campaign.pk)  # finds it; a draft with results moves on
    _refuse_without_inputs(campaign)
    outcome = RESULTS_RUNS.run(campaign, lambda: _compute_and_export(campaign.pk))
    if outcome.failed or outcome.value is None:
        raise EvaluationInputError(outcome.error or f"campaign {campaign.name!r}: no results were stored")
    return outcome.value


def _refuse_without_inputs(campaign: Campaign) -> None:
    if not campaign.entries.exists():
        raise EvaluationInputError(f"campaign {campaign.name!r} has no entries")
    if not Rating.objects.filter(campaign=campaign).exists():
        raise EvaluationInputError(f"campaign {campaign.name!r} has no ratings yet; results need at least one")


def _compute_and_export(campaign_id: int) -> CampaignResult:
    result = compute_campaign_results(campaign_id)
    export_campaign(result.campaign, result=result)
    return result


def run_campaign_results(campaign_id: int) -> dict | None:
    """An attempt at campaign `campaign_id`'s results with its record: the stored result's id and
    inputs version, {"failed": reason} when it failed (the reason is on the row, the traceback in
    the log; `AttemptRecord.run` says why it is not raised), None when the campaign is gone."""
    campaign = Campaign.objects.filter(pk=campaign_id).first()
    if campaign is None:
        return None
    outcome = RESULTS_RUNS.run(campaign, lambda: _compute_and_export(campaign_id))
    if outcome.failed or outcome.value is None:
        return {"campaign": campaign_id, "failed": outcome.error}
    return {"campaign": campaign_id, "result": outcome.value.pk, "inputs_version": outcome.value.inputs_version}


def sweep_results_runs(now=None) -> int:
    """The beat's safety net: every attempt still queued (the broker refused or lost it) and every
    attempt a lost worker left running (failed first with the reason, `AttemptRecord.settle`) is
    queued again. Returns how many were queued."""
    return RESULTS_RUNS.queue_again(sorted(RESULTS_RUNS.settle(now)))
