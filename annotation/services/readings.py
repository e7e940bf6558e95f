"""Spoken readings: storing a response's recordings, transcribing them, and removing their files.

`keep` is the `spoken_readings` upload store (services.uploads): it writes each reading's WAV to the
audio storage (STORAGES["audio"]) and its row, in the response's transaction. `transcribe` runs the
ASR backend (annotation.speech.asr, chosen by QUORUM_ASR_BACKEND) on one reading, adapted to the
job's own texts, and stores the hypothesis, confidence and timing, or why it failed. Files leave the
storage when their row is deleted (with its response or job), once that deletion commits.
`transcribe_submitted` (a `response_submitted` receiver) queues one transcription per stored reading.
"""
import time

from django.core.files.base import ContentFile
from django.db import transaction
from django.utils import timezone

from quorum.background import queue_now

from .. import task_types
from ..models import SpokenReading
from ..selectors.readings import job_texts
from ..speech.asr import AsrUnavailable
from ..speech.config import asr_backend
from ..task_types.spoken_reading import reading_index

MAX_ERROR_CHARS = 2000


def transcribe_submitted(sender, response, **kwargs) -> None:
    """Queue one transcription per reading of a response whose type stores spoken readings
    (`signals.response_submitted` is sent after commit, so the rows are there for the task)."""
    if not isinstance(task_types.get(response.item.job.task_type), task_types.TakesUploads):
        return  # a type without files: no query
    kept = getattr(response, "_kept_readings", None)  # the ids `keep` wrote in this request, if it did
    if kept is None or None in kept:
        kept = SpokenReading.objects.filter(response=response).values_list("pk", flat=True)
    for reading_id in kept:
        queue_transcription(reading_id)


def queue_transcription(reading_id: int) -> bool:
    """Queue a reading's transcription; False when the broker is down (logged: the reading stays
    untranscribed and `sweeps.requeue_untranscribed` queues it again), never an error for the worker."""
    return queue_now("annotation.tasks.transcribe_reading", reading_id)


class TranscriptionFailed(Exception):
    """A transcription attempt failed in a way worth retrying; the reason is stored on the reading."""


def keep(response, uploads, written: list) -> None:
    """Write the readings of a response being stored (inside its transaction): the files, then the
    rows. Each file's (storage, name) goes on `written` as soon as it exists, so that
    `uploads.discard` can take it back if anything after it fails."""
    rows = []
    for name, upload in uploads.items():
        index = reading_index(name)
        if index is None:
            raise ValueError(f"{name!r} is not a reading's upload field")
        reading = SpokenReading(
            response=response, job_id=response.item.job_id, index=index,
            seconds=upload.meta["seconds"], sample_rate=upload.meta["sample_rate"],
        )
        reading.audio.save(f"reading-{index + 1}.wav", ContentFile(upload.content), save=False)
        written.append((reading.audio.storage, reading.audio.name))
        rows.append(reading)
    SpokenReading.objects.bulk_create(rows)
    response._kept_readings = [row.pk for row in rows]  # for transcribe_submitted after the commit, not read again


def store_reading(*, response, index: int, wav: bytes, seconds: float, sample_rate: int) -> SpokenReading:
    """One reading stored outside a submission (the bench, repairs): file and row in one transaction."""
    with transaction.atomic():
        reading = SpokenReading(response=response, job_id=response.item.job_id, index=index, seconds=seconds, sample_rate=sample_rate)
        reading.audio.save(f"reading-{index + 1}.wav", ContentFile(wav), save=False)
        reading.save(force_insert=True)
    return reading


def transcribe(reading_id: int, *, backend=None) -> SpokenReading | None:
    """Transcribe one reading and store what the backend heard. Idempotent: a reading already
    transcribed is left as it is. None when the reading is gone (its response was deleted).

    A backend that cannot serve the job's language (AsrUnavailable) is stored as the reading's
    error and not retried; any other failure is stored and raised as TranscriptionFailed, which the
    task retries a bounded number of times.
    """
    reading = SpokenReading.objects.select_related("job").filter(pk=reading_id).first()
    if reading is None or reading.transcribed_at is not None:
        return reading
    language = (reading.job.settings or {}).get("language", "en")
    try:
        backend = backend or asr_backend()
        with reading.audio.open("rb") as fh:
            wav = fh.read()
        started = time.perf_counter()
        transcript = backend.transcribe(wav, language=language, adapt_to=job_texts(reading.job_id))
        elapsed = time.perf_counter() - started
    except AsrUnavailable as exc:
        _fail(reading, str(exc))
        return reading
    except Exception as exc:  # a backend's own failure (a crash, a timeout): stored, then retried
        _fail(reading, f"{type(exc).__name__}: {exc}")
        raise TranscriptionFailed(str(exc)) from exc
    SpokenReading.objects.filter(pk=reading.pk).update(
        asr_text=transcript.text,
        asr_confidence=transcript.confidence,
        decode_seconds=transcript.decode_seconds if transcript.decode_seconds is not None else elapsed,
        asr_backend=transcript.backend,
        transcribed_at=timezone.now(),
        asr_error="",
    )
    reading.refresh_from_db()
    return reading


def _fail(reading: SpokenReading, message: str) -> None:
    SpokenReading.objects.filter(pk=reading.pk).update(asr_error=message[:MAX_ERROR_CHARS])
    reading.asr_error = message[:MAX_ERROR_CHARS]


def forget_audio(sender, instance: SpokenReading, **kwargs) -> None:
    """post_delete of a reading: remove its file from storage once the deletion commits (a deletion
    that rolls back keeps the file its row still names)."""
    storage, name = instance.audio.storage, instance.audio.name
    if name:
        transaction.on_commit(lambda: storage.delete(name))
