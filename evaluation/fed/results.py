"""A FED set's results, computed once per state of its counted answers, in the background, and read
from there after (as a campaign's results are, `campaigns/services/results_runs.py`).

Reading the results (the set's page, its CSV, the API) finds the stored `FedResult`; when there is
none, or it is from answers that have changed since or from an older method, the read asks for a
computation (`results_if_asked`): the attempt is recorded as queued on the set's `FedResultsRun`
and `evaluation.tasks.compute_fed_results` runs it after the commit, while the outputs show the
stored results marked as such (`selectors.StoredFedResults.note`). The computation reads the state
of the answers before the answers, so answers that change while it runs leave it stale, and the next
read asks again. A failure leaves the stored results as they were, its reason named beside them, and
is not asked again until the answers change. The beat sweep `sweep_fed_results` queues again an
attempt the broker refused and fails, then queues again, one a lost worker left running. The
`fed_results` command computes in its own process as an attempt on the same record (`results_here`).
"""
from __future__ import annotations

import time

from annotation.models import ResponseTransition
from annotation.services.attempts import AttemptRecord
from evaluation.errors import EvaluationInputError
from evaluation.fed import selectors
from evaluation.models import FedResult, FedResultsRun, FedSet
from quorum.strict_json import json_safe

RESULTS_RUNS: AttemptRecord[FedResultsRun] = AttemptRecord(FedResultsRun, "fed_set", "evaluation.tasks.compute_fed_results")


def request_fed_results(fed_set: FedSet, *, by=None) -> FedResultsRun:
    """Record an attempt at the set's results as queued and queue it once the caller's transaction commits."""
    return RESULTS_RUNS.request(fed_set, by=by)


def results_if_asked(fed_set: FedSet, *, by=None) -> selectors.StoredFedResults:
    """The set's stored results; when they are missing or not current and no computation is under
    way (nor failed since the answers last changed), one is asked for first and the state read again
    (where tasks run in-process it has run by then)."""
    stored = selectors.stored_fed_results(fed_set)
    if fed_set.job_id is None or stored.current or not _worth_asking(fed_set, stored):
        return stored
    request_fed_results(fed_set, by=by)
    return selectors.stored_fed_results(fed_set)


def _worth_asking(fed_set: FedSet, stored: selectors.StoredFedResults) -> bool:
    run = stored.run
    if run is None or not run.current:
        return True
    if run.under_way:
        return False
    # Failed: asked again only once an answer has moved since, not at every read.
    last = ResponseTransition.objects.filter(response__item__job_id=fed_set.job_id).order_by("-pk").values_list("created_at", flat=True).first()
    return last is not None and run.finished_at is not None and last > run.finished_at


def compute_fed_results(fed_set: FedSet) -> FedResult:
    """The stored results of the set's answers as they stand (found when stored already), and only
    those: older ones are removed. The state is read before the answers (see the module's note)."""
    version, counted = selectors.answers_version(fed_set)
    found = FedResult.objects.filter(fed_set=fed_set, answers_version=version, method=selectors.FED_RESULTS_METHOD).first()
    if found is not None:
        return found
    started = time.perf_counter()
    results, agreement = selectors.fed_report(fed_set)
    result, _ = FedResult.objects.get_or_create(
        fed_set=fed_set, answers_version=version, method=selectors.FED_RESULTS_METHOD,
        defaults={"answers": counted, "report": json_safe({"results": results, "agreement": agreement}), "seconds": time.perf_counter() - started},
    )
    FedResult.objects.filter(fed_set=fed_set).exclude(pk=result.pk).delete()
    return result


def run_fed_results(fed_set_id: int) -> dict | None:
    """An attempt at set `fed_set_id`'s results with its record (the task's work): the stored
    result's id, {"failed": reason} when it failed (on the row too), None when the set is gone."""
    fed_set = FedSet.objects.select_related("job").filter(pk=fed_set_id).first()
    if fed_set is None:
        return None
    outcome = RESULTS_RUNS.run(fed_set, lambda: compute_fed_results(fed_set))
    if outcome.failed or outcome.value is None:
        return {"fed_set": fed_set_id, "failed": outcome.error}
    return {"fed_set": fed_set_id, "result": outcome.value.pk, "answers": outcome.value.answers}


def results_here(fed_set: FedSet) -> selectors.StoredFedResults:
    """The set's stored results for its answers as they stand, computed in this process first when
    they are not (the `fed_results` command), as an attempt on the same record as a queued one.
    EvaluationInputError with the reason when the set has no job or the computation failed."""
    if fed_set.job_id is None:
        raise EvaluationInputError(f"FED set {fed_set.name!r} has no FED job yet: launch it, and its results come with the answers")
    stored = selectors.stored_fed_results(fed_set)
    if stored.current:
        return stored
    outcome = RESULTS_RUNS.run(fed_set, lambda: compute_fed_results(fed_set))
    if outcome.failed:
        raise EvaluationInputError(f"FED set {fed_set.name!r}: the results could not be computed: {outcome.error}")
    return selectors.stored_fed_results(fed_set)


def sweep_fed_results(now=None) -> int:
    """The beat's safety net: attempts the broker refused or lost, and those a lost worker left
    running (failed first with the reason), are queued again. Returns how many were queued."""
    return RESULTS_RUNS.queue_again(sorted(RESULTS_RUNS.settle(now)))
