"""Reads of spoken readings: the job's texts the recognizer is adapted to, the readings a review
page shows with their evidence (speech, the hypothesis against the turn, the same recording sent
twice), the job's readings as the flag run judges them (`flag_rows`), and the one reading an
audio request asks for."""
from django.db.models import Count, Q

from ..models import Item, Response, SpokenReading
from ..speech.evidence import doubts, turn_match
from ..task_types.spoken_reading import MAX_READINGS, reading_field, reading_index

#: A recognizer adapted to more sentences than this gains little and costs every decode more.
MAX_ADAPTATION_TEXTS = 5000


def job_texts(job_id: int) -> list[str]:
    """The job's own utterances (its items' source turns), what the ASR backend is adapted to, as a
    deployed recognizer would be adapted to its domain. One query."""
    texts = Item.objects.filter(job_id=job_id).order_by("position").values_list("payload__utterance", flat=True)[:MAX_ADAPTATION_TEXTS]
    return [t for t in dict.fromkeys(texts) if isinstance(t, str) and t.strip()]


def readings_by_response(response_ids: list[int]) -> dict[int, dict[int, SpokenReading]]:
    """{response id: {index: reading}} for a page of responses; one query (nothing when no ids)."""
    out: dict[int, dict[int, SpokenReading]] = {}
    if not response_ids:
        return out
    for reading in SpokenReading.objects.filter(response_id__in=response_ids).defer("created_at"):
        out.setdefault(reading.response_id, {})[reading.index] = reading
    return out


def flag_rows(job_id: int):
    """Every reading of the job's confirmed responses to ordinary items, as the flag run reads them
    (the responses `selectors.quality.flag_tables` reads): (response, worker, reading index, item
    payload, hypothesis or None until transcribed, seconds of speech or None, duration, fingerprint
    or None). One query, streamed."""
    responses = Response.objects.confirmed().filter(item__job_id=job_id, item__gold__isnull=True).values("pk")
    rows = (
        SpokenReading.objects.filter(job_id=job_id, response__in=responses).order_by("response_id", "index")
        .values_list("response_id", "response__worker_id", "index", "response__item__payload", "asr_text", "transcribed_at",
                     "seconds", "response__answers")
    )
    for response_id, worker_id, index, payload, hypothesis, transcribed_at, seconds, answers in rows.iterator(chunk_size=2000):
        meta = (answers or {}).get(reading_field(index)) if isinstance(answers, dict) else None
        meta = meta if isinstance(meta, dict) else {}
        speech = meta.get("speech_seconds")
        fp = meta.get("fingerprint")
        yield (response_id, worker_id, index, payload or {}, hypothesis if transcribed_at is not None else None,
               speech if isinstance(speech, (int, float)) and not isinstance(speech, bool) else None, seconds,
               fp if isinstance(fp, str) else None)


def reading_of(response_id: int, index: int) -> SpokenReading | None:
    return SpokenReading.objects.filter(response_id=response_id, index=index).first()


def transcription_summary(job_id: int) -> dict:
    """How far transcription of a job's readings has got, for the job page: counts, and the most
    frequent error messages (e.g. a language without an offline model). Two queries."""
    counts = SpokenReading.objects.filter(job_id=job_id).aggregate(
        readings=Count("pk"),
        transcribed=Count("pk", filter=Q(transcribed_at__isnull=False)),
        failed=Count("pk", filter=Q(transcribed_at__isnull=True) & ~Q(asr_error="")),
    )
    errors = (
        SpokenReading.objects.filter(job_id=job_id, transcribed_at__isnull=True).exclude(asr_error="")
        .values("asr_error").annotate(n=Count("pk")).order_by("-n")[:3]
    )
    return {**counts, "pending": counts["readings"] - counts["transcribed"] - counts["failed"],
            "errors": [(row["asr_error"], row["n"]) for row in errors]}


def reading_fingerprints(answers) -> dict[int, str]:
    """{reading index: its recording's fingerprint} of a response's stored answers (readings stored
    before fingerprints were taken have none)."""
    out = {}
    for name, meta in (answers or {}).items() if isinstance(answers, dict) else ():
        index = reading_index(name)
        if index is not None and isinstance(meta, dict) and isinstance(meta.get("fingerprint"), str):
            out[index] = meta["fingerprint"]
    return out


def same_recordings(job_id: int, responses, readings: int = MAX_READINGS) -> dict[str, list[tuple[int, int]]]:
    """{fingerprint: [(response id, reading index), ...]} of every reading of the job whose recording
    is one of these responses' readings: the same file sent for several readings or turns. One query,
    asking only the job's `readings` fields (each a JSON lookup the database cannot index)."""
    wanted = sorted({fp for r in responses for fp in reading_fingerprints(r.answers).values()})
    if not wanted:
        return {}
    holds = Q()
    for index in range(max(1, min(int(readings), MAX_READINGS))):
        holds |= Q(**{f"answers__{reading_field(index)}__fingerprint__in": wanted})
    out: dict[str, list[tuple[int, int]]] = {}
    rows = Response.objects.filter(item__job_id=job_id).filter(holds).order_by("pk").values_list("pk", "answers")
    for response_id, answers in rows:
        for index, fp in sorted(reading_fingerprints(answers).items()):
            if fp in wanted:
                out.setdefault(fp, []).append((response_id, index))
    return out


def reading_evidence(reading: SpokenReading, response_id: int, answers, turn: str, same: dict) -> dict:
    """What the review queue shows beside one reading: its seconds of speech, the hypothesis against
    the turn (WER, the turn's words heard) once transcribed, the other readings with the same
    recording, and in words what makes it worth a listen (`speech.evidence.doubts`)."""
    meta = (answers or {}).get(reading_field(reading.index)) if isinstance(answers, dict) else None
    speech = meta.get("speech_seconds") if isinstance(meta, dict) else None
    speech = speech if isinstance(speech, (int, float)) else None
    match = turn_match(turn, reading.asr_text) if reading.transcribed_at is not None and turn else None
    fp = reading_fingerprints(answers).get(reading.index)
    same_as = [
        f"reading {index + 1} of {'this response' if other == response_id else f'response {other}'}"
        for other, index in same.get(fp, []) if (other, index) != (response_id, reading.index)
    ] if fp else []
    return {
        "speech_seconds": speech, "wer": match.wer if match else None,
        "heard": match.heard if match else None, "words": match.words if match else None,
        "same_as": same_as, "doubts": doubts(speech=speech, match=match, same_as=same_as),
    }
