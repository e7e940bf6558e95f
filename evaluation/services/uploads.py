"""Imports from uploaded files (organizer pages and the API): the same services as the commands,
fed from a temporary folder.

An upload is unpacked or saved under a temporary folder and handed to the path-based import in
`imports`, which checks everything before it writes, in one transaction. Its messages name the
temporary path; `_member_names` rewrites them to the name inside the archive (or the uploaded
file's role), because a server path tells the organizer nothing and reveals the server's layout.
"""
from __future__ import annotations

import contextlib
import tempfile
import zipfile
from pathlib import Path

from ..models import Campaign, TestSet
from .imports import BASELINE_TEAMS, EvaluationInputError, import_entries, import_human_eval, import_test_set, import_test_set_logs

MAX_ARCHIVE_BYTES = 200 * 1024 * 1024  # uncompressed; larger material goes through the commands
TEST_SET_FILES = ("labels.json", "knowledge.json", "logs.json")


@contextlib.contextmanager
def _member_names(root: Path):
    """Errors raised inside name archive members, not the temporary folder they were unpacked to."""
    try:
        yield
    except EvaluationInputError as exc:
        message = str(exc).replace(f"{root}/", "").replace(str(root), "the archive")
        raise EvaluationInputError(message) from None


@contextlib.contextmanager
def unpacked_archive(fileobj, what="the file"):
    """Unpack an uploaded .zip into a temporary folder and yield that folder; removed afterwards.

    Refuses a file that is not a zip, one that unpacks to more than MAX_ARCHIVE_BYTES, and members
    that would land outside the folder ("../", absolute paths), before anything is extracted.
    """
    try:
        archive = zipfile.ZipFile(fileobj)
    except zipfile.BadZipFile:
        raise EvaluationInputError(f"{what} is not a .zip archive") from None
    members = archive.infolist()
    if sum(m.file_size for m in members) > MAX_ARCHIVE_BYTES:
        raise EvaluationInputError(f"{what} unpacks to more than {MAX_ARCHIVE_BYTES // (1024 * 1024)} MB; use the manage.py command")
    with tempfile.TemporaryDirectory(prefix="quorum-upload-") as tmp:
        root = Path(tmp).resolve()
        for member in members:
            if not (root / member.filename).resolve().is_relative_to(root):
                raise EvaluationInputError(f"the archive member {member.filename!r} points outside the archive")
        try:
            archive.extractall(root)
        except (zipfile.BadZipFile, OSError, EOFError) as exc:  # a damaged member: CRC or truncated data
            raise EvaluationInputError(f"{what} cannot be unpacked ({exc})") from None
        with _member_names(root):
            yield root


def _save(upload, folder: Path, name: str) -> Path:
    """Write an uploaded file into `folder` under the fixed `name`, so messages name its role."""
    path = folder / name
    if getattr(upload, "size", 0) > MAX_ARCHIVE_BYTES:
        raise EvaluationInputError(f"{name} is larger than {MAX_ARCHIVE_BYTES // (1024 * 1024)} MB; use the manage.py command")
    if hasattr(upload, "seek"):
        upload.seek(0)
    with path.open("wb") as handle:
        for chunk in iter(lambda: upload.read(1024 * 1024), b""):
            handle.write(chunk)
    return path


@contextlib.contextmanager
def _saved_uploads(**uploads):
    """Save each given upload (name -> file or None) into one temporary folder; yield {name: path}."""
    with tempfile.TemporaryDirectory(prefix="quorum-upload-") as tmp:
        root = Path(tmp).resolve()
        with _member_names(root):
            yield {name: _save(upload, root, name) for name, upload in uploads.items() if upload is not None}


def _find_test_set_files(root: Path) -> dict:
    """labels.json, knowledge.json and logs.json anywhere in an unpacked archive (DSTC9 keeps
    knowledge.json beside the test folder); each at most once, labels.json required."""
    found = {}
    for name in TEST_SET_FILES:
        paths = sorted(p for p in root.rglob(name) if p.is_file() and "__MACOSX" not in p.parts)
        if len(paths) > 1:
            listed = ", ".join(p.relative_to(root).as_posix() for p in paths)
            raise EvaluationInputError(f"the archive holds {name} more than once ({listed}); keep one")
        if paths:
            found[name] = paths[0]
    if "labels.json" not in found:
        raise EvaluationInputError("the archive has no labels.json")
    return found


def import_test_set_upload(challenge: str, name: str, labels=None, knowledge=None, logs=None, archive=None) -> TestSet:
    """A test set from uploaded labels.json (+ knowledge.json, logs.json), or from one .zip holding
    them; `import_test_set` checks and writes it in one transaction."""
    if (archive is None) == (labels is None):
        raise EvaluationInputError("give either labels.json (with knowledge.json and logs.json if you have them) or one .zip holding them")
    if archive is not None and (knowledge is not None or logs is not None):
        raise EvaluationInputError("with a .zip, put knowledge.json and logs.json inside it")
    if archive is not None:
        with unpacked_archive(archive) as root:
            found = _find_test_set_files(root)
            return import_test_set(challenge, name, found["labels.json"], found.get("knowledge.json"), found.get("logs.json"))
    with _saved_uploads(**{"labels.json": labels, "knowledge.json": knowledge, "logs.json": logs}) as paths:
        return import_test_set(challenge, name, paths["labels.json"], paths.get("knowledge.json"), paths.get("logs.json"))


def import_test_set_logs_upload(test_set: TestSet, logs) -> TestSet:
    """Add (or replace) the dialog contexts of a test set from an uploaded logs.json."""
    with _saved_uploads(**{"logs.json": logs}) as paths:
        return import_test_set_logs(test_set, paths["logs.json"])


def import_entries_upload(test_set: TestSet, archive, scores=None, baseline_teams=BASELINE_TEAMS, ground_truth=False) -> dict:
    """Entries from a .zip whose top level holds the team folders (<team>/<entry>.json), with an
    optional objective scores CSV: `import_entries` takes both in one transaction, all or nothing."""
    with unpacked_archive(archive) as root, _saved_uploads(**{"score.csv": scores}) as paths:
        entries = import_entries(
            test_set, root, baseline_teams=tuple(baseline_teams) or BASELINE_TEAMS, scores_path=paths.get("score.csv"), ground_truth=ground_truth
        )
    return {"entries": len(entries), "labels": [e.label for e in entries], "scores": scores is not None, "ground_truth": ground_truth}


def import_human_eval_archive(campaign: Campaign, fileobj, replace=False) -> dict:
    """`import_human_eval` from a .zip whose top level holds the team folders; all or nothing."""
    with unpacked_archive(fileobj) as root:
        return import_human_eval(campaign, root, replace=replace)
