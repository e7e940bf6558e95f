"""Long work a campaign page starts and follows: planner runs and human-evaluation imports.

The page's request checks what it can at once (a form, that the upload is a zip), saves the upload,
records a `CampaignRun` and queues `evaluation.tasks.run_campaign_run` after commit, then answers.
The task claims the run, does the work publishing done/total, and stores the result (the plan, or
the import's counts) or the refusal in words that say what to do; the upload is removed either way.
The page shows the run through its progress endpoint (`quorum/progress.py`).
"""
from __future__ import annotations

import logging
import shutil
import zipfile
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from annotation.models import RunStatus
from annotation.services.import_uploads import save_uploads
from annotation.services.imports import RunProgress
from evaluation.campaigns import selectors
from evaluation.campaigns.services.uploads import check_human_eval_listing, import_human_eval_archive
from evaluation.errors import EvaluationInputError, RatingsAlreadyImported
from evaluation.models import Campaign, CampaignRun, Rating
from hits.providers import registry
from quorum.background import after_commit
from quorum.lazy_modules import lazy
from quorum.progress import note_refused, queue_pending_again

if TYPE_CHECKING:
    from evaluation.stats import power
else:
    power = lazy("evaluation.stats.power")

logger = logging.getLogger(__name__)

PAGE_SIMULATIONS = 1000  # the page's planner: a quicker, still seeded, plan than the command's 2000
PAGE_CAMPAIGNS = 1000  # campaigns per size the page's planner scores as the report does (the command's default too)
TASK = "evaluation.tasks.run_campaign_run"


def _record(campaign: Campaign, kind: str, *, options: dict, upload=None, created_by=None) -> CampaignRun:
    saved = save_uploads({"upload": upload})["upload"] if upload is not None else None
    try:
        with transaction.atomic():
            run = CampaignRun.objects.create(
                campaign=campaign, kind=kind, options=options, upload=str(saved or ""), upload_name=getattr(upload, "name", "") or "",
                created_by=created_by,
            )
            # The broker down: the run says so (and when Quorum tries again); the lost-work sweep queues it.
            after_commit(TASK, run.pk, on_refused=lambda: note_refused(run))
    except BaseException:
        _remove_upload(saved)
        raise
    return run


def start_plan(campaign: Campaign, data: dict, created_by=None) -> CampaignRun:
    """Queue a planner run from a valid `PlanForm`'s cleaned data (a pilot campaign or CSV, the goal).
    A pilot CSV is read and fitted here (a pilot is small), so a bad one is refused at once
    (EvaluationInputError naming the line, nothing stored); a pilot campaign is only checked to have
    ratings (reading 100,000 of them takes seconds: the run does it); the run does the simulations."""
    pilot = data.get("pilot_campaign")
    upload = None if pilot else data["pilot_file"]
    options = {
        "pilot_campaign": pilot.pk if pilot else None, "top_k": data["top_k"], "power": data["power"], "delta": data.get("delta"),
        "max_raters": data["max_raters"], "provider": data["provider"], "reward": str(data["reward"]),
    }
    if pilot is not None and not selectors.has_ratings(pilot):
        raise EvaluationInputError(f"campaign {pilot.name!r} has no ratings yet to plan from")
    if upload is not None:
        try:
            _fitted_pilot(options, upload, upload.name)
        except ValueError as exc:
            raise EvaluationInputError(str(exc)) from exc
        upload.seek(0)
    return _record(campaign, CampaignRun.Kind.PLAN, options=options, upload=upload, created_by=created_by)


def _fitted_pilot(options: dict, source, name: str):
    """(fitted model, rows rated) of the pilot the options name, or of the CSV `source`."""
    if options["pilot_campaign"]:
        pilot = Campaign.objects.filter(pk=options["pilot_campaign"]).first()
        if pilot is None:
            raise ValueError("the pilot campaign was deleted")
        return fitted_pilot(campaign=pilot)
    return fitted_pilot(source=source, name=name)


def fitted_pilot(*, campaign: Campaign | None = None, source=None, name: str = "", no_rater_ids: bool = False):
    """(fitted `power.PilotModel`, rows rated) of a pilot campaign or a pilot ratings CSV (`source`,
    named `name`): the model carries what Eq. 1 needs when the pilot knows it (a campaign: its test
    set's labels and its entries' detection predictions; a CSV: its target/predicted columns), so
    the plan is made on the leaderboard's statistic. `no_rater_ids`: the rater column is a position,
    not a person. ValueError (a RatingsFileError naming the line, a pilot without repeated items)
    when it cannot be planned from."""
    if campaign is not None:
        ratings, entries, rows, rater_ids_known, detection = selectors.campaign_pilot(campaign)
    else:
        ratings, entries, rows, rater_ids_known, detection = selectors.csv_pilot(source, name)
    model = power.fit(ratings, systems=entries, rater_ids_known=rater_ids_known and not no_rater_ids, detection=detection)
    return model, rows


def start_human_eval_import(campaign: Campaign, upload, *, replace: bool, created_by=None) -> CampaignRun:
    """Queue the import of a zipped DSTC9 human-evaluation folder (the page and the API). What the
    zip's listing alone shows is refused here (EvaluationInputError, nothing stored: not a zip, too
    large, an unsafe member, no <team>/<entry>.human_eval.json, a name too long); the members'
    contents are checked by the run."""
    if upload is None:
        raise EvaluationInputError("choose a .zip file to import")
    if not zipfile.is_zipfile(upload):
        raise EvaluationInputError(
            "the file is not a .zip archive: zip the team folders (<team>/<entry>.json beside <entry>.human_eval.json) and upload that"
        )
    upload.seek(0)
    name = getattr(upload, "name", "")
    check_human_eval_listing(upload, what=f"the file {name!r}" if name else "the file")
    return _record(campaign, CampaignRun.Kind.HUMAN_EVAL_IMPORT, options={"replace": bool(replace)}, upload=upload, created_by=created_by)


def execute(run_id: int) -> CampaignRun | None:
    """Do a queued run (the task's body). None when it is not pending (already done, or taken)."""
    claimed = CampaignRun.objects.filter(pk=run_id, status=RunStatus.PENDING).update(
        status=RunStatus.RUNNING, started_at=timezone.now(), error="",  # the broker's refusal, if any, is over
    )
    if not claimed:
        return None
    run = CampaignRun.objects.select_related("campaign__test_set").get(pk=run_id)
    try:
        result = _plan(run) if run.kind == CampaignRun.Kind.PLAN else _import_human_eval(run)
    except (EvaluationInputError, ValueError) as exc:
        _finish(run, status=RunStatus.FAILED, error=_what_to_do(run, exc))
    except Exception as exc:  # the run must end in a state the organizer can see, whatever went wrong
        logger.exception("campaign run %s failed", run.pk)
        _finish(run, status=RunStatus.FAILED, error=f"The {run.get_kind_display().lower()} failed unexpectedly ({type(exc).__name__}: {exc}). Start it again; if it fails again, report it.")
    else:
        _finish(run, status=RunStatus.SUCCEEDED, result=result)
    finally:
        _remove_upload(Path(run.upload) if run.upload else None)
    run.refresh_from_db()
    return run


def _what_to_do(run: CampaignRun, exc: Exception) -> str:
    reason = str(exc)
    if run.kind == CampaignRun.Kind.PLAN:
        return f"No plan: {reason}. Change the pilot or the goal in the planner form and plan again."
    # Said with the failure, so a failed import after a good one does not read as "no ratings".
    kept = Rating.objects.filter(campaign_id=run.campaign_id).count()
    still = f" The campaign keeps the {kept:,} rating{'s' if kept != 1 else ''} it had." if kept else ""
    if isinstance(exc, RatingsAlreadyImported):  # the archive is fine: the reason names the box to tick
        return f"Nothing was imported: {reason}.{still}"
    return f"Nothing was imported: {reason}. Correct the archive and import it again.{still}"


def _finish(run: CampaignRun, *, status: str, result=None, error: str = "") -> None:
    fields = {"status": status, "error": error, "result": result, "finished_at": timezone.now()}
    if run.total:  # the last figures published (on SQLite only kept on the object until now)
        fields.update(done=run.total if status == RunStatus.SUCCEEDED else run.done, total=run.total)
    CampaignRun.objects.filter(pk=run.pk).update(**fields)


def _publish(run: CampaignRun):
    """A progress callback for work outside a transaction: done/total written as they come."""

    def report(done: int, total: int) -> None:
        run.done, run.total = done, total
        CampaignRun.objects.filter(pk=run.pk).update(done=done, total=total)

    return report


def _plan(run: CampaignRun) -> dict:
    options = run.options
    if options["pilot_campaign"]:
        model, rows = _fitted_pilot(options, None, "")
    else:
        with open(run.upload, "rb") as source:
            model, rows = _fitted_pilot(options, source, run.upload_name)
    result = power.plan(
        model, options["top_k"], power=options["power"], delta=options["delta"], systems=rows, max_raters=options["max_raters"],
        simulations=PAGE_SIMULATIONS, campaigns=PAGE_CAMPAIGNS, pricing=registry.get(options["provider"]), reward=options["reward"], progress=_publish(run),
    )
    return result.as_dict()


def _import_human_eval(run: CampaignRun) -> dict:
    progress = RunProgress(run)  # the import is one transaction: its progress goes out on a second connection where it can
    try:
        with open(run.upload, "rb") as archive:
            summary = import_human_eval_archive(run.campaign, archive, replace=run.options.get("replace", False), progress=progress)
    finally:
        progress.close()
    return summary


def _remove_upload(path: Path | None) -> None:
    """Remove the folder `save_uploads` made for the upload (<folder>/<role>/<name>)."""
    if path is not None:
        shutil.rmtree(path.parents[1], ignore_errors=True)



def settle_stuck_runs(now=None) -> dict:
    """The beat's safety net (`evaluation.tasks.sweep_campaign_runs`), as annotation's sweep is for
    imports and exports: a run still pending past QUORUM_RUN_DEADLINE_MINUTES (its task was lost, or
    the broker was down) is queued again; one left running (its worker was lost) fails with the
    reason and its upload is removed. Safe to repeat: `execute` takes only a pending run."""
    now = now or timezone.now()
    cutoff = now - timedelta(minutes=settings.QUORUM_RUN_DEADLINE_MINUTES)
    pending = CampaignRun.objects.filter(status=RunStatus.PENDING, created_at__lt=cutoff).only("pk", "created_at")
    requeued = queue_pending_again(TASK, pending)
    stuck = CampaignRun.objects.filter(status=RunStatus.RUNNING, started_at__lt=cutoff)
    uploads = [Path(upload) for upload in stuck.exclude(upload="").values_list("upload", flat=True)]
    failed = stuck.update(
        status=RunStatus.FAILED, finished_at=now,
        error=f"Stopped: no worker finished it within {settings.QUORUM_RUN_DEADLINE_MINUTES} minutes of its start "
        "(the worker running it was lost). Nothing of it was kept; start it again.",
    )
    for upload in uploads:
        _remove_upload(upload)
    return {"requeued": requeued, "failed": failed}
