"""Reading an uploaded .zip safely: the checks every zip upload of the three apps goes through.

Pure (no Django). Evaluation unpacks whole archives (test sets, entries, human evaluations);
annotation takes one corpus file out of a zip. Both read the listing with `open_archive`, check it
with `unpacking_plan` before a byte of a member is read, and copy members out with `copy_member`,
which never writes more than a member's header promised and names the member in every message.
Messages name archive members, never a path on this server.
"""
from __future__ import annotations

import lzma
import zipfile
import zlib
from collections.abc import Callable
from typing import IO


class ArchiveError(ValueError):
    """An archive that cannot be read safely; the message names the member and what to do."""


# Methods Python's zipfile reads; others (e.g. Deflate64, PPMd) raise NotImplementedError on read.
READABLE_METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflate", zipfile.ZIP_BZIP2: "bzip2", zipfile.ZIP_LZMA: "lzma"}
_FILE_TYPE, _SYMLINK = 0o170000, 0o120000  # st_mode bits a Unix zip keeps in external_attr's top half
_CHUNK = 1024 * 1024


def open_archive(fileobj, what: str = "the file") -> tuple[zipfile.ZipFile, list[zipfile.ZipInfo]]:
    """(open ZipFile, its members) of a path or binary file; ArchiveError if it is not a readable zip."""
    try:
        archive = zipfile.ZipFile(fileobj)
        members = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError):
        raise ArchiveError(f"{what} is not a .zip archive") from None
    return archive, members


def unpacking_plan(members) -> list:
    """(path parts, member) for every member that is safe to extract, or ArchiveError: a member
    that would land outside the folder ("../", absolute paths), an encrypted member, a compression
    method Python cannot read, a symbolic link (it could lead a later member anywhere), a name used
    twice or both as a file and as a folder."""
    plan, files, folders = [], set(), set()
    for member in members:
        name = member.filename
        parts = tuple(part for part in name.replace("\\", "/").split("/") if part not in ("", "."))
        if name.startswith(("/", "\\")) or ".." in parts or (parts and ":" in parts[0]):
            raise ArchiveError(f"the archive member {name!r} points outside the archive")
        if member.flag_bits & 0x1:
            raise ArchiveError(f"the archive member {name!r} is encrypted; upload the archive without a password")
        if member.compress_type not in READABLE_METHODS:
            methods = ", ".join(READABLE_METHODS.values())
            raise ArchiveError(
                f"the archive member {name!r} uses a compression method Quorum cannot read (method {member.compress_type}); use one of: {methods}"
            )
        if (member.external_attr >> 16) & _FILE_TYPE == _SYMLINK:
            raise ArchiveError(f"the archive member {name!r} is a symbolic link; the archive must hold plain files and folders")
        if not parts:
            continue
        if member.is_dir():
            folders.add(parts)
        elif parts in files:
            raise ArchiveError(f"the archive holds {name!r} more than once; keep one")
        else:
            files.add(parts)
        folders.update(parts[:end] for end in range(1, len(parts)))
        plan.append((parts, member))
    clash = sorted(files & folders)
    if clash:
        raise ArchiveError(f"the archive member {'/'.join(clash[0])!r} is both a file and a folder; rename one")
    return plan


def copy_member(archive: zipfile.ZipFile, member: zipfile.ZipInfo, out: IO[bytes], copied: Callable[[int], None] | None = None) -> None:
    """Copy one member to `out` a chunk at a time, never more bytes than its header promised; the
    zip module checks the CRC when the member has been read to its end. `copied(bytes so far)` is
    called after every chunk (a long unpacking's progress)."""
    name = member.filename
    written = 0
    try:
        with archive.open(member) as source:
            for chunk in iter(lambda: source.read(_CHUNK), b""):
                written += len(chunk)
                if written > member.file_size:
                    raise ArchiveError(f"the archive member {name!r} holds more data than its header says; the archive is damaged")
                out.write(chunk)
                if copied is not None:
                    copied(written)
    except ArchiveError:
        raise
    except (zipfile.BadZipFile, EOFError, zlib.error, lzma.LZMAError, ValueError, NotImplementedError, RuntimeError) as exc:
        # Bad CRC-32, truncated or corrupt data, a password needed: the zip module's reason names
        # the member, not a path on this server.
        raise ArchiveError(f"the archive member {name!r} cannot be unpacked ({exc})") from None
    except OSError as exc:
        raise ArchiveError(f"the archive member {name!r} cannot be unpacked ({exc.strerror or 'damaged data'})") from None
