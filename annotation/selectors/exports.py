"""Reads for the exports of a job, shaped so that a whole corpus streams in a fixed number of
queries per chunk of dialogs (no query per dialog, turn or response).

Gold items (`Item.gold` set: known answers mixed into the work to check workers) are never data:
their responses are left out of the test sets and of responses.csv.
"""
from collections.abc import Iterator
from dataclasses import dataclass

from django.db.models import F, Prefetch, QuerySet

from .. import task_types
from ..exporters.reliability import WORKER_FILE
from ..models import Dialog, ExportRun, Item, Job, Response, SpokenReading, Turn

# Dialogs are fetched with their turns, items and accepted responses (four queries per chunk).
# 500 dialogs keep the turn ids of the item query (about 15 turns a dialog) well under SQLite's
# limit on query parameters.
DIALOG_CHUNK = 500
RESPONSE_CHUNK = 2000


def export_dialogs_queryset(job: Job, *, with_readings: bool = False) -> QuerySet:
    """Dialogs with at least one item in the job, in corpus order.

    Each dialog has `ordered_turns` (by index); each turn `job_items` (its item in this job, if
    any); each item `accepted_responses` (by submission time, then id, each with `round_state`, its
    review round's state or None); `with_readings`, each of those
    its `transcribed_readings` (spoken readings with a hypothesis, by index: one more query per chunk).
    """
    accepted = (
        Response.objects.counted()
        .only("id", "item_id", "answers", "checks", "submitted_at")
        .annotate(round_state=F("review_round__state"))  # whether the vote turned it down (exporters.selection)
        .order_by("submitted_at", "id")
    )
    if with_readings:
        transcribed = SpokenReading.objects.filter(transcribed_at__isnull=False).only("id", "response_id", "index", "asr_text").order_by("index")
        accepted = accepted.prefetch_related(Prefetch("readings", queryset=transcribed, to_attr="transcribed_readings"))
    items = (
        Item.objects.filter(job=job, gold__isnull=True)
        .only("id", "turn_id", "job_id", "payload")
        .prefetch_related(Prefetch("responses", queryset=accepted, to_attr="accepted_responses"))
    )
    turns = Turn.objects.order_by("index").prefetch_related(Prefetch("items", queryset=items, to_attr="job_items"))
    # IN (subquery) is computed once; a correlated EXISTS made SQLite scan the job's items per dialog.
    in_job = Turn.objects.filter(items__job=job, items__gold__isnull=True).values("dialog_id")
    return (
        Dialog.objects.filter(pk__in=in_job)
        .order_by("position")
        .prefetch_related(Prefetch("turns", queryset=turns, to_attr="ordered_turns"))
    )


def export_dialogs(job: Job, *, with_readings: bool = False) -> Iterator[Dialog]:
    return export_dialogs_queryset(job, with_readings=with_readings).iterator(chunk_size=DIALOG_CHUNK)


def job_readings(job: Job) -> Iterator[SpokenReading]:
    """The spoken readings of the job's confirmed responses to ordinary items, with their response,
    worker, turn and dialog joined in, in item order."""
    return (
        SpokenReading.objects.filter(job=job, response__item__gold__isnull=True)
        .exclude(response__status=Response.Status.AWAITING_CONFIRMATION)
        .select_related("response__worker", "response__item__turn__dialog")
        .order_by("response__item__position", "response__submitted_at", "response_id", "index")
        .iterator(chunk_size=RESPONSE_CHUNK)
    )


def count_export_dialogs(job: Job) -> int:
    return export_dialogs_queryset(job).count()


def count_export_user_turns(job: Job) -> int:
    """User turns with text in the exported dialogs: the utterances a speech-error export simulates."""
    return Turn.objects.filter(dialog__in=export_dialogs_queryset(job).values("pk"), speaker="user").exclude(text="").count()


def job_responses_queryset(job: Job, *, with_readings: bool = False) -> QuerySet:
    """Every response of the job's ordinary items, whatever became of it, with its item, turn, dialog
    id and worker joined in. Left out: answers to gold items, and crowd responses the provider has not
    confirmed (they may be forged, and are never exported). `with_readings`: each response's
    `export_readings` (its spoken readings, by index: one more query per chunk)."""
    responses = Response.objects.confirmed()
    if with_readings:
        readings = SpokenReading.objects.only(
            "id", "response_id", "index", "asr_text", "asr_confidence", "seconds", "transcribed_at", "asr_error"
        ).order_by("index")
        responses = responses.prefetch_related(Prefetch("readings", queryset=readings, to_attr="export_readings"))
    return (
        responses.filter(item__job=job, item__gold__isnull=True)
        .select_related("item__turn__dialog", "worker")
        .only(
            "id", "answers", "checks", "status", "claimed_at", "submitted_at", "active_seconds",
            "item__id", "item__position",
            "item__turn__id", "item__turn__index", "item__turn__text",
            "item__turn__dialog__id", "item__turn__dialog__external_id",
            "worker__id", "worker__provider", "worker__external_id",
        )
        .order_by("item__position", "submitted_at", "id")
    )


def job_responses(job: Job, *, with_readings: bool = False) -> Iterator[Response]:
    return job_responses_queryset(job, with_readings=with_readings).iterator(chunk_size=RESPONSE_CHUNK)


def count_job_responses(job: Job) -> int:
    return Response.objects.filter(item__job=job, item__gold__isnull=True).count()


def items_with_counted_answers(job: Job) -> Iterator[tuple[dict, list[tuple[str, dict]]]]:
    """(payload, [(worker "provider:id", answers), ...]) of every ordinary item of the job in position
    order, its counted responses earliest first: two queries, streamed by item chunk."""
    items = Item.objects.filter(job=job, gold__isnull=True).order_by("position").values_list("pk", "payload")
    chunk: list = []
    for row in items.iterator(chunk_size=RESPONSE_CHUNK):
        chunk.append(row)
        if len(chunk) == RESPONSE_CHUNK:
            yield from _with_answers(chunk)
            chunk = []
    yield from _with_answers(chunk)


def _with_answers(chunk):
    answers: dict[int, list] = {pk: [] for pk, _payload in chunk}
    rows = (
        Response.objects.counted().filter(item_id__in=answers)
        .order_by("submitted_at", "id")
        .values_list("item_id", "worker__provider", "worker__external_id", "answers")
    )
    for item_id, provider, external_id, given in rows:
        answers[item_id].append((f"{provider}:{external_id}", given))
    for pk, payload in chunk:
        yield payload, answers[pk]


def get_export_run(run_id: int) -> ExportRun | None:
    return ExportRun.objects.select_related("job__corpus").filter(pk=run_id).first()


@dataclass(frozen=True)
class ExportContents:
    """What an export of a job will hold, for the export form: what its test sets are (empty for a
    job without) and each file or folder with what it holds."""

    sets: str
    files: list[tuple[str, str]]


def _plain(text: str) -> str:
    return text.replace("**", "").replace("`", "")  # the README's Markdown, read on a page


def export_contents(job: Job) -> ExportContents:
    """The files an export of `job` writes, in the words its README will use (`ExportsTestSets`,
    `ExportsFiles`); the options of the form (speech errors, out of domain) add their own."""
    kind = task_types.get(job.task_type)
    settings = job.settings if isinstance(job.settings, dict) else {}
    sets = task_types.capability(kind, task_types.ExportsTestSets)
    extra = task_types.capability(kind, task_types.ExportsFiles)
    files: list[tuple[str, str]] = []
    if sets is not None:
        fmt = job.corpus.source_format if job.corpus else ""
        files += [(f"{name}/", f"a test set in the corpus's own format ({fmt})") for name in sets.test_set_names(settings)]
        columns = sets.response_columns(settings)
    else:
        columns = [f["name"] for f in kind.answer_fields(settings)]
    files.append(("responses.csv", "every response, whatever became of it, one row each; answer columns: " + ", ".join(columns)))
    if sets is None:
        files.append(("items.csv", "per item, what its accepted responses say together"))
    if extra is not None:
        files += [(name, _plain(words)) for name, words in extra.answer_file_words(settings).items()]
    files += [
        (WORKER_FILE, "each worker's reliability as the last flag run estimated it"),
        ("manifest.json", "the job, its settings and the counts, per dialog which turns were changed" if sets else "the job, its settings and the agreement"),
        ("README.md", "what each file holds and the rules the export followed"),
    ]
    return ExportContents(sets=_plain(sets.test_set_words(settings).sets) if sets else "", files=files)
