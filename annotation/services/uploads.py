"""The files a response carries (the upload part of the task-type contract, `task_types.base.Upload`).

A type with upload fields declares `TakesUploads` and names a store (`upload_store`); the store is a
function registered in `extensions.upload_stores` (annotation's own, `spoken_readings`, by its
`ready()`) that writes the files of one response inside the response's transaction and notes each file it
wrote, so that a transaction that fails can take them back (storage is not transactional).
"""
from collections.abc import Mapping

from ..extensions import upload_stores
from ..task_types import TakesUploads, capability
from ..task_types.base import MAX_UPLOAD_BYTES, Problem, Upload


def posted_files(kind, settings: Mapping, files: Mapping) -> dict:
    """The upload fields of a request's files ({name: UploadedFile}), as bytes, read up to
    MAX_UPLOAD_BYTES + 1 so that a type sees an oversized file as too big without reading it all.
    A field that was not posted is ""."""
    out: dict[str, bytes | str] = {}
    for field in _upload_fields(kind, settings):
        posted = files.get(field["name"])
        out[field["name"]] = posted.read(MAX_UPLOAD_BYTES + 1) if posted is not None else ""
    return out


def oversized(kind, settings: Mapping, answers: Mapping):
    """Problems for upload fields whose bytes pass MAX_UPLOAD_BYTES (checked before the type reads them)."""
    return [
        Problem(f["name"], "too_big", f"{f['label']}: the file is larger than {MAX_UPLOAD_BYTES // (1024 * 1024)} MB.")
        for f in _upload_fields(kind, settings)
        if isinstance(answers.get(f["name"]), (bytes, bytearray)) and len(answers[f["name"]]) > MAX_UPLOAD_BYTES
    ]


def _upload_fields(kind, settings: Mapping) -> list[dict]:
    uploads = capability(kind, TakesUploads)
    return uploads.upload_fields(settings) if uploads else []


def split(cleaned: Mapping) -> tuple[dict, dict]:
    """(the answers to store as JSON, {field: Upload}): every Upload is replaced by its meta."""
    uploads = {name: value for name, value in cleaned.items() if isinstance(value, Upload)}
    answers = {name: (value.meta if isinstance(value, Upload) else value) for name, value in cleaned.items()}
    return answers, uploads


def keep(response, kind, uploads: Mapping[str, Upload], written: list) -> None:
    """Store a response's files with its type's store; call inside the response's transaction. Each
    file written goes on `written` at once, for `discard` if the transaction fails."""
    if uploads:
        upload_stores[kind.upload_store](response, uploads, written)


def discard(written: list[tuple]) -> None:
    """Delete the files `keep` wrote for a response whose transaction did not commit."""
    for storage, name in written:
        storage.delete(name)
