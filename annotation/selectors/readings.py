"""Reads of spoken readings: the job's texts the recognizer is adapted to, the readings a review
page shows, and the one reading an audio request asks for."""
from django.db.models import Count, Q

from ..models import Item, SpokenReading

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
