"""Objective scores computed from the entries themselves (`score_entries`) and compared with an
uploaded score.csv (`compare_score_csv`); DSTC6 Track 1 result files checked and scored.

The mathematics is `evaluation.stats.objective` (pure). Scoring writes each entry's
`computed_scores` and leaves `objective_scores`, the uploaded score file's values (what the challenge
published), as they are: a recomputation is evidence beside them (`evaluation.stats.score_sources`).
Eq. 2 reads the uploaded value where there is one, else the computed one (`Entry.scores_for_ranking`,
labelled per value); a campaign's correlations are computed on each apart. The page and the API
queue it (`start_scoring`) and show the run's progress; the command runs it in place.
"""
from __future__ import annotations

import json
import logging
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from annotation.models import RunStatus
from evaluation.campaigns.services.imports import BASELINE_TEAMS, read_score_csv, score_entry
from evaluation.campaigns.services.inputs import refresh_campaigns_of
from evaluation.errors import EvaluationInputError
from evaluation.models import Entry, ObjectiveScoringRun, TestSet
from quorum import strict_json
from quorum.background import after_commit
from quorum.lazy_modules import lazy
from quorum.progress import note_refused, queue_pending_again

if TYPE_CHECKING:
    from evaluation.stats import objective
else:
    objective = lazy("evaluation.stats.objective")

logger = logging.getLogger(__name__)

DEFAULT_TOLERANCE = 0.005
MAX_UPLOAD_BYTES = 20 * 1024 * 1024  # an upload from the page or the API; the command reads any size


def wordnet():
    """The WordNet reader METEOR needs, or None (then METEOR is not computed; the uploaded score.csv's stays the only one)."""
    return objective.wordnet_reader(str(settings.QUORUM_WORDNET_DIR) if settings.QUORUM_WORDNET_DIR else None)


def scorable_entries(test_set: TestSet):
    return Entry.objects.filter(test_set=test_set, outputs__isnull=False, is_ground_truth=False).select_related("team")


def score_entries(test_set: TestSet, *, progress=None) -> dict:
    """Compute every DSTC9 Track 1 metric of each entry with outputs, store them, and say what was done.

    `progress(done, total)` is called after each entry. Each entry is saved in its own transaction,
    so a long run shows its results as it goes and a failure keeps those already scored."""
    entries = list(scorable_entries(test_set))
    if not entries:
        raise EvaluationInputError(f"test set {test_set.name!r} has no entry with outputs to score; import the entries first")
    reader = wordnet()
    scored = []
    try:
        for done, entry in enumerate(entries, start=1):
            computed = objective.dstc9_scores(test_set.labels, entry.outputs, wordnet=reader)
            with transaction.atomic():
                entry.computed_scores = computed
                entry.save(update_fields=["computed_scores"])
            scored.append(entry)
            if progress is not None:
                progress(done, len(entries))
    finally:
        # The campaigns' correlations read these scores: results stored before are now stale,
        # also when a later entry failed (those already scored stay).
        refresh_campaigns_of(scored)
    metrics = [m for m in objective.DSTC9_METRICS if reader is not None or m != objective.METEOR]
    not_computed = {} if reader is not None else {objective.METEOR: objective.METEOR_REASON}
    return {"entries": len(entries), "metrics": metrics, "not_computed": not_computed}


def start_scoring(test_set: TestSet, created_by=None) -> ObjectiveScoringRun:
    """Record a scoring run and queue it after commit; one at a time per test set (a second request
    gets the run under way)."""
    if not scorable_entries(test_set).exists():
        raise EvaluationInputError(f"test set {test_set.name!r} has no entry with outputs to score; import the entries first")
    with transaction.atomic():
        TestSet.objects.select_for_update().filter(pk=test_set.pk).first()
        under_way = ObjectiveScoringRun.objects.filter(test_set=test_set, status__in=(RunStatus.PENDING, RunStatus.RUNNING)).first()
        if under_way is not None:
            return under_way
        run = ObjectiveScoringRun.objects.create(test_set=test_set, created_by=created_by, total=scorable_entries(test_set).count())
        after_commit("evaluation.tasks.run_objective_scoring", run.pk, on_refused=lambda: note_refused(run))
    return run


def run_scoring(run_id: int) -> ObjectiveScoringRun | None:
    """Carry out a scoring run: progress on the row, then succeeded with its summary or failed with why."""
    run = ObjectiveScoringRun.objects.filter(pk=run_id).select_related("test_set").first()
    if run is None or run.status in (RunStatus.SUCCEEDED, RunStatus.FAILED):
        return run
    runs = ObjectiveScoringRun.objects.filter(pk=run.pk)
    runs.update(status=RunStatus.RUNNING, started_at=timezone.now(), done=0, error="")
    try:
        summary = score_entries(run.test_set, progress=lambda done, total: runs.update(done=done, total=total))
    except (EvaluationInputError, ValueError) as exc:
        runs.update(status=RunStatus.FAILED, error=str(exc), finished_at=timezone.now())
    except Exception as exc:  # the run must end in a state the organizer can see, whatever went wrong
        logger.exception("objective scoring run %s failed", run.pk)
        error = f"Scoring failed unexpectedly ({type(exc).__name__}: {exc}); the entries scored before it keep their scores. Start it again."
        runs.update(status=RunStatus.FAILED, error=error, finished_at=timezone.now())
    else:
        runs.update(status=RunStatus.SUCCEEDED, summary=summary, finished_at=timezone.now())
    run.refresh_from_db()
    return run


def settle_lost_scoring(now=None) -> dict:
    """The beat's safety net, as `annotation.services.sweeps` is for imports and exports: a run still
    pending past QUORUM_RUN_DEADLINE_MINUTES (the broker lost it) is queued again; one left running
    that long (its worker was lost) fails with the reason. Safe to repeat."""
    now = now or timezone.now()
    cutoff = now - timedelta(minutes=settings.QUORUM_RUN_DEADLINE_MINUTES)
    pending = ObjectiveScoringRun.objects.filter(status=RunStatus.PENDING, created_at__lt=cutoff).only("pk", "created_at")
    requeued = queue_pending_again("evaluation.tasks.run_objective_scoring", pending)
    reason = (
        f"Stopped: no worker finished it within {settings.QUORUM_RUN_DEADLINE_MINUTES} minutes of its start (the worker "
        "running it was lost). The entries scored before keep their scores; start it again."
    )
    stuck = ObjectiveScoringRun.objects.filter(status=RunStatus.RUNNING, started_at__lt=cutoff)
    return {"requeued": requeued, "failed": stuck.update(status=RunStatus.FAILED, error=reason, finished_at=now)}


# ---------------------------------------------------------------------------------------------
# score.csv compared with the computed scores


def compare_score_csv(test_set: TestSet, text: str, *, name: str = "score.csv", tolerance: float = DEFAULT_TOLERANCE,
                      baseline_teams=BASELINE_TEAMS) -> dict:
    """Each row of an uploaded score.csv against the scores Quorum computed for that entry: per team,
    entry and metric the published and computed values, their difference and whether it is within
    `tolerance`. Rows whose entry has no computed scores are listed apart with the reason. Reads only."""
    if not (isinstance(tolerance, int | float) and 0 <= tolerance < 1):
        raise EvaluationInputError(f"the tolerance must be a number from 0 to 1; got {tolerance!r}")
    compared, unscored = [], []
    for line, team_id, entry_id, published in read_score_csv(text, name):
        team, entry_name, entry = score_entry(test_set, team_id, entry_id, baseline_teams)
        label = f"{team}/{entry_name}"
        if entry is None or not entry.computed_scores:
            reason = "no such entry" if entry is None else (
                "no outputs to score" if entry.outputs is None else "not scored yet: run score_entries")
            unscored.append({"line": line, "entry": label, "reason": reason})
            continue
        for row in objective.score_differences(entry.computed_scores, published, tolerance):
            compared.append({"line": line, "team_id": team, "entry_id": entry_name, **row})
    outside = [r for r in compared if not r["within"]]
    return {"tolerance": tolerance, "compared": compared, "outside": outside, "unscored": unscored,
            "entries": len({(r["team_id"], r["entry_id"]) for r in compared})}


# ---------------------------------------------------------------------------------------------
# DSTC6 Track 1 result files


def dstc6_dialogs(test_set_json) -> list[objective.Dstc6Dialog]:
    """The dialogs of a DSTC6 Track 1 test set (a JSON list of {dialog_id, candidates: [{candidate_id,
    utterance}], answer: {candidate_id}}); the answer may be missing (then it cannot be scored)."""
    if not isinstance(test_set_json, list) or not test_set_json:
        raise EvaluationInputError("the DSTC6 test set must be a non-empty JSON list of dialogs")
    dialogs = []
    for index, dialog in enumerate(test_set_json):
        if not isinstance(dialog, dict) or "dialog_id" not in dialog or not isinstance(dialog.get("candidates"), list):
            raise EvaluationInputError(f"test set, dialog {index + 1}: needs dialog_id and a list of candidates")
        ids = [str(c.get("candidate_id")) for c in dialog["candidates"] if isinstance(c, dict)]
        if len(ids) != len(dialog["candidates"]) or len(set(ids)) != len(ids):
            raise EvaluationInputError(f"test set, dialog {dialog['dialog_id']}: every candidate needs its own candidate_id")
        answer = dialog.get("answer")
        answer_id = str(answer["candidate_id"]) if isinstance(answer, dict) and "candidate_id" in answer else None
        dialogs.append(objective.Dstc6Dialog(str(dialog["dialog_id"]), tuple(ids), answer_id))
    return dialogs


def _result_lines(text: str, count: int) -> list[int]:
    """The line on which each top-level element of a JSON list starts (for the messages)."""
    decoder, lines, position = json.JSONDecoder(), [], text.index("[") + 1
    for _ in range(count):
        while position < len(text) and text[position] in " \t\r\n,":
            position += 1
        lines.append(text.count("\n", 0, position) + 1)
        _value, position = decoder.raw_decode(text, position)
    return lines


def score_dstc6_results(test_set_json, result_text: str, name: str = "results.json") -> dict:
    """Check a DSTC6 Track 1 result file against the test set and score it (precision@1/2/5);
    refused with its place (line, dialog, candidate)."""
    dialogs = dstc6_dialogs(test_set_json)
    results = load_json_text(result_text, name)
    lines = _result_lines(result_text, len(results)) if isinstance(results, list) else None
    try:
        ranked = objective.check_dstc6_results(dialogs, results, lines)
        return {"dialogs": len(dialogs), **objective.dstc6_precision(dialogs, ranked)}
    except objective.Dstc6ResultProblem as exc:
        raise EvaluationInputError(f"{name}, {exc}") from None


def load_json_text(text: str, name: str):
    """The JSON value of an uploaded text, refused in words where it is not JSON Quorum reads
    (quorum.strict_json: NaN, too deep, a NUL...)."""
    try:
        return strict_json.loads(text)
    except ValueError as exc:  # StrictJSONError, with the parser's line and column
        raise EvaluationInputError(f"{name}: refused: {exc}") from None


def upload_text(upload) -> str:
    """The text of an uploaded file (the page's and the API's), refused when too big or not UTF-8."""
    if upload.size > MAX_UPLOAD_BYTES:
        raise EvaluationInputError(f"{upload.name}: larger than {MAX_UPLOAD_BYTES // (1024 * 1024)} MB; use the score_entries command")
    try:
        return upload.read().decode("utf-8-sig")
    except UnicodeDecodeError:
        raise EvaluationInputError(f"{upload.name}: not UTF-8 text") from None


def read_text(path) -> str:
    path = Path(path)
    if not path.is_file():
        raise EvaluationInputError(f"{path}: file not found")
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise EvaluationInputError(f"{path}: not UTF-8 text") from None
