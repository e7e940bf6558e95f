"""Exports of a rewrite job: per variant a test set in the corpus's own format, plus the raw CSV.

Exports of any size run in a Celery task (`annotation.tasks_exports.run_export`) with an
ExportRun row as progress: `create_export_run` records the run and `annotation.export_requests`
queues the task (services never import tasks); `export_job` also serves the `export_job`
management command. Files are written to a temporary directory beside the target and renamed
into place at the end, so a failed export leaves nothing half-written.
"""
import csv
import json
import logging
import os
import re
import shutil
import tempfile
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

from django.conf import settings
from django.utils import timezone

from ..exporters import DialogRecord, ExportError, TurnRecord, raw_csv, readme, writer_for
from ..exporters.base import write_json
from ..models import ExportRun, Job, RunStatus
from .. import task_types
from ..selectors import exports as selectors
from ..selectors import quality as quality_selectors

logger = logging.getLogger(__name__)

__all__ = ["ExportError", "export_directory", "export_job", "job_test_sets", "run_export", "create_export_run"]

_SAFE_NAME = re.compile(r"^[a-z][a-z0-9_-]*$")  # variants become directory names
Progress = Callable[[int, int], None]


def quorum_version() -> str:
    return getattr(settings, "QUORUM_VERSION", "") or "unknown"


def job_test_sets(job: Job) -> list[str]:
    """The job's test sets (one directory each: a rewrite job's variants), as its task type names
    them from the job's settings, checked as directory names."""
    settings = job.settings if isinstance(job.settings, dict) else {}
    names = task_types.get(job.task_type).test_set_names(settings)
    if not isinstance(names, list) or not names:
        raise ExportError(f"Job {job.id} has no rewrite variants in its settings; set settings.variants.")
    bad = [v for v in names if not isinstance(v, str) or not _SAFE_NAME.match(v)]
    if bad or len(set(names)) != len(names):
        raise ExportError(f"Job {job.id} has invalid or repeated variant names {names!r} in its settings.")
    return names


def check_exportable(job: Job) -> None:
    """Every job exports its responses and combined items; a job whose type exports test sets needs
    a corpus in a format Quorum can write."""
    kind = task_types.get(job.task_type)
    if kind.exports_test_sets and job.corpus_id is None:
        raise ExportError(f"Job {job.id} has no corpus to write test sets in.")


def export_job(job: Job, directory: Path, progress: Progress | None = None) -> list[str]:
    """Write the job's export into `directory` (which must not exist or be empty); return the file names.

    `progress(done, total)` is called as dialogs and responses are written.
    """
    check_exportable(job)
    kind = task_types.get(job.task_type)
    directory = Path(directory)
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise ExportError(f"{directory} already exists and is not an empty directory; choose a new one.")
    directory.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{directory.name}-", suffix=".partial", dir=directory.parent))
    try:
        if kind.exports_test_sets:
            files = _write_export(job, kind, job_test_sets(job), writer_for(job.corpus.source_format), staging, progress)
        else:
            files = _write_answers_export(job, kind, staging, progress)
        os.rename(staging, directory)  # atomic on one file system; replaces an empty directory
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return files


class _Tracker:
    """Reports progress about a hundred times per export, not once per row."""

    def __init__(self, callback: Progress | None, total: int):
        self.callback, self.total, self.done = callback, total, 0
        self._step, self._reported = max(1, total // 100), 0
        self._report()

    def _report(self):
        if self.callback:
            self.callback(self.done, self.total)
        self._reported = self.done

    def advance(self):
        self.done += 1
        if self.done - self._reported >= self._step:
            self._report()

    def finish(self):
        self.total = max(self.total, self.done)  # rows may have arrived while exporting
        self.done = self.total
        self._report()


def _write_export(job, kind, variants, writer_cls, staging: Path, progress) -> list[str]:
    corpus = job.corpus
    tracker = _Tracker(progress, selectors.count_export_dialogs(job) + selectors.count_job_responses(job))
    counts = {v: {"turns_replaced": 0, "turns_without_accepted_rewrite": 0} for v in variants}
    dialogs_manifest = []
    files: list[str] = []

    with ExitStack() as stack:
        writers = {}
        for variant in variants:
            writers[variant] = writer_cls(staging / variant, corpus.meta)
            stack.callback(writers[variant].close)
        for dialog in selectors.export_dialogs(job):
            records, entry = _dialog_records(dialog, kind, job.settings, variants)
            for variant in variants:
                writers[variant].add(records[variant])
                counts[variant]["turns_replaced"] += len(entry["replaced"][variant])
                counts[variant]["turns_without_accepted_rewrite"] += len(entry["item_turns"]) - len(
                    entry["replaced"][variant]
                )
            dialogs_manifest.append(entry)
            tracker.advance()
        for variant in variants:
            files += [f"{variant}/{name}" for name in writers[variant].finish()]

    with open(staging / "responses.csv", "x", encoding="utf-8", newline="") as fh:
        records = (_response_record(r) for r in selectors.job_responses(job))
        raw_csv.write_responses(fh, records, variants, on_row=tracker.advance)
    files.append("responses.csv")

    manifest = {
        "job": {
            "id": job.id,
            "name": job.name,
            "task_type": job.task_type,
            "settings": job.settings,
            "redundancy": job.redundancy,
        },
        "corpus": {"id": corpus.id, "name": corpus.name, "source_format": corpus.source_format},
        "exported_at": timezone.now().isoformat(),
        "quorum_version": quorum_version(),
        "selection": "Dialogs with at least one item in the job; per turn and variant the earliest "
        "accepted response (by submitted_at, then id).",
        "variants": counts,
        "dialogs": dialogs_manifest,
        **kind.manifest_extra(job.settings),
    }
    files += ["manifest.json", "README.md"]
    write_json(staging / "manifest.json", manifest)
    (staging / "README.md").write_text(readme.render(manifest=manifest, files=files), encoding="utf-8")
    tracker.finish()
    return files


def _write_answers_export(job, kind, staging: Path, progress) -> list[str]:
    """The export of a job without test sets: every response, the combined items, the agreement."""
    fields = [f["name"] for f in kind.answer_fields(job.settings)]
    tracker = _Tracker(progress, selectors.count_job_responses(job))
    with open(staging / "responses.csv", "x", encoding="utf-8", newline="") as fh:
        records = (_response_record(r) for r in selectors.job_responses(job))
        raw_csv.write_responses(fh, records, fields, on_row=tracker.advance)
    combined = quality_selectors.combined_items(job)
    columns = list(dict.fromkeys(key for row in combined for key in row.combined))
    with open(staging / "items.csv", "x", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["item_id", "position", "text", *columns, "in_subset"])
        for row in combined:
            cells = [json.dumps(v) if isinstance(v, (list, dict)) else ("" if v is None else v) for v in (row.combined.get(c) for c in columns)]
            writer.writerow([row.item_id, row.position, row.subject, *cells, "" if row.in_subset is None else row.in_subset])
    extra = kind.answer_files(selectors.items_with_counted_answers(job), job.settings)
    for name, records in extra.items():
        with open(staging / name, "x", encoding="utf-8") as fh:
            for record in records:
                fh.write(json.dumps(record, ensure_ascii=False) + "\n")
    agreement = [a.__dict__ for a in quality_selectors.job_agreement(job)]
    manifest = {
        "job": {"id": job.id, "name": job.name, "task_type": job.task_type, "settings": job.settings, "redundancy": job.redundancy},
        "exported_at": timezone.now().isoformat(),
        "quorum_version": quorum_version(),
        "selection": "responses.csv: every confirmed response of the job's ordinary items, whatever became of it; "
        "items.csv: per item, the task type's combination of the responses that count.",
        "items": len(combined),
        "agreement": agreement,
        **({"files": {name: len(records) for name, records in extra.items()}} if extra else {}),
    }
    write_json(staging / "manifest.json", manifest)
    files = ["responses.csv", "items.csv", *extra, "manifest.json", "README.md"]
    (staging / "README.md").write_text(readme.render_answers(manifest=manifest, files=files), encoding="utf-8")
    tracker.finish()
    return files


def _dialog_records(dialog, kind, settings, variants) -> tuple[dict[str, DialogRecord], dict]:
    """Each test set's version of one dialog, and its manifest entry: which turns have items, and per
    set the turns the task type changed (`test_set_turns`: a rewrite in place of the source, an
    out-of-scope turn inserted before it), with what the item's payload records (`manifest_of`)."""
    turns = {v: [] for v in variants}
    item_turns, replaced, notes = [], {v: [] for v in variants}, {}
    for turn in dialog.ordered_turns:
        source = TurnRecord(turn.index, turn.speaker, turn.text, turn.slot_values, turn.raw)
        changed = {}
        if turn.job_items:  # at most one: an item is unique per job and turn
            item = turn.job_items[0]
            item_turns.append(turn.index)
            changed = kind.test_set_turns(source, item.payload, item.accepted_responses, settings)
            note = kind.manifest_of(item.payload)
            if note:
                notes[str(turn.index)] = note
        for variant in variants:
            if variant in changed:
                replaced[variant].append(turn.index)
                turns[variant].extend(changed[variant])
            else:
                turns[variant].append(source)
    records = {v: DialogRecord(dialog.external_id, dialog.meta, turns[v]) for v in variants}
    entry = {"dialog_id": dialog.external_id, "item_turns": item_turns, "replaced": replaced}
    if notes:
        entry["items"] = notes
    return records, entry


def _response_record(response) -> raw_csv.ResponseRecord:
    turn = response.item.turn
    return raw_csv.ResponseRecord(
        item_id=response.item.id,
        dialog_id=turn.dialog.external_id if turn else "",
        turn_index=turn.index if turn else None,
        source_text=turn.text if turn else "",
        worker=f"{response.worker.provider}:{response.worker.external_id}",
        answers=response.answers,
        status=response.status,
        claimed_at=response.claimed_at,
        submitted_at=response.submitted_at,
        active_seconds=response.active_seconds,
        checks=response.checks,
    )


# --- background runs -----------------------------------------------------------------------------


def export_directory(run: ExportRun) -> Path:
    return Path(settings.QUORUM_EXPORT_DIR) / f"job-{run.job_id}" / f"run-{run.id}"


def create_export_run(job: Job, created_by=None) -> ExportRun:
    """Record a pending export run of `job` (ExportError if the job cannot be exported); the caller queues it."""
    check_exportable(job)
    if task_types.get(job.task_type).exports_test_sets:
        job_test_sets(job)  # refuse bad settings now rather than in the background
    return ExportRun.objects.create(job=job, created_by=created_by)


def run_export(run_id: int) -> ExportRun | None:
    """Carry out an export run: progress on the row, then succeeded with its files or failed with why.

    Idempotent: a run that already finished is left alone; a run redelivered after a worker was
    lost starts again from scratch (its directory belongs to it alone).
    """
    run = selectors.get_export_run(run_id)
    if run is None:
        logger.warning("export run %s does not exist; nothing to do", run_id)
        return None
    if run.status in (RunStatus.SUCCEEDED, RunStatus.FAILED):
        return run
    runs = ExportRun.objects.filter(pk=run.pk)
    runs.update(status=RunStatus.RUNNING, started_at=timezone.now(), finished_at=None, done=0, error="")
    target = export_directory(run)
    try:
        if target.exists():
            shutil.rmtree(target)
        files = export_job(run.job, target, progress=lambda done, total: runs.update(done=done, total=total))
    except ExportError as exc:
        error = str(exc)
    except OSError as exc:
        logger.warning("export run %s could not write to %s: %s", run.pk, target, exc)
        error = (
            f"Could not write the export to {target}: {exc.strerror or exc}. Check that QUORUM_EXPORT_DIR "
            f"({settings.QUORUM_EXPORT_DIR}) is a writable directory with free space, then start a new export."
        )
    except Exception as exc:  # the run must end in a state the organizer can see, whatever went wrong
        logger.exception("export run %s failed", run.pk)
        error = f"The export failed unexpectedly ({type(exc).__name__}: {exc}). Start a new export; if it fails again, report it."
    else:
        runs.update(status=RunStatus.SUCCEEDED, directory=str(target), files=files, finished_at=timezone.now())
        run.refresh_from_db()
        return run
    runs.update(status=RunStatus.FAILED, error=error, directory="", files=[], finished_at=timezone.now())
    run.refresh_from_db()
    return run
