"""Exports of a rewrite job: per variant a test set in the corpus's own format, plus the raw CSV.

Exports of any size run in a Celery task (`annotation.tasks.run_export`, registered under the name
`annotation.tasks_exports.run_export` it had in a module of its own) with an ExportRun row as
progress: `start_export` records the run and queues the task by name once it is committed
(`quorum.background`: services never import tasks); `export_job` also serves the `export_job`
management command. Files are written to a temporary directory beside the target and renamed
into place at the end, so a failed export leaves nothing half-written.
"""
import json
import logging
import os
import re
import shutil
import tempfile
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from quorum import csv_safety
from quorum.background import after_commit
from quorum.progress import note_refused

from .. import task_types
from ..exporters import DialogRecord, ExportError, TurnRecord, raw_csv, readme, writer_for
from ..exporters import reliability as reliability_files
from ..exporters.base import write_json
from ..exporters.flag_summary import FlagSummary
from ..exporters.selection import values_heard
from ..models import SPEECH_ERRORS_MAX_WER, SPEECH_ERRORS_MIN_WER, ExportRun, Job, RunStatus
from ..selectors import exports as selectors
from ..selectors import quality as quality_selectors
from ..selectors import reliability as reliability_reads
from ..speech.asr import AsrFailed, AsrUnavailable
from ..speech.config import asr_backend
from ..speech.simulate import Progress as SpeechProgress
from ..speech.simulate import SimulationError, simulate
from ..speech.tts import SpeechUnavailable
from ..speech.wer import word_errors
from .export_ood import OutOfDomain, check_out_of_domain, write_out_of_domain

logger = logging.getLogger(__name__)

__all__ = [
    "ExportError", "ExportUnderWay", "export_directory", "export_job", "job_test_sets", "run_export", "create_export_run",
    "check_speech_errors_wer", "SPEECH_ERRORS", "SPEECH_ERRORS_MAX_PASSES",
]

_SAFE_NAME = re.compile(r"^[a-z][a-z0-9_-]*$")  # variants become directory names
Progress = Callable[[int, int], None]


def quorum_version() -> str:
    return getattr(settings, "QUORUM_VERSION", "") or "unknown"


def job_test_sets(job: Job) -> list[str]:
    """The job's test sets (one directory each: a rewrite job's variants), as its task type names
    them from the job's settings, checked as directory names."""
    settings = job.settings if isinstance(job.settings, dict) else {}
    exports_sets = task_types.capability(task_types.get(job.task_type), task_types.ExportsTestSets)
    names = exports_sets.test_set_names(settings) if exports_sets else []
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
    if isinstance(kind, task_types.ExportsTestSets) and job.corpus_id is None:
        raise ExportError(f"Job {job.id} has no corpus to write test sets in.")


SPEECH_ERRORS = "speech_errors"  # the test set's directory beside the variants'
SPEECH_ERRORS_SEARCH_STEPS = 14
SPEECH_ERRORS_MAX_PASSES = 2 + SPEECH_ERRORS_SEARCH_STEPS  # synthesis, the clean floor, then the SNR search


def check_speech_errors_wer(wer: float | None, job: Job | None = None) -> None:
    """The speech-error target, when given, lies in the range the simulation is made for (and `job`
    writes test sets to add it to)."""
    if wer is None:
        return
    if job is not None and not isinstance(task_types.get(job.task_type), task_types.ExportsTestSets):
        raise ExportError(f"Job {job.id} writes no test sets, so it has no dialogs to add speech errors to; leave the speech-error target empty.")
    if not (isinstance(wer, int | float) and SPEECH_ERRORS_MIN_WER <= wer <= SPEECH_ERRORS_MAX_WER):
        raise ExportError(
            f"The speech-error target WER must be a number from {SPEECH_ERRORS_MIN_WER:g} to {SPEECH_ERRORS_MAX_WER:g} "
            f"(e.g. 0.2 for 20%), or empty for no speech errors; got {wer!r}."
        )


def export_job(
    job: Job, directory: Path, progress: Progress | None = None, *, include_audio: bool = False,
    speech_errors_wer: float | None = None, speech_errors_seed: int = 0, out_of_domain: OutOfDomain | None = None,
) -> list[str]:
    """Write the job's export into `directory` (which must not exist or be empty); return the file names.

    `progress(done, total)` is called as dialogs and responses are written. `include_audio` adds the
    recordings of a spoken-reading job (`audio/`); its manifest of readings is always written.
    `speech_errors_wer` adds the `speech_errors/` test set (see `_write_speech_errors`);
    `out_of_domain` the `out_of_domain/` one (RADDLE, `services.export_ood`), for any job over a corpus.
    """
    check_exportable(job)
    check_speech_errors_wer(speech_errors_wer, job)
    check_out_of_domain(job, out_of_domain)
    kind = task_types.get(job.task_type)
    speech = None if speech_errors_wer is None else (speech_errors_wer, speech_errors_seed)
    directory = Path(directory)
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise ExportError(f"{directory} already exists and is not an empty directory; choose a new one.")
    directory.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{directory.name}-", suffix=".partial", dir=directory.parent))
    try:
        exports_sets = task_types.capability(kind, task_types.ExportsTestSets)
        if exports_sets is not None:
            assert job.corpus is not None  # check_exportable
            files = _write_export(
                job, exports_sets, job_test_sets(job), writer_for(job.corpus.source_format), staging, progress, speech, out_of_domain,
                include_audio=include_audio,
            )
        else:
            files = _write_answers_export(job, kind, staging, progress, out_of_domain)
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


def _write_export(
    job, kind, variants, writer_cls, staging: Path, progress, speech=None, out_of_domain=None, *, include_audio: bool = False,
) -> list[str]:
    corpus = job.corpus
    if speech and SPEECH_ERRORS in variants:
        raise ExportError(f"Job {job.id} already has a test set named {SPEECH_ERRORS}; rename that variant to add speech errors.")
    tracker = _Tracker(progress, selectors.count_export_dialogs(job) + selectors.count_job_responses(job))
    sources: list[DialogRecord] = []  # the dialogs as imported, for the speech errors
    counts = {v: {"turns_replaced": 0, "turns_without_accepted_rewrite": 0} for v in variants}
    dialogs_manifest = []
    files: list[str] = []

    with ExitStack() as stack:
        writers = {}
        for variant in variants:
            writers[variant] = writer_cls(staging / variant, corpus.meta)
            stack.callback(writers[variant].close)
        # A type that takes files reads its test-set turns from their transcriptions (spoken readings).
        with_readings = isinstance(kind, task_types.TakesUploads)
        for dialog in selectors.export_dialogs(job, with_readings=with_readings):
            records, entry = _dialog_records(dialog, kind, job.settings, variants)
            if speech or out_of_domain:
                sources.append(_source_record(dialog))
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
            counts[variant].update(writers[variant].counts())

    flagged = FlagSummary(variants)
    with open(staging / "responses.csv", "x", encoding="utf-8", newline="") as fh:
        response_records = (
            _response_record(r, flagged, kind.response_cells(r, job.settings, include_audio=include_audio))
            for r in selectors.job_responses(job, with_readings=with_readings)
        )
        raw_csv.write_responses(fh, response_records, kind.response_columns(job.settings), on_row=tracker.advance)
    files += ["responses.csv", _write_flag_records(flagged, staging)]
    speech_manifest = {}
    if speech:
        speech_files, speech_manifest = _write_speech_errors(sources, writer_cls, corpus.meta, staging, tracker, *speech)
        files += speech_files
    ood_manifest: dict = {}
    if out_of_domain:
        ood_files, ood_manifest = write_out_of_domain(sources, writer_cls, corpus.meta, staging, out_of_domain, directory_taken=variants)
        files += ood_files

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
        "selection": "Dialogs with at least one item in the job; per turn and test set the earliest accepted response "
        "(by submitted_at, then id) whose text for the set passed the vote or was not voted on; text voted down and accepted "
        "by a reviewer after all only where no other accepted response has one.",
        "variants": counts,
        "flags": flagged.as_json(),
        "dialogs": dialogs_manifest,
        **kind.manifest_extra(job.settings),
        **speech_manifest,
        **ood_manifest,
        "decision": (decision := reliability_reads.decision_of(job)),
    }
    answer_files = _write_answer_files(job, kind, staging, include_audio, flagged)
    files += [name for name, _count in answer_files.written]
    files += [*_write_worker_reliability(job, staging), "manifest.json", "README.md"]
    write_json(staging / "manifest.json", manifest)
    exports_files = task_types.capability(kind, task_types.ExportsFiles)
    text = readme.render(
        manifest=manifest, files=files, columns=kind.response_column_help(job.settings), words=kind.test_set_words(job.settings),
        file_words=answer_files.words(exports_files, job.settings),
    )
    text += reliability_files.readme_section(decision)
    (staging / "README.md").write_text(text, encoding="utf-8")
    tracker.finish()
    return files


def _write_answers_export(job, kind, staging: Path, progress, out_of_domain=None) -> list[str]:
    """The export of a job without test sets: every response, the combined items, the agreement
    (and with `out_of_domain`, that test set of the job's dialogs)."""
    fields = [f["name"] for f in kind.answer_fields(job.settings)]
    tracker = _Tracker(progress, selectors.count_job_responses(job))
    flagged = FlagSummary(task_types.free_text_fields(kind, job.settings) or fields)
    with open(staging / "responses.csv", "x", encoding="utf-8", newline="") as fh:
        records = (_response_record(r, flagged) for r in selectors.job_responses(job))
        raw_csv.write_responses(fh, records, fields, on_row=tracker.advance)
    flags_file = _write_flag_records(flagged, staging)
    combined = quality_selectors.combined_items(job)
    columns = list(dict.fromkeys(key for row in combined for key in row.combined))
    model_columns, model = reliability_reads.item_model_columns(job, [row.item_id for row in combined])  # beside the majority
    with open(staging / "items.csv", "x", encoding="utf-8", newline="") as fh:
        writer = csv_safety.Writer(fh)
        writer.writerow(["item_id", "position", "text", *columns, *model_columns, "in_subset"])
        for row in combined:
            cells = [json.dumps(v) if isinstance(v, (list, dict)) else ("" if v is None else v) for v in (row.combined.get(c) for c in columns)]
            cells += [model.get(row.item_id, {}).get(c, "") for c in model_columns]
            writer.writerow([row.item_id, row.position, row.subject, *cells, "" if row.in_subset is None else row.in_subset])
    answer_files = _write_answer_files(job, kind, staging, False, flagged)
    extra = answer_files.written
    ood_files, ood_manifest = _answers_out_of_domain(job, staging, out_of_domain)
    agreement = [a.__dict__ for a in quality_selectors.job_agreement(job)]
    manifest = {
        "job": {"id": job.id, "name": job.name, "task_type": job.task_type, "settings": job.settings, "redundancy": job.redundancy},
        "exported_at": timezone.now().isoformat(),
        "quorum_version": quorum_version(),
        "selection": "responses.csv: every confirmed response of the job's ordinary items, whatever became of it; "
        "items.csv: per item, the task type's combination of the responses that count.",
        "items": len(combined),
        "agreement": agreement,
        "flags": flagged.as_json(),
        **({"files": dict(extra)} if extra else {}),
        **ood_manifest,
        "decision": (decision := reliability_reads.decision_of(job)),
    }
    write_json(staging / "manifest.json", manifest)
    files = ["responses.csv", flags_file, "items.csv", *(name for name, _count in extra), *ood_files, *_write_worker_reliability(job, staging), "manifest.json", "README.md"]
    exports_files = task_types.capability(kind, task_types.ExportsFiles)
    relays = task_types.capability(kind, task_types.RelaysChat)
    item_words = relays.combined_column_help(job.settings) if relays else {}
    text = readme.render_answers(
        manifest=manifest, files=files, columns={f["name"]: readme.field_words(f) for f in kind.answer_fields(job.settings)},
        file_words=answer_files.words(exports_files, job.settings),
        item_columns={name: words for name, words in item_words.items() if name in columns},  # those items.csv has
    )
    text += reliability_files.readme_section(decision, model_columns)
    (staging / "README.md").write_text(text, encoding="utf-8")
    tracker.finish()
    return files


def _answers_out_of_domain(job, staging: Path, out_of_domain) -> tuple[list[str], dict]:
    """The out-of-domain set of a job without test sets of its own: the dialogs it has items in."""
    if not out_of_domain:
        return [], {}
    sources = [_source_record(dialog) for dialog in selectors.export_dialogs(job)]
    return write_out_of_domain(sources, writer_for(job.corpus.source_format), job.corpus.meta, staging, out_of_domain)


def _write_worker_reliability(job, staging: Path) -> list[str]:
    """`worker_reliability.csv` from the stored model: every export has it, empty but for its
    header before a flag run has fitted one."""
    with open(staging / reliability_files.WORKER_FILE, "x", encoding="utf-8", newline="") as fh:
        reliability_files.write_workers(fh, reliability_reads.worker_reliability_table(job))
    return [reliability_files.WORKER_FILE]


def _dialog_records(dialog, kind, settings, variants) -> tuple[dict[str, DialogRecord], dict]:
    """Each test set's version of one dialog, and its manifest entry: which turns have items, and per
    set the turns the task type's `test_set_turns` changed (a rewrite in place of the source, an
    out-of-scope turn inserted before it, the ASR hypothesis of a reading), with what the item's
    payload records (`manifest_of`)."""
    turns: dict[str, list[TurnRecord]] = {v: [] for v in variants}
    item_turns: list[int] = []
    replaced: dict[str, list[int]] = {v: [] for v in variants}
    notes = {}
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


def _source_record(dialog) -> DialogRecord:
    return DialogRecord(
        dialog.external_id, dialog.meta,
        [TurnRecord(t.index, t.speaker, t.text, t.slot_values, t.raw) for t in dialog.ordered_turns],
    )


def _write_speech_errors(sources, writer_cls, corpus_meta, staging: Path, tracker: "_Tracker", target_wer: float, seed: int):
    """RADDLE's speech errors: every user turn of the exported dialogs, as imported (not a rewrite),
    spoken, mixed with noise at the SNR searched for `target_wer`, and transcribed by the recogniser
    adapted to the corpus (annotation.speech.simulate). Writes the `speech_errors/` test set with each
    user turn replaced by its ASR text, and speech_errors.jsonl; returns the files and the manifest's part.

    Slot values that no longer occur verbatim in the ASR text are dropped from that turn (the
    importers anchor values in the text) and listed in speech_errors.jsonl as `dropped_slot_values`;
    MultiWOZ `span_info` is placed in the ASR text as a rewrite's is (`exporters.spans`).
    """
    keys = [(d.external_id, t.index) for d in sources for t in d.turns if t.speaker == "user" and t.text.strip()]
    texts = {(d.external_id, t.index): t.text for d in sources for t in d.turns}
    if not keys:
        raise ExportError("The exported dialogs have no user turns with text to add speech errors to.")
    units, base = len(keys), tracker.done
    passes = {"done": 0}
    tracker.total += units * SPEECH_ERRORS_MAX_PASSES

    def report(event: SpeechProgress):
        # One pass over all utterances per step: synthesis, the clean floor, each search step.
        if event.wer is not None or (event.stage == "synthesis" and event.done == event.total):
            passes["done"] += 1
            done = base + passes["done"] * units
        else:
            done = base + passes["done"] * units + event.done
        tracker.done = done
        if tracker.callback:
            tracker.callback(done, tracker.total)

    try:
        result = simulate(
            [(index, texts[key]) for index, key in enumerate(keys)],
            target_wer=target_wer, seed=seed, engine=settings.QUORUM_TTS_ENGINE, backend=asr_backend(),
            max_steps=SPEECH_ERRORS_SEARCH_STEPS, progress=report,
        )
    except (SimulationError, SpeechUnavailable, AsrUnavailable, AsrFailed) as exc:
        raise ExportError(f"Speech errors: {exc}") from None
    asr = {key: u.asr for key, u in zip(keys, result.utterances, strict=True)}  # in the order given

    writer = writer_cls(staging / SPEECH_ERRORS, corpus_meta)
    rows = []
    try:
        for dialog in sources:
            turns = []
            for turn in dialog.turns:
                key = (dialog.external_id, turn.index)
                if key not in asr:
                    turns.append(turn)
                    continue
                heard = asr[key]
                kept, dropped = values_heard(turn.slot_values, heard)
                turns.append(TurnRecord(turn.index, turn.speaker, heard, kept, turn.raw, source_text=turn.text))
                rows.append({
                    "dialog": dialog.external_id, "turn": turn.index, "text": turn.text, "asr": heard,
                    "wer": round(word_errors(turn.text, heard).wer, 4), **({"dropped_slot_values": dropped} if dropped else {}),
                })
            writer.add(DialogRecord(dialog.external_id, dialog.meta, turns))
        files = [f"{SPEECH_ERRORS}/{name}" for name in writer.finish()]
        spans = writer.counts()  # MultiWOZ: span_info moved into the ASR text, or left out
    finally:
        writer.close()
    with open(staging / "speech_errors.jsonl", "x", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    tracker.total = tracker.done  # the search usually stops before its last step
    manifest = {
        SPEECH_ERRORS: {
            "source": "every user turn of the exported dialogs as imported (not the rewrites)",
            "target_wer": target_wer, "wer": round(result.wer, 4), "snr_db": round(result.snr_db, 2),
            "clean_floor_wer": round(result.floor, 4), "seed": seed, "engine": settings.QUORUM_TTS_ENGINE,
            "noise": "white", "asr_backend": settings.QUORUM_ASR_BACKEND, "utterances": len(keys),
            "passes": [{"snr_db": round(snr, 2), "wer": round(rate, 4)} for snr, rate in result.steps],
            **spans,
        }
    }
    return [*files, "speech_errors.jsonl"], manifest


def _response_record(response, flagged: FlagSummary, cells=None) -> raw_csv.ResponseRecord:
    """One row of responses.csv, its answer columns `cells` (default: the stored answers); the
    response's flags are counted for the dataset card on the way."""
    worker = f"{response.worker.provider}:{response.worker.external_id}"
    flagged.add(response.status, response.checks, response_id=response.id, worker=worker)
    turn = response.item.turn
    return raw_csv.ResponseRecord(
        item_id=response.item.id,
        dialog_id=turn.dialog.external_id if turn else "",
        turn_index=turn.index if turn else None,
        source_text=turn.text if turn else "",
        worker=worker,
        answers=response.answers if cells is None else cells,
        status=response.status,
        claimed_at=response.claimed_at,
        submitted_at=response.submitted_at,
        active_seconds=response.active_seconds,
        checks=response.checks,
        response_id=response.id,
    )


FLAGS_FILE = "flags.jsonl"


def _write_flag_records(flagged: FlagSummary, staging: Path) -> str:
    """flags.jsonl: each flagged response's flags with their evidence, as data (`FlagSummary.records`),
    written even when none is flagged, so a script finds the file in every export."""
    with open(staging / FLAGS_FILE, "x", encoding="utf-8") as fh:
        for record in flagged.records:
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
    return FLAGS_FILE


class _ExportSource:
    """What a type's `answer_files` reads (`task_types.ExportSource`), and the files it copied."""

    def __init__(self, job: Job, staging: Path, include_audio: bool):
        self.job, self.staging, self.include_audio = job, staging, include_audio
        self.copied: list[str] = []

    def counted_items(self):
        return selectors.items_with_counted_answers(self.job)

    def readings(self):
        return selectors.job_readings(self.job)

    def copy_file(self, stored, name: str) -> None:
        target = self.staging / name
        target.parent.mkdir(parents=True, exist_ok=True)
        with stored.open("rb") as source, open(target, "xb") as out:
            shutil.copyfileobj(source, out)
        self.copied.append(name)


#: What a line of a type's extra file that names its response carries after the type's own keys.
RESPONSE_FLAGS_WORDS = (
    "Each line ends with `flags`: its response's flags as `flags.jsonl` words them (`code`, `name`, `evidence`), "
    "an empty list when it has none."
)


@dataclass
class _AnswerFiles:
    """What `_write_answer_files` wrote: (name, records) of each file in order, then the files it
    copied; and the files whose lines carry their response's flags."""

    written: list[tuple[str, int]] = field(default_factory=list)
    with_flags: set[str] = field(default_factory=set)

    def words(self, exports_files, settings) -> dict[str, str]:
        """The README's words for each extra file (`ExportsFiles.answer_file_words`), with its flags where it has them."""
        words = exports_files.answer_file_words(settings) if exports_files else {}
        return {name: f"{text} {RESPONSE_FLAGS_WORDS}" if name in self.with_flags else text for name, text in words.items()}


def _write_answer_files(job: Job, kind, staging: Path, include_audio: bool, flagged: FlagSummary) -> _AnswerFiles:
    """The extra files of a type that makes them (`ExportsFiles`: QA pairs, readings), one JSON
    record a line; then the files it copied. A line that names its response (`response_id`: a
    reading) ends with that response's flags, as `flags.jsonl` has them (`flagged`, filled by
    responses.csv): appended, so a reader of the type's own keys reads them as before."""
    exports_files = task_types.capability(kind, task_types.ExportsFiles)
    out = _AnswerFiles()
    if exports_files is None:
        return out
    flags_of = {record["response_id"]: record["flags"] for record in flagged.records}
    source = _ExportSource(job, staging, include_audio)
    for name, records in exports_files.answer_files(source, job.settings).items():
        with open(staging / name, "x", encoding="utf-8") as fh:
            for record in records:
                if "response_id" in record and "flags" not in record:
                    record = {**record, "flags": flags_of.get(record["response_id"], [])}
                    out.with_flags.add(name)
                fh.write(json.dumps(record, ensure_ascii=False) + "\n")
        out.written.append((name, len(records)))
    out.written += [(name, 1) for name in source.copied]
    return out


# --- background runs -----------------------------------------------------------------------------


def export_directory(run: ExportRun) -> Path:
    return Path(settings.QUORUM_EXPORT_DIR) / f"job-{run.job_id}" / f"run-{run.id}"


def create_export_run(
    job: Job, created_by=None, *, include_audio: bool = False, speech_errors_wer: float | None = None, speech_errors_seed: int = 0,
    out_of_domain: OutOfDomain | None = None,
) -> ExportRun:
    """Record a pending export run of `job` (ExportError if the job cannot be exported); the caller queues it."""
    check_exportable(job)
    check_speech_errors_wer(speech_errors_wer, job)
    check_out_of_domain(job, out_of_domain)
    if isinstance(task_types.get(job.task_type), task_types.ExportsTestSets):
        job_test_sets(job)  # refuse bad settings now rather than in the background
    if not isinstance(speech_errors_seed, int) or isinstance(speech_errors_seed, bool) or speech_errors_seed < 0:
        raise ExportError(f"The speech-error seed must be a whole number of 0 or more; got {speech_errors_seed!r}.")
    return ExportRun.objects.create(
        job=job, created_by=created_by, include_audio=include_audio,
        speech_errors_wer=speech_errors_wer, speech_errors_seed=speech_errors_seed,
        **({} if out_of_domain is None else {
            "out_of_domain_corpus_id": out_of_domain.corpus_id, "out_of_domain_rate": out_of_domain.rate,
            "out_of_domain_seed": out_of_domain.seed, "out_of_domain_mode": out_of_domain.mode,
        }),
    )


def run_out_of_domain(run: ExportRun) -> OutOfDomain | None:
    """The run's out-of-domain option; one whose corpus was deleted since is refused when it runs."""
    if run.out_of_domain_rate is None:
        return None
    if run.out_of_domain_corpus_id is None:
        raise ExportError("The corpus chosen for the out-of-domain utterances was deleted; start a new export.")
    return OutOfDomain(run.out_of_domain_corpus_id, run.out_of_domain_rate, run.out_of_domain_seed, run.out_of_domain_mode)


class ExportUnderWay(ExportError):
    """Refused because the export `run` is under way: a conflict to wait out, not a request to fix
    (the API answers 409 naming the run; the page shows the message as for any refusal)."""

    def __init__(self, message: str, run: ExportRun):
        super().__init__(message)
        self.run = run


def _speech_errors_under_way(job: Job, include_audio: bool, speech_errors_wer, speech_errors_seed) -> ExportRun | None:
    """A speech-error export costs minutes of CPU (synthesis and recognition of every user turn):
    one at a time per job. The same request again gets the run under way (None: go ahead); a
    different one is refused until it ends. Called under the job's row lock."""
    under_way = ExportRun.objects.filter(
        job=job, speech_errors_wer__isnull=False, status__in=(RunStatus.PENDING, RunStatus.RUNNING)
    ).order_by("pk").first()
    if under_way is None:
        return None
    if (under_way.speech_errors_wer, under_way.speech_errors_seed, under_way.include_audio) == (
        speech_errors_wer, speech_errors_seed, include_audio
    ):
        return under_way
    raise ExportUnderWay(
        f"A speech-error export of this job is under way (run {under_way.pk}, {under_way.status}); "
        "start another when it has finished.",
        under_way,
    )


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

    def progress(done: int, total: int) -> None:
        runs.update(done=done, total=total)

    try:
        if target.exists():
            shutil.rmtree(target)
        files = export_job(
            run.job, target, progress=progress, include_audio=run.include_audio,
            speech_errors_wer=run.speech_errors_wer, speech_errors_seed=run.speech_errors_seed, out_of_domain=run_out_of_domain(run),
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


def _same_export_pending(job: Job, include_audio: bool, out_of_domain: OutOfDomain | None, speech_errors: dict) -> ExportRun | None:
    """A run of the same export not started yet (None: go ahead). Only a pending one: a running
    export may have read the data before the latest responses, so asking again makes a new run.
    Called under the job's row lock."""
    ood: dict[str, object] = {"out_of_domain_rate": None} if out_of_domain is None else {
        "out_of_domain_corpus_id": out_of_domain.corpus_id, "out_of_domain_rate": out_of_domain.rate,
        "out_of_domain_seed": out_of_domain.seed, "out_of_domain_mode": out_of_domain.mode,
    }
    return ExportRun.objects.filter(
        job=job, status=RunStatus.PENDING, include_audio=include_audio,
        speech_errors_wer=speech_errors.get("speech_errors_wer"), speech_errors_seed=speech_errors.get("speech_errors_seed", 0), **ood,
    ).order_by("pk").first()


def start_export(job: Job, created_by=None, *, include_audio: bool = False, out_of_domain: OutOfDomain | None = None, **speech_errors) -> ExportRun:
    """Record an export run of `job` (ExportError if it cannot be exported) and queue it on commit
    (the API, the job page and the demo start exports here). Where tasks run in-process
    (development, tests, QUORUM_TASKS_INLINE) the export runs at the commit: refresh the run to see
    its outcome. A speech-error export is one at a time per job, a repeated request answered with
    the run under way (`_speech_errors_under_way`); any export asked again before it has started is
    answered with the run already queued (`_same_export_pending`)."""
    with transaction.atomic():
        Job.objects.select_for_update().filter(pk=job.pk).first()
        if speech_errors.get("speech_errors_wer") is not None:
            same = _speech_errors_under_way(job, include_audio, speech_errors["speech_errors_wer"], speech_errors.get("speech_errors_seed", 0))
            if same is not None:
                return same  # asked twice: the run already queued, not a second one
        pending = _same_export_pending(job, include_audio, out_of_domain, speech_errors)
        if pending is not None:
            return pending  # a double click or a retried call: the run already queued reads the data when it starts
        run = create_export_run(job, created_by=created_by, include_audio=include_audio, out_of_domain=out_of_domain, **speech_errors)
        # The broker down: the run says so on its row (and the page), and the lost-work sweep queues it again.
        after_commit("annotation.tasks_exports.run_export", run.pk, on_refused=lambda: note_refused(run))
    return run
