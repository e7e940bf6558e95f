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
from ..exporters.selection import earliest_accepted_rewrites
from ..models import ExportRun, Job, RunStatus
from ..rewrite_checks import VARIANTS
from .. import task_types
from ..selectors import exports as selectors
from ..selectors import quality as quality_selectors

logger = logging.getLogger(__name__)

__all__ = ["ExportError", "export_directory", "export_job", "rewrite_variants", "run_export", "create_export_run"]

_SAFE_NAME = re.compile(r"^[a-z][a-z0-9_-]*$")  # variants become directory names
Progress = Callable[[int, int], None]


def quorum_version() -> str:
    return getattr(settings, "QUORUM_VERSION", "") or "unknown"


def rewrite_variants(job: Job) -> list[str]:
    variants = job.settings.get("variants", list(VARIANTS)) if isinstance(job.settings, dict) else list(VARIANTS)
    if not isinstance(variants, list) or not variants:
        raise ExportError(f"Job {job.id} has no rewrite variants in its settings; set settings.variants.")
    bad = [v for v in variants if not isinstance(v, str) or not _SAFE_NAME.match(v)]
    if bad or len(set(variants)) != len(variants):
        raise ExportError(f"Job {job.id} has invalid or repeated variant names {variants!r} in its settings.")
    return variants


def check_exportable(job: Job) -> None:
    """Every job exports its responses and combined items; a job whose type exports test sets needs
    a corpus in a format Quorum can write."""
    kind = task_types.get(job.task_type)
    if kind.exports_test_sets and job.corpus_id is None:
        raise ExportError(f"Job {job.id} has no corpus to write test sets in.")


def test_set_variants(job: Job, kind) -> list[str]:
    """The test sets a job writes: a rewrite job's variants; a spoken-reading job's reading indexes
    (`spoken_1` … `spoken_k`, the user turn replaced by the ASR hypothesis of that reading)."""
    if kind.upload_store == "spoken_readings":
        return [spoken_variant(i) for i in range(len(kind.upload_fields(job.settings)))]
    return rewrite_variants(job)


def spoken_variant(index: int) -> str:
    return f"spoken_{index + 1}"


def export_job(job: Job, directory: Path, progress: Progress | None = None, *, include_audio: bool = False) -> list[str]:
    """Write the job's export into `directory` (which must not exist or be empty); return the file names.

    `progress(done, total)` is called as dialogs and responses are written. `include_audio` adds the
    recordings of a spoken-reading job (`audio/`); its manifest of readings is always written.
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
            files = _write_export(job, kind, test_set_variants(job, kind), writer_for(job.corpus.source_format), staging, progress)
            if kind.upload_store == "spoken_readings":
                files += _write_readings(job, staging, include_audio)
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
        spoken = kind.upload_store == "spoken_readings"
        choose = earliest_hypotheses if spoken else earliest_accepted_rewrites
        for dialog in selectors.export_dialogs(job, with_readings=spoken):
            records, entry = _dialog_records(dialog, variants, choose)
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
        columns = [f["name"] for f in kind.answer_fields(job.settings)] if spoken else variants
        raw_csv.write_responses(fh, records, columns, on_row=tracker.advance)
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
    agreement = [a.__dict__ for a in quality_selectors.job_agreement(job)]
    manifest = {
        "job": {"id": job.id, "name": job.name, "task_type": job.task_type, "settings": job.settings, "redundancy": job.redundancy},
        "exported_at": timezone.now().isoformat(),
        "quorum_version": quorum_version(),
        "selection": "responses.csv: every confirmed response of the job's ordinary items, whatever became of it; "
        "items.csv: per item, the task type's combination of the responses that count.",
        "items": len(combined),
        "agreement": agreement,
    }
    write_json(staging / "manifest.json", manifest)
    files = ["responses.csv", "items.csv", "manifest.json", "README.md"]
    (staging / "README.md").write_text(readme.render_answers(manifest=manifest, files=files), encoding="utf-8")
    tracker.finish()
    return files


def _dialog_records(dialog, variants, choose) -> tuple[dict[str, DialogRecord], dict]:
    turns = {v: [] for v in variants}
    item_turns, replaced = [], {v: [] for v in variants}
    for turn in dialog.ordered_turns:
        rewrites = {}
        if turn.job_items:  # at most one: an item is unique per job and turn
            item_turns.append(turn.index)
            rewrites = choose(turn.job_items[0].accepted_responses, variants)
        for variant in variants:
            if variant in rewrites:
                replaced[variant].append(turn.index)
            turns[variant].append(
                TurnRecord(turn.index, turn.speaker, rewrites.get(variant, turn.text), turn.slot_values, turn.raw)
            )
    records = {v: DialogRecord(dialog.external_id, dialog.meta, turns[v]) for v in variants}
    return records, {"dialog_id": dialog.external_id, "item_turns": item_turns, "replaced": replaced}


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


def earliest_hypotheses(accepted_responses, variants) -> dict[str, str]:
    """Variant `spoken_k` -> the ASR hypothesis of reading k of the earliest accepted response that
    has one transcribed (responses prefetched with `readings`), as rewrites take the earliest rewrite."""
    chosen: dict[str, str] = {}
    for response in sorted(accepted_responses, key=lambda r: (r.submitted_at, r.id)):
        for reading in response.transcribed_readings:
            variant = spoken_variant(reading.index)
            if variant in variants and variant not in chosen and reading.asr_text.strip():
                chosen[variant] = reading.asr_text
    return chosen


def _write_readings(job, staging: Path, include_audio: bool) -> list[str]:
    """readings.jsonl: one line per reading of a confirmed response (the human-read source text,
    the hypothesis, its confidence and timing, the audio's path in the export and in storage); and,
    when asked, the audio files themselves under audio/."""
    files = ["readings.jsonl"]
    with open(staging / "readings.jsonl", "x", encoding="utf-8") as fh:
        for reading in selectors.job_readings(job):
            turn = reading.response.item.turn
            exported = f"audio/response-{reading.response_id}-reading-{reading.index + 1}.wav"
            if include_audio:
                target = staging / exported
                target.parent.mkdir(exist_ok=True)
                with reading.audio.open("rb") as source, open(target, "xb") as out:
                    shutil.copyfileobj(source, out)
                files.append(exported)
            row = {
                "response_id": reading.response_id, "reading": reading.index + 1, "variant": spoken_variant(reading.index),
                "status": reading.response.status, "worker": f"{reading.response.worker.provider}:{reading.response.worker.external_id}",
                "dialog_id": turn.dialog.external_id if turn else "", "turn_index": turn.index if turn else None,
                "source_text": turn.text if turn else "", "asr_text": reading.asr_text, "asr_confidence": reading.asr_confidence,
                "asr_backend": reading.asr_backend, "asr_error": reading.asr_error, "decode_seconds": reading.decode_seconds,
                "seconds": reading.seconds, "sample_rate": reading.sample_rate,
                "audio": exported if include_audio else None, "storage_name": reading.audio.name,
            }
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    return files


# --- background runs -----------------------------------------------------------------------------


def export_directory(run: ExportRun) -> Path:
    return Path(settings.QUORUM_EXPORT_DIR) / f"job-{run.job_id}" / f"run-{run.id}"


def create_export_run(job: Job, created_by=None, *, include_audio: bool = False) -> ExportRun:
    """Record a pending export run of `job` (ExportError if the job cannot be exported); the caller queues it."""
    check_exportable(job)
    kind = task_types.get(job.task_type)
    if kind.exports_test_sets:
        test_set_variants(job, kind)  # refuse bad settings now rather than in the background
    return ExportRun.objects.create(job=job, created_by=created_by, include_audio=include_audio)


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
        files = export_job(
            run.job, target, progress=lambda done, total: runs.update(done=done, total=total), include_audio=run.include_audio
        )
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
