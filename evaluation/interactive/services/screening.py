"""The offensive-word filter before evaluation (PROTOCOLS.md section 4), for every kind of thing
evaluated: FED candidates and completed chats. It flags; an organizer keeps or drops what it
flagged, one review write for both."""
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from annotation import task_types
from annotation.models import Job, Response
from evaluation.errors import EvaluationInputError
from evaluation.interactive import offensive
from evaluation.models import ChatScreening, OffenceReview


def word_filter():
    """The configured offensive-word matcher (setting QUORUM_OFFENSIVE_WORDS)."""
    setting = settings.QUORUM_OFFENSIVE_WORDS
    try:
        words = offensive.load_words(offensive.DEFAULT_WORDS if setting is None else setting)
    except offensive.WordListError as exc:
        raise EvaluationInputError(str(exc)) from None
    return offensive.matcher(words)


def reply_screen():
    """The filter for a contract check's own replies (`systems.check`): the configured matcher, or,
    when the word list cannot be read, one that says so, which the check records as a warning
    instead of stopping (the check's other rules still run and are stored)."""
    try:
        return word_filter()
    except EvaluationInputError as exc:
        reason = str(exc)

        def unreadable(text: str) -> list[str]:
            raise offensive.WordListError(reason)

        return unreadable


def review_flagged(model, pk, *, keep: bool, refusal=None):
    """An organizer's keep or drop of one flagged row of `model` (a `Screened`), locked while it is
    decided. `refusal(row)` may return why the decision can no longer change anything."""
    with transaction.atomic():
        row = model.objects.select_for_update().get(pk=pk)
        if row.review == OffenceReview.CLEAN:
            raise EvaluationInputError("nothing was flagged in this one: there is nothing to review")
        reason = refusal(row) if refusal else None
        if reason:
            raise EvaluationInputError(reason)
        row.review = OffenceReview.KEPT if keep else OffenceReview.DROPPED
        row.reviewed_at = timezone.now()
        row.save(update_fields=["review", "reviewed_at"])
    return row


def transcript_texts(transcript) -> list[str]:
    """What was said in a saved chat transcript (the fallbacks of failed turns were not said)."""
    return [str(t.get("text", "")) for t in transcript or [] if isinstance(t, dict) and not t.get("failed")]


def screen_chat_response(response: Response, find=None) -> ChatScreening | None:
    """Run the filter over one counted chat's transcript; a flagged one waits for review. A chat
    screened before keeps its row and decision (a response counted again is not asked twice)."""
    words = offensive.flagged_words(transcript_texts(response.answers.get("transcript")), find or word_filter())
    if not words:
        return None
    screening, _ = ChatScreening.objects.get_or_create(
        response=response, defaults={"flagged_words": words, "review": OffenceReview.PENDING}
    )
    return screening


def screen_chat_job(job: Job) -> int:
    """Screen every counted dialog of a chat job not screened yet (e.g. after the word list
    changed); returns how many were newly flagged."""
    if not isinstance(task_types.get(job.task_type), task_types.RelaysChat):
        raise EvaluationInputError(f"job {job.pk} is not an interactive (chat) job")
    find = word_filter()
    flagged = 0
    with transaction.atomic():
        for response in Response.objects.counted().filter(item__job=job, chat_screening__isnull=True).order_by("pk"):
            flagged += screen_chat_response(response, find) is not None
    return flagged


def review_chat(screening: ChatScreening, *, keep: bool) -> ChatScreening:
    """Keep (it counts on the interactive leaderboard) or drop (it never does) a flagged chat."""
    return review_flagged(ChatScreening, screening.pk, keep=keep)
