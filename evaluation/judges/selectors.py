"""Reads of automatic judges' runs."""
from evaluation.models import JudgeRun


def judge_runs(campaign):
    """The campaign's automatic judges with their stored reports, each marked stale when the
    campaign's inputs changed since the report was computed (`judge_report` recomputes it)."""
    runs = list(JudgeRun.objects.filter(campaign=campaign))
    for run in runs:
        run.stale = bool(run.report) and run.inputs_version != campaign.inputs_version
    return runs
