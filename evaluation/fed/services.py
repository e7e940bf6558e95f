"""Writes for FED questionnaires (PROTOCOLS.md section 4): sets of dialogs or context/response
pairs to rate, from frozen transcripts of an interactive job or a static JSONL, each run through the
offensive-word filter; the review queue's keep/drop; and the FED job built from what is left."""
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation import task_types
from annotation.models import Job, Response
from annotation.services.jobs import JobError, launch_job
from annotation.services.payload_jobs import create_payload_job
from evaluation.errors import EvaluationInputError
from evaluation.fed import dataset as fed_static
from evaluation.interactive import offensive
from evaluation.interactive.services.screening import review_flagged, word_filter
from evaluation.models import DialogSystem, FedCandidate, FedSet, OffenceReview

TASK_TYPES: dict[str, str] = {FedSet.Level.DIALOG: "fed_dialog", FedSet.Level.TURN: "fed_turn"}
#: DSTC9 Track 3: 3 annotators for every context-response pair and every dialog.
DEFAULT_RATERS = 3


def _level(level) -> str:
    if level not in TASK_TYPES:
        raise EvaluationInputError(f"the level must be 'dialog' or 'turn', not {str(level)[:20]!r}")
    return level


def _save(name, level, source, candidates, chat_job=None, kept_words=None) -> FedSet:
    """One set and its candidates, each filtered, in one transaction. `kept_words[k]`: the words an
    organizer already saw and kept in candidate k's source (a chat kept in the chat queue); a
    candidate flagged for no other word starts kept instead of asking the same question again."""
    name = (name or "").strip()
    if not name:
        raise EvaluationInputError("a FED set needs a name")
    if not candidates:
        raise EvaluationInputError("there is nothing to rate")
    find = word_filter()
    try:
        with transaction.atomic():
            fed_set = FedSet.objects.create(name=name[:200], level=level, source=source, chat_job=chat_job)
            rows = []
            now = timezone.now()
            for position, (system, origin, payload) in enumerate(candidates):
                texts = [t["text"] for t in payload.get("dialog", payload.get("context", []))] + [payload.get("response", "")]
                words = offensive.flagged_words(texts, find)
                already_kept = bool(words) and set(words) <= set((kept_words or {}).get(position, ()))
                review = FedCandidate.Review.KEPT if already_kept else FedCandidate.Review.PENDING if words else FedCandidate.Review.CLEAN
                rows.append(FedCandidate(
                    fed_set=fed_set, position=position, system=system, origin=origin[:200], payload=payload, flagged_words=words, review=review,
                    reviewed_at=now if already_kept else None,
                ))
            FedCandidate.objects.bulk_create(rows)
    except IntegrityError:
        raise EvaluationInputError(f"a FED set named {name!r} exists already") from None
    return fed_set


def _as_turns(transcript) -> list[dict]:
    """The frozen transcript as raters see it: what was said, without the fallbacks of failed turns."""
    return [
        {"speaker": "user" if t.get("role") == "user" else "system", "text": str(t.get("text", ""))}
        for t in transcript or [] if not t.get("failed") and str(t.get("text", "")).strip()
    ]


def create_fed_set_from_chats(*, name: str, chat_job: Job, level: str = FedSet.Level.DIALOG) -> FedSet:
    """Frozen transcripts of the chat job's counted dialogs: one candidate per dialog (dialog level)
    or per system turn with its context (turn level)."""
    level = _level(level)
    if not isinstance(task_types.get(chat_job.task_type), task_types.RelaysChat):
        raise EvaluationInputError(f"job {chat_job.pk} is not an interactive (chat) job")
    # A chat dropped in the chat job's offensive-word queue is not rated either.
    responses = list(
        Response.objects.counted().filter(item__job=chat_job).exclude(chat_screening__review=OffenceReview.DROPPED)
        .select_related("item", "chat_screening").order_by("pk")
    )
    names = dict(DialogSystem.objects.values_list("public_id", "name"))
    candidates: list[tuple] = []
    kept_words: dict = {}
    for r in responses:
        system = names.get(r.item.payload.get("endpoint"), r.item.payload.get("endpoint", ""))
        turns = _as_turns(r.answers.get("transcript"))
        screening = getattr(r, "chat_screening", None)
        kept = screening.flagged_words if screening is not None and screening.review == OffenceReview.KEPT else None
        if level == FedSet.Level.DIALOG:
            parts = [(f"chat response {r.pk}", {"dialog": turns})] if turns else []
        else:
            parts = [
                (f"chat response {r.pk}, turn {index}", {"context": turns[:index], "response": turn["text"], "knowledge": []})
                for index, turn in enumerate(turns) if turn["speaker"] == "system" and index > 0
            ]
        for origin, payload in parts:
            if kept:
                kept_words[len(candidates)] = kept
            candidates.append((system, origin, payload))
    if not candidates:
        raise EvaluationInputError(f"job {chat_job.pk} has no completed dialogs to rate yet")
    return _save(name, level, FedSet.Source.CHATS, candidates, chat_job=chat_job, kept_words=kept_words)


def import_fed_static(*, name: str, jsonl: bytes, level: str = FedSet.Level.DIALOG) -> FedSet:
    """A static set from the documented JSONL (docs/formats.md): every context with every system's
    response. Dialog level rates the context followed by the response as a dialog; turn level rates
    the response in its context. All or nothing; a bad line is named."""
    level = _level(level)
    try:
        rows = fed_static.parse(jsonl)
    except fed_static.StaticSetError as exc:
        raise EvaluationInputError(str(exc)) from None
    candidates = []
    for row in rows:
        for system, response in row["responses"].items():
            if level == FedSet.Level.DIALOG:
                payload = {"dialog": [*row["context"], {"speaker": "system", "text": response}]}
            else:
                payload = {"context": row["context"], "response": response, "knowledge": []}
            candidates.append((system, f"context {row['context_id']}", payload))
    return _save(name, level, FedSet.Source.STATIC, candidates)


def review_candidate(candidate: FedCandidate, *, keep: bool) -> FedCandidate:
    """An organizer's decision on a flagged candidate: kept ones are rated, dropped ones never are.
    Only before the FED job is launched: after that the raters' items are fixed."""
    def launched(row):
        # Locked as launch_fed_job locks it, so a review and a launch do not cross.
        if FedSet.objects.select_for_update().get(pk=row.fed_set_id).job_id:
            return "the FED job is launched already: reviews can no longer change what is rated"
        return None

    return review_flagged(FedCandidate, candidate.pk, keep=keep, refusal=launched)


def launch_fed_job(fed_set: FedSet, *, raters: int = DEFAULT_RATERS, reward="0.20", **job_options) -> Job:
    """The FED questionnaire job over the set's clean and kept candidates, `raters` each, launched.
    Refused while flagged candidates wait for review."""
    with transaction.atomic():
        fed_set = FedSet.objects.select_for_update().get(pk=fed_set.pk)
        if fed_set.job_id:
            raise EvaluationInputError(f"{fed_set.name!r} has a FED job already (job {fed_set.job_id})")
        pending = fed_set.candidates.filter(review=FedCandidate.Review.PENDING).count()
        if pending:
            raise EvaluationInputError(f"{pending} flagged item(s) of {fed_set.name!r} wait in the review queue: keep or drop them first")
        rated = list(fed_set.candidates.filter(review__in=[FedCandidate.Review.CLEAN, FedCandidate.Review.KEPT]).order_by("position"))
        if not rated:
            raise EvaluationInputError(f"every item of {fed_set.name!r} was dropped: there is nothing to rate")
        try:
            job = create_payload_job(
                name=f"FED: {fed_set.name}"[:200], task_type=TASK_TYPES[fed_set.level], payloads=[c.payload for c in rated],
                redundancy=raters, reward=reward, **job_options,
            )
            job = launch_job(job)
        except JobError as exc:
            raise EvaluationInputError(str(exc)) from None
        except ArithmeticError:
            raise EvaluationInputError(f"the reward must be an amount in USD such as 0.20, not {str(reward)[:20]!r}") from None
        items = dict(job.items.values_list("position", "pk"))
        for index, candidate in enumerate(rated):
            candidate.item_id = items[index]
        FedCandidate.objects.bulk_update(rated, ["item"])
        fed_set.job = job
        fed_set.save(update_fields=["job"])
    return job
