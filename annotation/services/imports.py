"""Import a corpus into Quorum: all or nothing, streamed, in batches.

`import_corpus` reads the source files with the format's reader (annotation.importers), which
validates every dialog, and writes corpus, dialogs and turns in ONE transaction: a malformed
dialog anywhere in the file raises `ImportFailed` and leaves the database as it was.
`start_import` (for the API, the pages and the demo; uploads go through `import_uploads` first)
checks what is cheap to check, writes an `ImportRun` row and queues `annotation.tasks.run_import`
on commit, which calls `import_corpus` and keeps the row's progress and outcome up to date.
Services never import tasks: the task is queued by name (`quorum.background`).
"""
from __future__ import annotations

import contextlib
import logging
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, IntegrityError, connection, connections, transaction
from django.db.backends.base.operations import BaseDatabaseOperations
from django.utils import timezone

from annotation.importers import READERS, FormatError
from annotation.importers.archives import corpus_member, extract_corpus_member
from annotation.models import BackgroundRun, Corpus, Dialog, ImportRun, RunStatus, SourceFormat, Turn
from annotation.text.languages import LanguageSample, LanguageTagError, stated_tag
from quorum.background import task_named

from .bulk import cyclic_gc_paused, encode_json, refresh_statistics

logger = logging.getLogger(__name__)

# Dialogs written per batch: large enough to amortise the queries, small enough that a batch of
# MultiWOZ dialogs with their belief states stays near 100 MB in memory.
BATCH_DIALOGS = 1000
NAME_MAX_LENGTH: int = Corpus._meta.get_field("name").max_length or 0

Progress = Callable[[int, int], None]

#: What the import's language field is, for the upload form, the API and the command alike.
LANGUAGE_HELP = (
    'Optional: the language of the corpus\'s text, a BCP 47 tag such as "zh" (Chinese) or "en" (English); work and '
    "review pages mark its text and the answer boxes with it, for fonts, line breaking and screen readers. Left empty, "
    "it is found from the text's script (mostly Chinese characters: zh; Latin letters: en; a script that names no one "
    "language: und), and an organizer can correct it afterwards on the corpus's admin page."
)


class ImportFailed(Exception):
    """The import was refused; the message names the file, the place in it and the reason.
    `field`, when given, is the file role (or request field) the refusal is about."""

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class ImportSummary:
    dialogs: int
    turns: int
    user_turns: int
    slot_values: int


def import_corpus(
    *,
    name: str,
    source_format: str,
    files: Mapping[str, Path | str],
    created_by=None,
    progress: Progress | None = None,
    run: ImportRun | None = None,
    language: str = "",
) -> Corpus:
    """Create corpus `name` from `files` ({"data": ..., "labels": ..., "knowledge": ...}).

    `language` (a BCP 47 tag; else the one `run` was asked with) is the corpus's language; when
    none is stated it is found from the text's script (`annotation.text.languages`).

    `progress(done, total)` is called after every batch, in bytes of the data file read. When
    `run` is given it is marked succeeded in the same transaction that writes the corpus, so a
    committed corpus never has a run still shown as running. The returned corpus carries an
    `import_summary` (an ImportSummary) with what was written.
    """
    name = _check_name(name)
    stated = _check_language(language or (run.language if run is not None else ""))
    reader_class = _reader_class(source_format)
    paths = _check_files(reader_class, files)
    try:
        with _unzipped(paths, progress) as (readable, progress), reader_class(readable) as reader, transaction.atomic():
            # Checked again inside the transaction: the unique constraint is the last word.
            if Corpus.objects.filter(name=name).exists():
                raise ImportFailed(f'A corpus named "{name}" already exists; choose another name.')
            corpus = Corpus.objects.create(
                name=name, source_format=source_format, meta=reader.corpus_meta, created_by=created_by, language=stated or "en"
            )
            sample = None if stated else LanguageSample()
            summary = _write_dialogs(corpus, reader, progress, sample)
            if summary.dialogs == 0:
                raise ImportFailed(f"{reader.data_name}: no dialogs found; an empty corpus cannot be imported")
            if sample is not None:
                corpus.language = sample.language()
                corpus.save(update_fields=["language"])
            if run is not None:
                _mark_succeeded(run, corpus, reader.total_bytes)
    except FormatError as exc:
        raise ImportFailed(str(exc)) from None
    except OSError as exc:
        raise ImportFailed(f"{Path(exc.filename or '').name or 'file'}: could not be read ({exc.strerror})") from None
    except IntegrityError:
        if Corpus.objects.filter(name=name).exists():
            raise ImportFailed(f'A corpus named "{name}" already exists; choose another name.') from None
        raise
    refresh_statistics(summary.turns, Dialog, Turn)  # a job over the corpus is planned on fresh statistics
    corpus.import_summary = summary  # type: ignore[attr-defined]  # handed to the caller on the instance, not stored
    return corpus


@contextlib.contextmanager
def _unzipped(paths: dict[str, Path], progress: Progress | None) -> Iterator[tuple[dict[str, Path], Progress | None]]:
    """`paths` with a zipped data file replaced by its one corpus member, copied out a chunk at a
    time into a temporary folder of QUORUM_IMPORT_DIR (removed afterwards); `paths` as they are
    when the data file is not a zip. The reader's messages name the member inside its zip.

    With the paths comes the progress the reader reports to: for a zip, unpacking is the first
    half of the bar and reading the second (both count the member's bytes), so a large zip's
    bar moves while it is unpacked."""
    zipped = paths["data"]
    member = _archive_member(zipped)
    if member is None:
        yield paths, progress
        return
    folder = Path(settings.QUORUM_IMPORT_DIR)
    folder.mkdir(parents=True, exist_ok=True)
    size = member.file_size
    unpacked = None if progress is None else (lambda copied: progress(copied, 2 * size))
    read = None if progress is None else (lambda done, total: progress(size + done, size + total))
    with tempfile.TemporaryDirectory(prefix="unzipped-", dir=folder) as tmp:
        data = extract_corpus_member(zipped, member, Path(tmp), unpacked)
        inside = f"{member.filename} (in {zipped.name})"
        try:
            yield {**paths, "data": data}, read
        except FormatError as exc:
            raise FormatError(str(exc).replace(data.name, inside, 1)) from None
        except ImportFailed as exc:
            raise ImportFailed(str(exc).replace(data.name, inside, 1), field=exc.field) from None


def _archive_member(path: Path):
    """The corpus member of a zipped data file (None when it is not a zip); ImportFailed, about the
    data file, when the zip cannot be imported."""
    try:
        return corpus_member(path)
    except FormatError as exc:
        raise ImportFailed(str(exc), field="data") from None


def create_import_run(
    *, name: str, source_format: str, files: Mapping[str, Path | str], created_by=None, language: str = ""
) -> ImportRun:
    """Check the request and record a pending ImportRun; the caller queues the task for it.

    Raises ImportFailed for a taken name, a language that is not a BCP 47 tag, an unknown format
    or a missing file. The structure of the files is checked by the task, whose outcome (and
    progress) is on the run row. An empty `language`: the task finds it from the text.
    """
    name = _check_name(name)
    language = _check_language(language)
    reader_class = _reader_class(source_format)
    paths = _check_files(reader_class, files)
    _archive_member(paths["data"])  # the zip's listing, read at once: refused before a run is recorded
    with transaction.atomic():
        if Corpus.objects.filter(name=name).exists():
            raise ImportFailed(f'A corpus named "{name}" already exists; choose another name.')
        if ImportRun.objects.filter(corpus_name=name, status__in=[RunStatus.PENDING, RunStatus.RUNNING]).exists():
            raise ImportFailed(f'A corpus named "{name}" is already being imported; wait for it or choose another name.')
        return ImportRun.objects.create(
            corpus_name=name,
            source_format=source_format,
            files={role: str(path) for role, path in paths.items()},
            created_by=created_by,
            language=language,
        )


# -- the run row, for annotation.tasks.run_import and start_import --------------
def begin_run(run_id: int) -> ImportRun | None:
    """Mark a run as running and return it; None if it is gone or already finished.

    A run found "running" is started again: with acks_late a task whose worker died is
    delivered again, and the dead attempt's transaction was rolled back, so nothing was written.
    """
    claimed = ImportRun.objects.filter(pk=run_id, status__in=[RunStatus.PENDING, RunStatus.RUNNING]).update(
        status=RunStatus.RUNNING, started_at=timezone.now(), done=0, error=""
    )
    if not claimed:
        return None
    return ImportRun.objects.select_related("created_by").get(pk=run_id)


def fail_run(run: ImportRun, message: str) -> None:
    """Record why a run failed (nothing was imported: the import's transaction rolled back), and
    remove its uploaded files: nobody can import them again, and failures must not fill the disk."""
    remove_uploads(run.files)
    run.status = RunStatus.FAILED
    run.error = message
    run.finished_at = timezone.now()
    ImportRun.objects.filter(pk=run.pk).update(
        status=run.status, error=run.error, finished_at=run.finished_at, done=run.done, total=run.total
    )


class RunProgress:
    """A progress callback that publishes a run's done/total while the import runs (an ImportRun,
    or any `BackgroundRun` whose work writes in one transaction).

    The import writes in one transaction, so progress saved on the same connection would stay
    invisible until the end (and vanish with a rollback). On PostgreSQL the figures go through a
    second connection in autocommit. SQLite allows one writer at a time, so there they are kept
    on the run object and written when the run finishes.
    """

    def __init__(self, run: BackgroundRun):
        self.run = run
        self._conn = None
        if connection.vendor == "postgresql":
            self._conn = connections.create_connection(DEFAULT_DB_ALIAS)

    def __call__(self, done: int, total: int) -> None:
        self.run.done, self.run.total = done, total
        if self._conn is None:
            return
        table = self._conn.ops.quote_name(type(self.run)._meta.db_table)
        with self._conn.cursor() as cursor:
            cursor.execute(f"UPDATE {table} SET done = %s, total = %s WHERE id = %s", [done, total, self.run.pk])  # noqa: S608 - table name from the model

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


# -- internals ---------------------------------------------------------------------------------
def _check_name(name) -> str:
    if not isinstance(name, str) or not name.strip():
        raise ImportFailed("The corpus needs a name.")
    name = name.strip()
    if len(name) > NAME_MAX_LENGTH:
        raise ImportFailed(f"The corpus name is longer than {NAME_MAX_LENGTH} characters.")
    return name


def _check_language(language: str) -> str:
    """A stated language in its usual case ("" when none is stated); ImportFailed, about the
    language field, when it is not a BCP 47 tag."""
    try:
        return stated_tag(language)
    except LanguageTagError as exc:
        raise ImportFailed(str(exc), field="language") from None


def _reader_class(source_format: str):
    reader_class = READERS.get(source_format)
    if reader_class is None:
        known = ", ".join(SourceFormat.values)
        raise ImportFailed(f'Unknown format "{source_format}"; use one of: {known}.')
    return reader_class


def _check_files(reader_class, files: Mapping[str, Path | str]) -> dict[str, Path]:
    allowed = ("data", *reader_class.optional_roles)
    unknown = [role for role, path in files.items() if path and role not in allowed]
    if unknown:
        raise ImportFailed(
            f"{reader_class.label} takes no {', '.join(unknown)} file; it takes: {', '.join(allowed)}."
        )
    if not files.get("data"):
        raise ImportFailed(f"{reader_class.label}: the data file is required.")
    paths = {}
    for role, path in files.items():
        if not path:
            continue
        path = Path(path).resolve()
        if not path.is_file():
            raise ImportFailed(f"The {role} file {path.name} does not exist or is not a file.")
        paths[role] = path
    return paths


def _write_dialogs(corpus: Corpus, reader, progress: Progress | None, sample: LanguageSample | None) -> ImportSummary:
    with cyclic_gc_paused():
        return _write_all(corpus, reader, progress, sample)


def _write_all(corpus: Corpus, reader, progress: Progress | None, sample: LanguageSample | None) -> ImportSummary:
    counts = {"dialogs": 0, "turns": 0, "user_turns": 0, "slot_values": 0}
    total = reader.total_bytes
    reported = None

    def report(done: int) -> None:
        nonlocal reported
        if progress is not None and done != reported:  # the parser may have read to the end already
            reported = done
            progress(done, total)

    report(0)
    batch = []
    for record in reader.dialogs():
        if sample is not None and not sample.full:  # the corpus's first turns tell its script
            for turn in record.turns:
                sample.add(turn.text)
        batch.append(record)
        if len(batch) == BATCH_DIALOGS:
            _write_batch(corpus, batch, counts)
            batch = []
            report(reader.bytes_read())
    if batch:
        _write_batch(corpus, batch, counts)
    report(total)
    return ImportSummary(**counts)


def _write_batch(corpus: Corpus, records: list, counts: dict) -> None:
    # A corpus is written with one executemany per table and batch rather than through model
    # instances, which cost several times more (MultiWOZ: 10,000 dialogs, 140,000 turns). The
    # values are adapted as the JSONField adapts them, so the rows are the same.
    start = counts["dialogs"]
    to_json = _json_adapter()
    with connection.cursor() as cursor:
        cursor.executemany(
            _insert_sql(Dialog, ("corpus", "external_id", "position", "meta")),
            [
                (corpus.pk, record.external_id, start + offset, to_json(record.meta))
                for offset, record in enumerate(records)
            ],
        )
    dialog_ids = list(
        Dialog.objects.filter(corpus=corpus, position__gte=start).order_by("position").values_list("pk", flat=True)
    )
    rows, user_turns, slot_values = _turn_rows(dialog_ids, records, to_json)
    with connection.cursor() as cursor:
        cursor.executemany(_insert_sql(Turn, ("dialog", "index", "speaker", "text", "slot_values", "raw")), rows)
    counts["dialogs"] += len(records)
    counts["turns"] += len(rows)
    counts["user_turns"] += user_turns
    counts["slot_values"] += slot_values


def _turn_rows(dialog_ids: list, records: list, to_json) -> tuple[list, int, int]:
    empty_list, empty_dict = to_json([]), to_json({})
    rows = []
    user_turns = slot_values = 0
    for dialog_id, record in zip(dialog_ids, records, strict=True):
        for index, turn in enumerate(record.turns):
            values = turn.slot_values
            if turn.speaker == "user":
                user_turns += 1
            if values:
                slot_values += len(values)
            rows.append(
                (
                    dialog_id,
                    index,
                    turn.speaker,
                    turn.text,
                    to_json(values) if values else empty_list,
                    to_json(turn.raw) if turn.raw else empty_dict,
                )
            )
    return rows, user_turns, slot_values


def _json_adapter():
    """value -> what the backend's JSONField would bind for it."""
    if type(connection.ops).adapt_json_value is BaseDatabaseOperations.adapt_json_value:
        return encode_json  # the default adaptation is json.dumps (SQLite among others)
    adapt = connection.ops.adapt_json_value
    return lambda value: adapt(value, None)


def _insert_sql(model, fields: tuple) -> str:
    quote = connection.ops.quote_name
    columns = ", ".join(quote(model._meta.get_field(name).column) for name in fields)
    placeholders = ", ".join(["%s"] * len(fields))
    return f"INSERT INTO {quote(model._meta.db_table)} ({columns}) VALUES ({placeholders})"  # noqa: S608


def _mark_succeeded(run: ImportRun, corpus: Corpus, total: int) -> None:
    run.status = RunStatus.SUCCEEDED
    run.corpus = corpus
    run.done = run.total = total
    run.error = ""
    run.finished_at = timezone.now()
    run.save(update_fields=["status", "corpus", "done", "total", "error", "finished_at"])


def remove_uploads(files: Mapping[str, Path | str]) -> None:
    """Remove the upload folders (`QUORUM_IMPORT_DIR/<uuid>/`) that hold `files`.

    Only uploads are removed: a file given by path from elsewhere (the command, the demo) is the
    caller's, and stays.
    """
    import_dir = Path(settings.QUORUM_IMPORT_DIR).resolve()
    for path in files.values():
        try:
            relative = Path(path).resolve().relative_to(import_dir)
        except ValueError:
            continue  # not an upload
        if len(relative.parts) > 1:
            shutil.rmtree(import_dir / relative.parts[0], ignore_errors=True)


def fail_unqueued_run(run_id: int, exc: BaseException) -> None:
    """Record that a pending run could not be queued (broker down): it fails with the reason."""
    run = ImportRun.objects.filter(pk=run_id).only("files").first()
    if run is not None:
        remove_uploads(run.files)
    ImportRun.objects.filter(pk=run_id, status=RunStatus.PENDING).update(
        status=RunStatus.FAILED,
        error=f"The import could not be queued ({exc.__class__.__name__}); nothing was imported. Try again later.",
        finished_at=timezone.now(),
    )


def start_import(
    *, name: str, source_format: str, files: Mapping[str, Path | str], created_by=None, language: str = ""
) -> ImportRun:
    """Record an import run (ImportFailed if refused) and queue its task once the run is committed.

    Returns the run; its row shows progress and outcome. Where tasks run in-process (development,
    tests, QUORUM_TASKS_INLINE) the import runs at the commit, at once outside a transaction.
    `language`: the corpus's BCP 47 tag as the builder states it; empty: found from the text.
    """
    run = create_import_run(name=name, source_format=source_format, files=files, created_by=created_by, language=language)
    transaction.on_commit(lambda: _enqueue(run.pk))
    return run


def _enqueue(run_id: int) -> None:
    """Queue the import task. If it cannot be queued (broker down), say so on the run."""
    try:
        task_named("annotation.tasks.run_import").delay(run_id)
    except Exception as exc:  # noqa: BLE001 - any failure to queue must show on the run row
        logger.exception("import run %s could not be queued", run_id)
        fail_unqueued_run(run_id, exc)
