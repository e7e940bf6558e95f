"""A corpus file uploaded inside a .zip (MultiWOZ ships its data.json zipped).

The zip must hold exactly one .json or .jsonl file (folders, macOS's `__MACOSX/` and hidden files
aside); `corpus_member` reads the zip's listing only (milliseconds) and says which member that is,
or refuses with what the zip holds and what to upload instead. `extract_corpus_member` then copies
that member to a folder a chunk at a time, so the reader streams it from disk as it streams any
other file and the corpus is never held in memory whole. The zip's safety checks (encrypted
members, unknown compression, a size that lies, a damaged member) are the ones every zip upload
shares (`quorum.archives`). Pure: no Django.
"""
from __future__ import annotations

import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from quorum.archives import ArchiveError, copy_member, open_archive, unpacking_plan

from .base import FormatError

CORPUS_SUFFIXES = (".json", ".jsonl")
_LOCAL_HEADER = b"PK\x03\x04"
_SHOWN = 5  # member names a message lists before "and N more"
_UPLOAD_INSTEAD = "upload the corpus's .json or .jsonl file itself, or a .zip holding only that file"


def is_archive(path: Path) -> bool:
    """Whether `path` is meant as a zip: it reads as one, is named .zip or starts as one does."""
    if path.suffix.lower() == ".zip" or zipfile.is_zipfile(path):
        return True
    with path.open("rb") as f:
        return f.read(len(_LOCAL_HEADER)) == _LOCAL_HEADER


def corpus_member(path: Path) -> zipfile.ZipInfo | None:
    """The one .json/.jsonl member of the zip at `path`; None when `path` is not a zip. FormatError
    naming what the zip holds when it is not a readable zip or holds no such file, or several."""
    if not is_archive(path):
        return None
    try:
        archive, members = open_archive(path, path.name)
        with archive:
            unpacking_plan(members)
    except ArchiveError as exc:
        raise FormatError(f"{path.name}: {exc}; {_UPLOAD_INSTEAD}") from None
    files = [m for m in members if not m.is_dir() and not _hidden(m.filename)]
    corpora = [m for m in files if PurePosixPath(m.filename).suffix.lower() in CORPUS_SUFFIXES]
    if len(corpora) == 1:
        return corpora[0]
    if not corpora:
        holds = f"holds {_listing(files)}" if files else "is empty"
        raise FormatError(f"{path.name}: the .zip {holds}, and no .json or .jsonl file; {_UPLOAD_INSTEAD}")
    raise FormatError(
        f"{path.name}: the .zip holds {len(corpora)} .json/.jsonl files ({_listing(corpora)}) and a corpus is one file; "
        "upload a .zip holding only the corpus file, or that file itself (DSTC9: logs.json as the corpus file, "
        "its labels and knowledge files in their own fields)"
    )


def extract_corpus_member(path: Path, member: zipfile.ZipInfo, folder: Path, copied: Callable[[int], None] | None = None) -> Path:
    """Copy `member` of the zip at `path` into `folder`, under its own base name; the copy's path.
    `copied(bytes so far)` follows the copy. FormatError when the member is damaged or larger than
    the free space there."""
    free = shutil.disk_usage(folder).free
    if member.file_size > free:
        raise FormatError(
            f"{path.name}: {member.filename} unpacks to {_megabytes(member.file_size)}, more than the "
            f"{_megabytes(free)} free on the server; ask its operator for room, or import a smaller corpus"
        )
    target = folder / PurePosixPath(member.filename).name
    try:
        archive, _members = open_archive(path, path.name)
        with archive, target.open("xb") as out:
            copy_member(archive, member, out, copied)
    except ArchiveError as exc:
        raise FormatError(f"{path.name}: {exc}; {_UPLOAD_INSTEAD}") from None
    return target


def _hidden(name: str) -> bool:
    """macOS's resource forks (`__MACOSX/`, `._data.json`) and other hidden files: not the corpus."""
    parts = PurePosixPath(name.replace("\\", "/")).parts
    return "__MACOSX" in parts or any(part.startswith(".") for part in parts)


def _listing(members: list) -> str:
    names = sorted(m.filename for m in members)
    shown = ", ".join(names[:_SHOWN])
    return shown + (f" and {len(names) - _SHOWN} more" if len(names) > _SHOWN else "")


def _megabytes(size: int) -> str:
    return f"{size / 2**20:,.0f} MB"
