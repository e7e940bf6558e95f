"""An organizer's corpus upload (from the API or the upload form) turned into an import run.

Uploaded files are streamed to `QUORUM_IMPORT_DIR/<uuid>/` chunk by chunk (never read into
memory), one folder per file role, under the client's base name made safe (so it cannot point
anywhere else, and import errors name the file the user knows); the saved paths go to
`start_import`. A request that cannot be imported is refused before anything is written, and if
`start_import` refuses it the saved files are removed again.

The API and the upload form share this module, so the same upload gets the same refusal, under
the field it is about.
"""
import shutil
import uuid
from pathlib import Path

from django.conf import settings
from django.core.exceptions import SuspiciousFileOperation
from django.utils.text import get_valid_filename

from ..importers import READERS
from .imports import ImportFailed, start_import

#: File roles an upload may carry: "data" is required; which others a format takes is up to its reader.
FILE_ROLES = ("data", "labels", "knowledge")

# Which upload field an ImportFailed message is about, by a word it contains (first match wins).
_FIELD_BY_WORD = (
    ("already", "name"),
    ("needs a name", "name"),
    ("corpus name", "name"),
    ("unknown format", "source_format"),
    ("labels", "labels"),
    ("knowledge", "knowledge"),
)


class UploadError(ValueError):
    """An upload that cannot be imported; `field` names the form or API field to fix."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


def import_error_field(exc: ImportFailed) -> str:
    if exc.field:
        return exc.field
    lowered = str(exc).lower()
    return next((field for word, field in _FIELD_BY_WORD if word in lowered), "data")


def check_files(source_format: str, files: dict) -> None:
    """Refuse a file set that does not fit the format, before anything is written."""
    if not files.get("data"):
        raise UploadError("data", "Upload the corpus file as 'data'.")
    reader = READERS.get(source_format)
    if reader is None:
        return  # start_import says which formats exist
    for role in FILE_ROLES[1:]:
        if files.get(role) and role not in reader.optional_roles:
            takes = ", ".join(("data", *reader.optional_roles))
            raise UploadError(role, f"A {reader.label} corpus takes no {role} file (it takes: {takes}); leave it out.")


def _safe_name(client_name: str | None, role: str) -> str:
    """The client's base name made safe (import errors then name the file the user knows), or the role."""
    try:
        return get_valid_filename(Path(client_name or "").name)[-100:]
    except SuspiciousFileOperation:
        return role


def save_uploads(files: dict) -> dict[str, Path]:
    """Stream each uploaded file to `<new directory>/<role>/<safe name>`; return the saved paths by role."""
    directory = Path(settings.QUORUM_IMPORT_DIR) / uuid.uuid4().hex
    directory.mkdir(parents=True)
    saved = {}
    try:
        for role, upload in files.items():
            if not upload:
                continue
            (directory / role).mkdir()
            path = directory / role / _safe_name(upload.name, role)
            with open(path, "xb") as out:
                for chunk in upload.chunks():
                    out.write(chunk)
            saved[role] = path
    except BaseException:
        shutil.rmtree(directory, ignore_errors=True)
        raise
    return saved


def start_upload_import(*, name: str, source_format: str, files: dict, created_by=None, language: str = ""):
    """Save the uploads and start their import; UploadError or ImportFailed (nothing kept) if refused.
    `language`: the corpus's BCP 47 tag as stated; empty: found from the text."""
    check_files(source_format, files)
    saved = save_uploads({role: files.get(role) for role in FILE_ROLES})
    try:
        return start_import(name=name, source_format=source_format, files=saved, created_by=created_by, language=language)
    except ImportFailed:
        shutil.rmtree(saved["data"].parents[1], ignore_errors=True)
        raise
