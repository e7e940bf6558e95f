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
from pathlib import Path

from django.db import transaction

from evaluation.campaigns.dstc9 import HUMAN_EVAL_SUFFIX
from evaluation.campaigns.services.imports import (
    BASELINE_TEAMS,
    check_ids,
    import_entries,
    import_human_eval,
    import_test_set,
    import_test_set_knowledge,
    import_test_set_logs,
)
from evaluation.errors import EvaluationInputError
from evaluation.models import Campaign, Entry, TestSet
from quorum.archives import ArchiveError, copy_member, open_archive, unpacking_plan

MAX_ARCHIVE_BYTES = 200 * 1024 * 1024  # uncompressed; larger material goes through the commands
TEST_SET_FILES = ("labels.json", "knowledge.json", "logs.json")


@contextlib.contextmanager
def _member_names(root: Path):
    """Errors raised inside name archive members, not the temporary folder they were unpacked to."""
    try:
        yield
    except EvaluationInputError as exc:
        message = str(exc).replace(f"{root}/", "").replace(str(root), "the archive")
        raise type(exc)(message) from None  # the same kind: RatingsAlreadyImported asks for another fix


@contextlib.contextmanager
def _archive_errors():
    """The shared zip checks' refusals (quorum.archives) as this app's input errors."""
    try:
        yield
    except ArchiveError as exc:
        raise EvaluationInputError(str(exc)) from None


@contextlib.contextmanager
def unpacked_archive(fileobj, what="the file"):
    """Unpack an uploaded .zip into a temporary folder and yield that folder; removed afterwards.

    Every evaluation zip upload goes through here (the checks are `quorum.archives`, which a zipped
    corpus shares). Before anything is extracted it refuses: a file that is
    not a zip, one that unpacks to more than MAX_ARCHIVE_BYTES, a member that would land outside
    the folder ("../", absolute paths), an encrypted member, a compression method Python cannot
    read, a symbolic link (it could lead a later member anywhere), a name used twice or both as a
    file and as a folder. Then each member is copied out on its own, so a member whose data does
    not match its header (a CRC error, a size that lies) is refused with its name. Messages name
    archive members, never the temporary folder.
    """
    archive, plan = _checked_listing(fileobj, what)
    with tempfile.TemporaryDirectory(prefix="quorum-upload-") as tmp:
        root = Path(tmp).resolve()
        for parts, member in plan:
            target = root.joinpath(*parts)
            if not target.resolve().is_relative_to(root):
                raise EvaluationInputError(f"the archive member {member.filename!r} points outside the archive")
            if member.is_dir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            with _archive_errors(), target.open("xb") as out:
                copy_member(archive, member, out)
        with _member_names(root):
            yield root


def _checked_listing(fileobj, what: str):
    """(open ZipFile, unpacking plan) once the archive's listing passed every check that needs no
    member's data (see `unpacked_archive`); EvaluationInputError otherwise."""
    with _archive_errors():
        archive, members = open_archive(fileobj, what)
    if sum(m.file_size for m in members) > MAX_ARCHIVE_BYTES:
        raise EvaluationInputError(f"{what} unpacks to more than {MAX_ARCHIVE_BYTES // (1024 * 1024)} MB; use the manage.py command")
    with _archive_errors():
        return archive, unpacking_plan(members)


def check_human_eval_listing(fileobj, what="the file") -> None:
    """Refuse at once a human-evaluation upload whose listing alone shows it cannot be imported:
    not a zip, too large, a member `unpacked_archive` would refuse, no
    <team>/<entry>.human_eval.json at its top level, or a team or entry name too long to store.
    Reads the zip's directory only (milliseconds), then rewinds; the members' contents are checked
    by the import itself."""
    archive, plan = _checked_listing(fileobj, what)
    archive.close()
    fileobj.seek(0)
    evaluations = [parts for parts, member in plan if len(parts) == 2 and parts[1].endswith(HUMAN_EVAL_SUFFIX) and not member.is_dir()]
    if not evaluations:
        raise EvaluationInputError(
            f"{what} holds no <team>/<entry>{HUMAN_EVAL_SUFFIX} at its top level: zip the team folders "
            f"(<team>/<entry>.json beside <team>/<entry>{HUMAN_EVAL_SUFFIX}), not the folder that holds them"
        )
    for team_id, name in evaluations:
        check_ids(team_id, name[: -len(HUMAN_EVAL_SUFFIX)], f"{team_id}/{name}")


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


def import_test_set_logs_upload(test_set: TestSet, logs=None, knowledge=None) -> TestSet:
    """Add (or replace) the dialog contexts (logs.json) and/or the reference knowledge
    (knowledge.json) of an existing test set, in one transaction."""
    if logs is None and knowledge is None:
        raise EvaluationInputError("give logs.json, knowledge.json or both")
    with transaction.atomic(), _saved_uploads(**{"logs.json": logs, "knowledge.json": knowledge}) as paths:
        if "knowledge.json" in paths:
            test_set = import_test_set_knowledge(test_set, paths["knowledge.json"])
        if "logs.json" in paths:
            test_set = import_test_set_logs(test_set, paths["logs.json"])
        return test_set


def import_entries_upload(test_set: TestSet, archive, scores=None, baseline_teams=BASELINE_TEAMS, ground_truth=False) -> dict:
    """Entries from a .zip whose top level holds the team folders (<team>/<entry>.json), with an
    optional objective scores CSV: `import_entries` takes both in one transaction, all or nothing."""
    with unpacked_archive(archive) as root, _saved_uploads(**{"score.csv": scores}) as paths:
        return import_entries_summary(
            test_set, root, baseline_teams=tuple(baseline_teams) or BASELINE_TEAMS, scores_path=paths.get("score.csv"), ground_truth=ground_truth
        )


def import_entries_summary(test_set: TestSet, directory, baseline_teams=BASELINE_TEAMS, scores_path=None, ground_truth=False) -> dict:
    """`import_entries`, and what it added as the page, the API and the command say it (`entries_imported_text`)."""
    without_outputs = Entry.objects.filter(test_set=test_set, outputs__isnull=True)
    before = without_outputs.count()
    entries = import_entries(test_set, directory, baseline_teams=baseline_teams, scores_path=scores_path, ground_truth=ground_truth)
    return {
        "entries": len(entries), "labels": [e.label for e in entries], "scores": scores_path is not None, "ground_truth": ground_truth,
        "scored_only": max(0, without_outputs.count() - before),  # entries the score file named, known by scores alone
    }


def entries_imported_text(summary: dict) -> str:
    """What an entries import added, in words: the entries with outputs, and those a score file named without outputs."""
    scores = " and their objective scores" if summary["scores"] else ""
    listed = ", ".join(summary["labels"])
    more = summary.get("scored_only", 0)
    extra = (
        f" The scores also named {more} entr{'y' if more == 1 else 'ies'} without outputs (ranked, never finalists)." if more else ""
    )
    return f"Imported {summary['entries']} entr{'y' if summary['entries'] == 1 else 'ies'} with outputs{scores}: {listed}.{extra}"


def import_human_eval_archive(campaign: Campaign, fileobj, replace=False, progress=None) -> dict:
    """`import_human_eval` from a .zip whose top level holds the team folders; all or nothing."""
    with unpacked_archive(fileobj) as root:
        return import_human_eval(campaign, root, replace=replace, progress=progress)
