"""What is annotated and how: corpora, dialogs, turns, jobs, items, slots, responses, workers.

State changes happen only through `annotation.services`; the invariants that must hold under
concurrency (one worker per item, no more responses than the item's redundancy) are database
constraints, not Python checks.
"""
from decimal import Decimal
from typing import Any

from django.conf import settings as django_settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import F, Q

from .text.languages import MAX_TAG_LENGTH, LanguageTagError, checked_tag


def validate_language_tag(value: str) -> None:
    """A model validator (the admin's form) refusing what is not a BCP 47 tag, with the reason."""
    try:
        checked_tag(value)
    except LanguageTagError as exc:
        raise ValidationError(str(exc)) from None


class SourceFormat(models.TextChoices):
    MULTIWOZ = "multiwoz", "MultiWOZ 2.x data.json"
    DSTC9 = "dstc9", "DSTC9 Track 1 logs.json (+ labels.json, knowledge.json)"
    DSTC6 = "dstc6", "DSTC6 Track 1 JSON"
    JSONL = "jsonl", "Quorum JSONL"


class Corpus(models.Model):
    name = models.CharField(max_length=200, unique=True, help_text="A name unique across Quorum.")
    source_format = models.CharField(max_length=16, choices=SourceFormat.choices)
    meta = models.JSONField(
        default=dict, blank=True, help_text="Corpus-level source data kept for export (e.g. DSTC9 knowledge)."
    )
    language = models.CharField(
        max_length=MAX_TAG_LENGTH,
        default="en",
        validators=[validate_language_tag],
        help_text=(
            'The language of the corpus\'s text, a BCP 47 tag such as "zh" (Chinese) or "en" (English): work and review '
            "pages mark its text and the answer boxes with it, for fonts, line breaking and screen readers. Stated on "
            "import, or found from the text's script there (mostly Chinese characters: zh); correct it here if it is wrong."
        ),
    )
    created_by = models.ForeignKey(django_settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "corpora"
        ordering = ["-created_at"]

    def __str__(self):
        return self.name


class Dialog(models.Model):
    corpus = models.ForeignKey(Corpus, on_delete=models.CASCADE, related_name="dialogs", db_index=False)  # led by a unique constraint below
    external_id = models.CharField(max_length=200, help_text="The dialog's id in the source corpus.")
    position = models.PositiveIntegerField(help_text="Order of the dialog in the source file.")
    meta = models.JSONField(
        default=dict, blank=True, help_text="Dialog-level source fields kept for export (goal, candidates, labels)."
    )

    class Meta:
        ordering = ["corpus", "position"]
        constraints = [
            models.UniqueConstraint(fields=["corpus", "external_id"], name="dialog_unique_external_id"),
            models.UniqueConstraint(fields=["corpus", "position"], name="dialog_unique_position"),
        ]

    def __str__(self):
        return self.external_id


class Speaker(models.TextChoices):
    USER = "user", "User"
    SYSTEM = "system", "System"


class Turn(models.Model):
    dialog = models.ForeignKey(Dialog, on_delete=models.CASCADE, related_name="turns", db_index=False)  # led by a unique constraint below
    index = models.PositiveIntegerField(help_text="Position of the turn in its dialog, from 0.")
    speaker = models.CharField(max_length=8, choices=Speaker.choices)
    text = models.TextField()
    slot_values = models.JSONField(
        default=list, blank=True, help_text='Slot values mentioned in the turn: [{"slot": ..., "value": ...}].'
    )
    raw = models.JSONField(default=dict, blank=True, help_text="Other source fields of the turn, kept for export.")

    class Meta:
        ordering = ["dialog", "index"]
        constraints = [models.UniqueConstraint(fields=["dialog", "index"], name="turn_unique_index")]

    def __str__(self):
        return f"{self.dialog_id}#{self.index} {self.speaker}"


class RunStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"


class BackgroundRun(models.Model):
    """A status row for work done by a Celery task, shown as progress by the UI and the API."""

    status = models.CharField(max_length=16, choices=RunStatus.choices, default=RunStatus.PENDING)
    done = models.PositiveIntegerField(default=0, help_text="Units processed so far.")
    total = models.PositiveIntegerField(null=True, blank=True, help_text="Units to process, when known.")
    error = models.TextField(blank=True, help_text="Why the run failed, in words a user can act on.")
    created_by = models.ForeignKey(django_settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True
        ordering = ["-created_at"]

    @property
    def progress(self):
        if not self.total:
            return 1.0 if self.status == RunStatus.SUCCEEDED else 0.0
        return min(1.0, self.done / self.total)


class ImportRun(BackgroundRun):
    corpus_name = models.CharField(max_length=200)
    source_format = models.CharField(max_length=16, choices=SourceFormat.choices)
    files = models.JSONField(
        default=dict, help_text='Paths of the uploaded files by role: {"data": ..., "labels": ..., "knowledge": ...}.'
    )
    language = models.CharField(
        max_length=MAX_TAG_LENGTH, blank=True, help_text="The corpus's language as the builder stated it (a BCP 47 tag); empty: found from the text."
    )
    corpus = models.OneToOneField(Corpus, null=True, blank=True, on_delete=models.SET_NULL, related_name="import_run")


class PayloadSet(models.Model):
    """The source of a job whose items are not corpus turns: payloads given by the caller (the
    responses of a challenge's submissions to rate, pairs of outputs to compare)."""

    name = models.CharField(max_length=200, help_text="What the payloads are, e.g. the evaluation campaign they serve.")
    meta = models.JSONField(default=dict, blank=True, help_text="Where the payloads came from (e.g. the campaign's id).")
    created_by = models.ForeignKey(django_settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return self.name


class Job(models.Model):
    class State(models.TextChoices):
        DRAFT = "draft", "Draft"
        LIVE = "live", "Live"
        PAUSED = "paused", "Paused"
        FINISHED = "finished", "Finished"

    name = models.CharField(max_length=200)
    # A job's source is exactly one of: a corpus (items are its turns), a payload set (items are the
    # caller's payloads) or another job (`reviews`: items are its responses, for votes).
    corpus = models.ForeignKey(
        Corpus, null=True, blank=True, on_delete=models.PROTECT, related_name="jobs", help_text="The corpus whose turns are the items."
    )
    payload_set = models.ForeignKey(
        PayloadSet, null=True, blank=True, on_delete=models.PROTECT, related_name="jobs", help_text="The payloads that are the items."
    )
    task_type = models.CharField(max_length=32, help_text="Key of the task type in the registry, e.g. 'rewrite'.")
    settings = models.JSONField(default=dict, blank=True, help_text="Task-type settings, validated by the task type.")
    instructions = models.TextField(blank=True, help_text="Shown to annotators above every item.")
    redundancy = models.PositiveSmallIntegerField(
        default=1, validators=[MinValueValidator(1)], help_text="Responses wanted per item."
    )
    reward = models.DecimalField(
        max_digits=8, decimal_places=2, default=Decimal("0.50"), help_text="Pay per response, in USD."
    )
    claim_timeout_minutes = models.PositiveSmallIntegerField(
        default=30, validators=[MinValueValidator(1)], help_text="A claimed slot is freed after this many minutes."
    )
    state = models.CharField(max_length=16, choices=State.choices, default=State.DRAFT)
    annotators: "models.ManyToManyField[Worker, Any]" = models.ManyToManyField(
        "Worker", blank=True, related_name="jobs", help_text="In-house annotators this job is open to; empty means all."
    )
    created_by = models.ForeignKey(django_settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    launched_at = models.DateTimeField(null=True, blank=True)
    reviews = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="review_jobs",
        help_text="For a vote job: the job whose responses it reviews (CGoDial voting).",
    )

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=Q(redundancy__gte=1), name="job_redundancy_positive"),
            models.CheckConstraint(
                condition=(
                    (Q(corpus__isnull=False) & Q(payload_set__isnull=True) & Q(reviews__isnull=True))
                    | (Q(corpus__isnull=True) & Q(payload_set__isnull=False) & Q(reviews__isnull=True))
                    | (Q(corpus__isnull=True) & Q(payload_set__isnull=True) & Q(reviews__isnull=False))
                ),
                name="job_has_one_source",
            ),
        ]

    def __str__(self):
        return self.name

    @property
    def is_draft(self) -> bool:
        """Not launched yet: its settings may change and its Launch button is the way to go live."""
        return self.state == self.State.DRAFT

    @property
    def source_label(self) -> str:
        """Where the items come from, for pages and lists."""
        if self.corpus_id and self.corpus is not None:
            return f"corpus {self.corpus.name}"
        if self.payload_set_id and self.payload_set is not None:
            return f"payloads: {self.payload_set.name}"
        return f"responses of job {self.reviews.name}" if self.reviews_id and self.reviews is not None else ""

    @property
    def task_type_label(self) -> str:
        """The task type as the builder reads it (its label); the key of a type no longer registered."""
        from . import task_types

        try:
            return task_types.get(self.task_type).label or self.task_type
        except KeyError:
            return self.task_type


class Item(models.Model):
    class State(models.TextChoices):
        OPEN = "open", "Open"
        COMPLETE = "complete", "Complete"

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="items", db_index=False)  # led by a unique constraint below
    turn = models.ForeignKey(Turn, null=True, blank=True, on_delete=models.PROTECT, related_name="items")
    position = models.PositiveIntegerField(help_text="Order in which items are offered.")
    payload = models.JSONField(help_text="What the annotator sees, built by the task type.")
    state = models.CharField(max_length=16, choices=State.choices, default=State.OPEN)
    subject_response = models.ForeignKey(
        "Response",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="review_items",
        help_text="For an item of a vote job: the response under review.",
    )
    gold = models.JSONField(
        null=True,
        blank=True,
        help_text="Known answer of a gold item (mixed into the work to check workers); null for ordinary items.",
    )

    class Meta:
        ordering = ["job", "position"]
        constraints = [
            models.UniqueConstraint(fields=["job", "position"], name="item_unique_position"),
            models.UniqueConstraint(fields=["job", "turn"], name="item_unique_turn"),
        ]
        indexes = [models.Index(fields=["job", "state", "position"])]


class Worker(models.Model):
    """An annotator identity: an in-house user, or a crowd worker known by the provider's id."""

    #: The provider key of workers who log in to Quorum itself, the one place it is spelled (hits' in-house
    #: provider takes it as its key); every other key is a crowd provider's (hits' registry finds them;
    #: annotation never needs their names).
    INHOUSE = "inhouse"

    provider = models.CharField(
        max_length=16, default=INHOUSE, help_text="Where the worker comes from: in-house, or a crowd provider's key."
    )
    external_id = models.CharField(max_length=200, help_text="User name in-house; the provider's worker id otherwise.")
    user = models.OneToOneField(django_settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="worker")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["provider", "external_id"], name="worker_unique_identity")]

    def __str__(self):
        return f"{self.provider}:{self.external_id}"

    @property
    def is_in_house(self) -> bool:
        """In-house workers log in to Quorum; a crowd worker's responses wait for the provider's confirmation."""
        return self.provider == self.INHOUSE


class Slot(models.Model):
    """One unit of redundancy of an item: an item of redundancy r has r slots.

    A worker claims a slot; the item is bound to the worker at claim time. Because slots are
    rows created with the item, an item can never collect more responses than its redundancy,
    and the partial unique constraint keeps a worker to one slot per item.
    """

    class State(models.TextChoices):
        OPEN = "open", "Open"
        CLAIMED = "claimed", "Claimed"
        SUBMITTED = "submitted", "Submitted"

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="slots", db_index=False)  # led by a unique constraint below
    # The (job, state, position) index below leads with job: an index of job alone would be one
    # more entry to write on every claim and submission.
    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="+", db_index=False, help_text="Copy of item.job, for the claim query.")
    index = models.PositiveSmallIntegerField()
    position = models.PositiveIntegerField(help_text="Copy of item.position, for the claim query's order.")
    collection = models.PositiveSmallIntegerField(
        default=1, db_default=1,  # the bulk writers insert slots without naming it
        help_text="Which collection of its item this slot is: 1 for the item's first, k + 1 for a slot added when a "
        "response of collection k was turned down (voting's rounds count these).",
    )
    state = models.CharField(max_length=16, choices=State.choices, default=State.OPEN)
    worker = models.ForeignKey(Worker, null=True, blank=True, on_delete=models.PROTECT, related_name="slots", db_index=False)  # led by slot_worker_job_state
    claimed_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    barred_worker = models.ForeignKey(
        Worker,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
        db_index=False,  # the partial index below: most slots bar no one
        help_text="A worker who may never hold this slot: the author of the response a vote slot reviews.",
    )

    class Meta:
        ordering = ["job", "position", "index"]
        constraints = [
            models.UniqueConstraint(fields=["item", "index"], name="slot_unique_index"),
            # Worker first: the claim probes it with both columns, and a count of one worker's
            # slots that the planner sends here (as it does while the statistics still say every
            # slot is open) reads that worker's entries, not every taken slot of every job.
            models.UniqueConstraint(
                fields=["worker", "item"], condition=Q(worker__isnull=False), name="slot_one_worker_per_item"
            ),
            models.CheckConstraint(
                condition=(Q(state="open") & Q(worker__isnull=True)) | (~Q(state="open") & Q(worker__isnull=False)),
                name="slot_worker_iff_taken",
            ),
            # The database guard behind "never a vote on the worker's own rewrite". NULL on either
            # side makes the comparison NULL, which a CHECK accepts.
            models.CheckConstraint(condition=~Q(worker=F("barred_worker")), name="slot_not_barred_worker"),
        ]
        indexes = [
            models.Index(fields=["job", "state", "position"]),
            # A slot row is rewritten on every claim and submission, and every index takes a new
            # entry each time unless its condition leaves the row out: the sweep of lapsed claims
            # only reads claimed slots, and only vote slots bar a worker.
            models.Index(fields=["expires_at"], condition=Q(state="claimed"), name="slot_claimed_expiry"),
            models.Index(fields=["barred_worker"], condition=Q(barred_worker__isnull=False), name="slot_barred_worker"),
            # A worker's submitted slots in a job: what the work page counts as their responses,
            # without reading each response's item.
            models.Index(fields=["worker", "job", "state"], name="slot_worker_job_state"),
        ]


class SkippedItem(models.Model):
    """An item a worker gave back; it is not offered to that worker again."""

    worker = models.ForeignKey(Worker, on_delete=models.CASCADE, related_name="skipped_items")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="skips")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["worker", "item"], name="skip_once_per_worker_item")]


class ResponseQuerySet(models.QuerySet):
    def counted(self):
        """The responses whose data count: the one definition that exports, hard subsets, agreement,
        worker flags and evaluation ratings all use (DESIGN.md, "Responses")."""
        return self.filter(status__in=Response.COUNTED)

    def confirmed(self):
        """Every response known to be real: all but crowd responses the provider has not confirmed.

        Evidence about how workers work (worker flags, the audit CSV) reads these: a rewrite that was
        pasted and then voted down no longer counts, but it is still what its author did.
        """
        return self.exclude(status=Response.Status.AWAITING_CONFIRMATION)


class WorkSecondsField(models.FloatField):
    """Seconds from a response's claim to its submission, written with the row.

    Stored, not computed when read: the job page averages it over every response, and on SQLite a
    timestamp difference is a Python function called row by row (issue 26). Fields are prepared in
    their declared order, so `submitted_at` (auto_now_add) has its value when this one is computed,
    on `save()` and on `bulk_create()` alike."""

    def pre_save(self, model_instance, add):
        claimed, submitted = model_instance.claimed_at, model_instance.submitted_at
        value = None if claimed is None or submitted is None else (submitted - claimed).total_seconds()
        setattr(model_instance, self.attname, value)
        return value


class Response(models.Model):
    """One worker's answer to one item, and where it stands in its life.

    States, and who moves them (only through `annotation.services.responses.transition`, which
    writes a `ResponseTransition` row and sends `signals.response_status_changed`):

    - awaiting_confirmation: came through a crowd entry; the provider has not confirmed that the
      assignment or submission exists (hits confirms or rejects it);
    - awaiting_review: under vote (the voting service decides it);
    - held: its author failed gold and was soft-blocked; a reviewer decides;
    - accepted: counts;
    - rejected: not paid, data left out;
    - excluded: paid, data left out.

    Only `accepted` counts (`Response.objects.counted()`).
    """

    class Status(models.TextChoices):
        AWAITING_CONFIRMATION = "awaiting_confirmation", "Awaiting provider confirmation"
        AWAITING_REVIEW = "awaiting_review", "Awaiting review (under vote)"
        HELD = "held", "Held for review (author failed gold)"
        ACCEPTED = "accepted", "Accepted"
        REJECTED = "rejected", "Rejected (not paid)"
        EXCLUDED = "excluded", "Excluded (paid, data left out)"

    COUNTED = (Status.ACCEPTED,)
    #: States a reviewer or the crowd settlement puts a response in; the others are on the way there.
    SETTLED = (Status.ACCEPTED, Status.REJECTED, Status.EXCLUDED)
    #: from -> the states a response may move to; "" is a response being stored.
    TRANSITIONS = {
        "": (Status.ACCEPTED, Status.AWAITING_CONFIRMATION),
        Status.AWAITING_CONFIRMATION: (Status.ACCEPTED, Status.REJECTED, Status.EXCLUDED),
        Status.ACCEPTED: (Status.AWAITING_REVIEW, Status.HELD, Status.REJECTED, Status.EXCLUDED),
        Status.AWAITING_REVIEW: (Status.ACCEPTED, Status.HELD, Status.REJECTED, Status.EXCLUDED),
        Status.HELD: (Status.ACCEPTED, Status.REJECTED, Status.EXCLUDED),
        Status.REJECTED: (Status.ACCEPTED, Status.EXCLUDED),
        Status.EXCLUDED: (Status.ACCEPTED, Status.REJECTED),
    }

    slot = models.OneToOneField(Slot, on_delete=models.PROTECT, related_name="response")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="responses", db_index=False)  # led by the indexes below
    worker = models.ForeignKey(Worker, on_delete=models.PROTECT, related_name="responses")
    answers = models.JSONField(help_text="The response, in the task type's schema.")
    checks = models.JSONField(default=dict, blank=True, help_text="Outcome of the automatic checks at submission.")
    status = models.CharField(
        max_length=24, choices=Status.choices, help_text="Where the response stands; see the class docstring."
    )
    claimed_at = models.DateTimeField()
    submitted_at = models.DateTimeField(auto_now_add=True)
    active_seconds = models.FloatField(null=True, blank=True, help_text="Time the page was in use, as the browser measured it.")
    work_seconds = WorkSecondsField(
        null=True, blank=True, editable=False,
        help_text="Seconds from the claim to the submission (submitted_at - claimed_at), stored when the response is written.",
    )
    telemetry = models.JSONField(
        default=dict,
        blank=True,
        help_text='Typing telemetry the annotator page records (workers are told): per field {"pasted_chars", "typed_chars", "keystrokes"}.',
    )
    typing = models.JSONField(
        default=dict,
        blank=True,
        help_text=(
            "The typing-process log of each free-text field (timing only, never which keys; workers are told): "
            '{field: record} in the format of annotation/text/typing_log.py, or {field: {"malformed": why}}. '
            "Emptied after QUORUM_TYPING_LOG_RETENTION_DAYS."
        ),
    )

    objects = ResponseQuerySet.as_manager()

    class Meta:
        ordering = ["submitted_at"]
        constraints = [
            models.UniqueConstraint(fields=["item", "worker"], name="response_one_per_worker_per_item"),
            models.CheckConstraint(
                condition=Q(status__in=[
                    "awaiting_confirmation", "awaiting_review", "held", "accepted", "rejected", "excluded"
                ]),
                name="response_status_known",
            ),
        ]
        indexes = [models.Index(fields=["item", "status"])]


class ResponseTransition(models.Model):
    """The audit trail of a response's life: one row per move, written by the transition service."""

    response = models.ForeignKey(Response, on_delete=models.CASCADE, related_name="transitions", db_index=False)  # led by the index below
    from_status = models.CharField(max_length=24, blank=True, help_text="Empty when the response was stored.")
    to_status = models.CharField(max_length=24, choices=Response.Status.choices)
    actor = models.CharField(
        max_length=64, help_text="What moved it: worker, voting, gold, reviewer, flags, provider:<key>, migration."
    )
    by = models.ForeignKey(
        django_settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
        db_index=False,  # the partial index below: a submission's own row names no person
        help_text="The person who moved it, when a person did.",
    )
    reason = models.TextField(blank=True, help_text="Why, in words a reviewer can act on.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["response", "created_at", "pk"]
        indexes = [
            models.Index(fields=["response", "created_at"]),
            models.Index(fields=["by"], condition=Q(by__isnull=False), name="transition_by_person"),
        ]

    def __str__(self):
        return f"{self.response_id}: {self.from_status or '(new)'} -> {self.to_status} by {self.actor}"


# RADDLE's speech-error sets run from 10% to 30% WER; below 5% the clean floor of the simulated
# pipeline is in the way, above 50% the text is mostly noise.
SPEECH_ERRORS_MIN_WER, SPEECH_ERRORS_MAX_WER = 0.05, 0.5


class ExportRun(BackgroundRun):
    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="export_runs")
    directory = models.CharField(max_length=500, blank=True, help_text="Where the export files were written.")
    files = models.JSONField(default=list, blank=True, help_text="Names of the files written, relative to directory.")
    include_audio = models.BooleanField(default=False, help_text="Spoken-reading jobs: also copy the recordings into the export (audio/).")
    speech_errors_wer = models.FloatField(
        null=True, blank=True, validators=[MinValueValidator(SPEECH_ERRORS_MIN_WER), MaxValueValidator(SPEECH_ERRORS_MAX_WER)],
        help_text=f"Add a speech_errors/ test set whose user turns carry simulated ASR errors at this corpus word error rate "
        f"({SPEECH_ERRORS_MIN_WER:g} to {SPEECH_ERRORS_MAX_WER:g}); empty: none.",
    )
    speech_errors_seed = models.PositiveIntegerField(default=0, help_text="Seed of the speech-error noise; the same seed gives the same text.")
    out_of_domain_corpus = models.ForeignKey(
        Corpus, null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
        help_text="Add an out-of-domain test set (RADDLE; the export's out_of_domain/ folder) whose user turns are mixed with utterances of this other corpus; empty: none.",
    )
    out_of_domain_rate = models.FloatField(
        null=True, blank=True, validators=[MinValueValidator(0.0), MaxValueValidator(1.0)],
        help_text="Share of user turns replaced or interleaved with an out-of-domain utterance (above 0, at most 1).",
    )
    out_of_domain_seed = models.PositiveIntegerField(default=0, help_text="Seed of the out-of-domain draw; the same seed gives the same set.")
    out_of_domain_mode = models.CharField(
        max_length=16, default="replace", choices=[("replace", "Replace the user turn"), ("interleave", "Insert before the user turn")],
        help_text="replace: the utterance takes the user turn's place; interleave: it is inserted before it, with the system's default answer.",
    )

    class Meta(BackgroundRun.Meta):
        constraints = [
            models.CheckConstraint(
                condition=models.Q(speech_errors_wer__isnull=True)
                | models.Q(speech_errors_wer__gte=SPEECH_ERRORS_MIN_WER, speech_errors_wer__lte=SPEECH_ERRORS_MAX_WER),
                name="export_speech_errors_wer_in_range",
            )
        ]


class JobCreationRun(BackgroundRun):
    """A corpus job asked for on the job form, made in the background (a job over 100,000 turns
    writes its items and slots for tens of seconds): the request as checked, then the job, made in
    one transaction with its items and slots, or the reason nothing was made."""

    corpus = models.ForeignKey(Corpus, on_delete=models.CASCADE, related_name="job_creation_runs", help_text="The corpus whose turns become items.")
    name = models.CharField(max_length=200, help_text="The job's name.")
    task_type = models.CharField(max_length=32, help_text="Key of the job's task type in the registry.")
    settings = models.JSONField(default=dict, blank=True, help_text="The task-type settings as asked for; checked again by the run.")
    selection = models.JSONField(
        default=dict, blank=True, help_text='Which turns become items: {"mode": "all" | "sample" | "dialogs", "size", "seed", "dialog_ids"}.'
    )
    redundancy = models.PositiveSmallIntegerField(default=1, help_text="Responses wanted per item.")
    reward = models.DecimalField(max_digits=8, decimal_places=2, default=Decimal("0.50"), help_text="Pay per response, in USD.")
    instructions = models.TextField(blank=True, help_text="Shown to annotators above every item.")
    claim_timeout_minutes = models.PositiveSmallIntegerField(default=30, help_text="A claimed slot is freed after this many minutes.")
    annotator_ids = models.JSONField(default=list, blank=True, help_text="Ids of the in-house Workers the job is open to; empty means all.")
    job = models.OneToOneField(
        Job, null=True, blank=True, on_delete=models.SET_NULL, related_name="creation_run", help_text="The job made, once the run succeeded."
    )
    error_field = models.CharField(
        max_length=32, blank=True, help_text="The field of the request a failure is about (e.g. selection.size), so the job form can show it there."
    )


# --- Quality control (issue 5): voting with re-collection, gold checks, worker flags, overrides ---


class OnVotedDown(models.TextChoices):
    REJECT = "reject", "Reject (not paid)"
    SOFT_REJECT = "soft_reject", "Soft-reject (paid, data excluded)"


class DecisionRule(models.TextChoices):
    PUBLISHED = "published", "Published rule: votes against at the threshold (CGoDial: two of three)"
    MODEL = "model", "Reliability model: the posterior that the response is unusable, each voter weighed by the last sweep"


class QualityPolicy(models.Model):
    """A job's quality-control settings. Absent means: no voting, no gold, default flag thresholds."""

    job = models.OneToOneField(Job, on_delete=models.CASCADE, related_name="quality")
    # Voting (PROTOCOLS.md section 5).
    voting_enabled = models.BooleanField(
        default=False, help_text="Show every response to other workers, who vote whether it is recognizable and unambiguous."
    )
    votes_per_response = models.PositiveSmallIntegerField(
        default=3, validators=[MinValueValidator(1)], help_text="Votes collected per response (CGoDial: three other workers)."
    )
    against_threshold = models.PositiveSmallIntegerField(
        default=2, validators=[MinValueValidator(1)], help_text="Votes against at or above which a response is re-collected (CGoDial: two)."
    )
    max_rounds = models.PositiveSmallIntegerField(
        default=3,
        validators=[MinValueValidator(1)],
        help_text="Collections per item before a response that is voted down again is flagged for the builder instead.",
    )
    on_voted_down = models.CharField(
        max_length=16,
        choices=OnVotedDown.choices,
        default=OnVotedDown.SOFT_REJECT,
        help_text="What happens to a response that is voted down.",
    )
    # Who decides a vote (issue 22).
    decision_rule = models.CharField(
        max_length=16, choices=DecisionRule.choices, default=DecisionRule.PUBLISHED,
        help_text="How a vote is decided once its votes are in: the published rule (re-collected at the set number of votes "
        "against), or the reliability model stored by the last flag sweep (voters the model has not seen "
        "count as right 75% of the time); with the model, fewer votes per response (two) usually suffice.",
    )
    model_sure = models.FloatField(
        default=0.85,
        help_text="With the model: decide once the posterior that the response is unusable (or usable) reaches this; "
        "below it, ask one more voter.",
    )
    model_max_votes = models.PositiveSmallIntegerField(
        default=5, validators=[MinValueValidator(1)],
        help_text="With the model: the most votes asked for one response; at this many the more probable outcome decides.",
    )
    # Gold items and onboarding.
    gold_start_rate = models.FloatField(
        default=0.5, help_text="Share of gold items among the first items of a worker's session."
    )
    gold_floor_rate = models.FloatField(default=0.1, help_text="Share of gold items once the session is under way.")
    gold_decay_items = models.PositiveSmallIntegerField(
        default=10, help_text="Items over which the gold share falls from the start rate to the floor rate."
    )
    session_gap_minutes = models.PositiveSmallIntegerField(
        default=30, validators=[MinValueValidator(1)], help_text="A pause this long starts a new session."
    )
    onboarding_items = models.PositiveSmallIntegerField(
        default=0, help_text="Gold items a worker answers before any real work (0: no onboarding qualification)."
    )
    onboarding_pass_rate = models.FloatField(
        default=0.8, help_text="Share of onboarding gold items a worker must answer correctly to qualify."
    )
    gold_min_answered = models.PositiveSmallIntegerField(
        default=5, help_text="Gold answers needed before the failure rate can soft-block a worker."
    )
    gold_max_failure_rate = models.FloatField(
        default=0.3, help_text="A worker failing more than this share of gold items is soft-blocked and their pending work is held for review."
    )
    # Worker flags (evidence for a reviewer).
    fast_ratio = models.FloatField(
        default=0.25, help_text="Flag a response whose time is below this share of the job's median time per response."
    )
    flag_share = models.FloatField(
        default=0.2,
        help_text="Flag a worker when at least this share of their responses carry a response flag (fast, pasted, near-duplicate).",
    )
    straight_line_share = models.FloatField(
        default=0.9, help_text="Flag a rater who gives the same rating to at least this share of their items, once they have rated as many as Pattern min ratings says."
    )
    pattern_min_ratings = models.PositiveSmallIntegerField(
        default=10, help_text="Ratings a worker must have before straight-lining or alternating patterns are judged (at least 1)."
    )
    low_agreement = models.FloatField(
        default=0.5, help_text="Flag a rater who agrees with the other raters of the same items less often than this share."
    )
    paste_share = models.FloatField(
        default=0.5, help_text="Flag a response when at least this share of its text was pasted rather than typed."
    )
    near_duplicate_similarity = models.FloatField(
        default=0.9, help_text="Flag rewrites of different workers whose similarity (0-1) is at least this."
    )
    # Typing-process flags (annotation/quality/typing.py, which says where each default comes from).
    transcription_pause_share = models.FloatField(
        default=0.015,
        help_text="Flag typing as transcription when fewer than this share of its key intervals are hesitations of 1 s or more "
        "(composing lengthens the intervals between words; Conijn et al. 2019).",
    )
    transcription_min_chars = models.PositiveIntegerField(
        default=40, help_text="Characters a field must have typed before its rhythm is judged as transcription."
    )
    offscreen_min_chars = models.PositiveIntegerField(
        default=20, help_text="Flag an insertion without typing of at least this many characters made after the page was left (composed off-screen)."
    )
    synthetic_min_chars = models.PositiveIntegerField(
        default=10, help_text="Flag a field when at least this many characters arrived with no key pressed (autofill, script)."
    )
    implausible_iki_ms = models.PositiveIntegerField(
        default=60,
        help_text="Flag typing whose fastest run of 20 keys has a median interval below this many milliseconds "
        "(60 ms = 200 words a minute; the fastest of 168,000 typists averaged about 120, Dhakal et al. 2018).",
    )
    revision_free_min_chars = models.PositiveIntegerField(
        default=200, help_text="Flag a text at least this long typed without one deletion, undo or cut."
    )
    flags_reject = models.BooleanField(
        default=False, help_text="Soft-reject flagged responses automatically (off: flags are evidence for a reviewer); "
        "a spoken reading worth a listen is never rejected by its flag alone: a person listens and decides."
    )

    class Meta:
        verbose_name_plural = "quality policies"
        constraints = [
            models.CheckConstraint(
                condition=Q(against_threshold__gte=1) & Q(against_threshold__lte=F("votes_per_response")),
                name="quality_threshold_within_votes",
            ),
            models.CheckConstraint(condition=Q(max_rounds__gte=1), name="quality_max_rounds_positive"),
            # Patterns judged on 0 ratings flag everyone and break every page of the job
            # (services.quality.COUNT_MINIMUMS holds the same minimum for the form and the API).
            models.CheckConstraint(condition=Q(pattern_min_ratings__gte=1), name="quality_pattern_min_ratings_positive"),
        ]


class ReviewRound(models.Model):
    """One response of an item under vote: round k is the k-th collection of that item.

    State machine (transitions only in annotation.services.voting):
    voting -> passed | recollected | exhausted | cancelled; all four are final.
    """

    class State(models.TextChoices):
        VOTING = "voting", "Voting"
        PASSED = "passed", "Passed"
        RECOLLECTED = "recollected", "Voted down, re-collected"
        EXHAUSTED = "exhausted", "Voted down at the last round; flagged for the builder"
        CANCELLED = "cancelled", "Cancelled (settled by a reviewer)"

    FINAL = (State.PASSED, State.RECOLLECTED, State.EXHAUSTED, State.CANCELLED)

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="review_rounds", help_text="The reviewed item.")
    response = models.OneToOneField(Response, on_delete=models.CASCADE, related_name="review_round")
    vote_item = models.OneToOneField(
        Item, null=True, blank=True, on_delete=models.SET_NULL, related_name="reviewed_round", help_text="The item of the vote job."
    )
    round = models.PositiveSmallIntegerField(help_text="1 for the first collection of the item, 2 after one re-collection, ...")
    state = models.CharField(max_length=16, choices=State.choices, default=State.VOTING)
    votes_for = models.PositiveSmallIntegerField(default=0)
    votes_against = models.PositiveSmallIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["item", "round", "id"]
        indexes = [models.Index(fields=["item", "state"])]


class WorkerStanding(models.Model):
    """A worker's gold record and standing in one job."""

    class State(models.TextChoices):
        ONBOARDING = "onboarding", "Onboarding"
        QUALIFIED = "qualified", "Qualified"
        SOFT_BLOCKED = "soft_blocked", "Soft-blocked"

    worker = models.ForeignKey(Worker, on_delete=models.CASCADE, related_name="standings")
    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="standings")
    state = models.CharField(max_length=16, choices=State.choices, default=State.ONBOARDING)
    gold_answered = models.PositiveIntegerField(default=0)
    gold_failed = models.PositiveIntegerField(default=0)
    reason = models.TextField(blank=True, help_text="Why the worker was soft-blocked.")
    changed_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["worker", "job"], name="standing_one_per_worker_job")]


class CheckOverride(models.Model):
    """A reviewer's decision that replaces an automatic verdict on a response, with the reason."""

    class Check(models.TextChoices):
        # A decision on a job with nothing automatic to overrule (no vote, say) is still kept here,
        # for its reason and its undo: it says that no verdict was overridden.
        NONE = "none", "None (no automatic verdict)"
        VOTE = "vote", "Vote outcome"
        REWRITE_CHECKS = "rewrite_checks", "Automatic rewrite checks"
        GOLD = "gold", "Gold check"
        FLAGS = "flags", "Worker flags"

    response = models.ForeignKey(Response, on_delete=models.CASCADE, related_name="overrides")
    check_name = models.CharField(max_length=16, choices=Check.choices, help_text="Which automatic verdict is overridden.")
    previous_status = models.CharField(max_length=24, choices=Response.Status.choices)
    new_status = models.CharField(max_length=24, choices=Response.Status.choices)
    reason = models.TextField(help_text="Why the automatic verdict was overridden.")
    by = models.ForeignKey(django_settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    recollected = models.BooleanField(
        default=False, help_text="The decision reopened the item for a new response (re-collect), which an undo cannot take back."
    )
    recollection_withdrawn = models.BooleanField(
        default=False,
        help_text="The decision accepted a response whose item was being collected again, and took back the new slot "
        "no one had started; an undo cannot take that back.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at"]


class DecisionUndo(models.Model):
    """A reviewer's decision taken back (`services.review_undo`): the response returned to the state
    it had before the decision; `transition` is the audit row of that move, with the reason."""

    override = models.OneToOneField(
        CheckOverride, on_delete=models.CASCADE, related_name="undo", help_text="The decision that was undone."
    )
    transition = models.ForeignKey(
        ResponseTransition, on_delete=models.CASCADE, related_name="+", help_text="The move back, in the response's audit trail."
    )
    reason = models.TextField(help_text="Why the decision was undone.")
    by = models.ForeignKey(
        django_settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
        help_text="The organizer who undid it.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return f"undo of decision {self.override_id}"


class ReviewerPreference(models.Model):
    """How an organizer likes the review queue: remembered per user, across sessions and devices."""

    user = models.OneToOneField(django_settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="review_preference")
    compact = models.BooleanField(
        default=False, help_text="Show the review queue as a compact table (one row per response) instead of full cards."
    )

    def __str__(self):
        return f"{self.user_id}: {'compact' if self.compact else 'full'} review queue"


# --- Stored worker flags (issue 8): computed by the sweep, read by the pages ---------------------


class JobFlagReport(models.Model):
    """A job's worker flags as the last flag run computed them (the beat sweep, or "recompute now").

    Computing flags reads every response of the job, so pages and the API never do it inside a
    request: they show this row and when it was computed. One row per job, replaced by each run
    (`services.quality.apply_flags`); ids are strings here because JSON object keys are.
    """

    job = models.OneToOneField(Job, on_delete=models.CASCADE, related_name="flag_report")
    computed_at = models.DateTimeField(help_text="When the run that computed these flags started reading the responses.")
    responses_seen = models.PositiveIntegerField(default=0, help_text="Responses the flags were computed over (gold items left out).")
    responses_flagged = models.PositiveIntegerField(
        default=0, help_text="How many responses `response_flags` holds: the job page shows the number without reading them."
    )
    response_flags = models.JSONField(
        default=dict, blank=True, help_text='The flagged responses: {"<response id>": ["fast", "pasted", ...]}.'
    )
    response_flag_counts = models.JSONField(
        default=dict, blank=True,
        help_text='How many responses carry each flag: {"fast": 4, "worth_a_listen": 2, ...} '
        "(the job page names them without reading `response_flags`; empty in a report stored before it was counted).",
    )
    worker_flags = models.JSONField(
        default=dict, blank=True,
        help_text='The flagged workers with the evidence: {"<worker id>": [{"code", "message", "value", "count"}, ...]}.',
    )
    worker_measures = models.JSONField(
        default=dict, blank=True, help_text='Every worker\'s measures, flagged or not: {"<worker id>": {"fast_share": 0.1, ...}}.'
    )
    agreement = models.JSONField(
        default=list, blank=True,
        help_text="Krippendorff's alpha per question as the same run computed it: "
        '[{"question", "level", "alpha", "note", "units", "values"}, ...] (the job page reads it; the API computes it live).',
    )

    def __str__(self):
        return f"flags of job {self.job_id} at {self.computed_at:%Y-%m-%d %H:%M}"


class LatestAttempt(models.Model):
    """The latest attempt at a piece of background work of one owner (a job's flag run, a campaign's
    results): queued, running, then succeeded or failed with the reason. One row per owner, updated
    by each attempt through `services.attempts.AttemptRecord`; what the work produces is stored
    elsewhere, and a failed attempt leaves it as it was, so pages show the earlier output with the
    failure named beside it. Not a `BackgroundRun`: such work has no units to count and no result of
    its own to keep. A concrete model adds the owner as a one-to-one field."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"

    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED, help_text="Where the latest attempt stands.")
    requested_by = models.ForeignKey(
        django_settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
        help_text="Who asked for the latest attempt (a page or the API); empty when the beat sweep or the system started it.",
    )
    queued_at = models.DateTimeField(
        null=True, blank=True, help_text="When the latest attempt was asked for and queued; empty when the beat sweep queued it.",
    )
    started_at = models.DateTimeField(null=True, blank=True, help_text="When a worker started the latest attempt; empty while queued.")
    finished_at = models.DateTimeField(null=True, blank=True, help_text="When the latest attempt succeeded or failed; empty until then.")
    error = models.TextField(
        blank=True,
        help_text="Failed: why, in words (the error's type and message, no traceback). Queued: why it may not have reached a "
        "worker (the broker refused it; the beat sweep queues it again). Empty otherwise.",
    )

    class Meta:
        abstract = True


class FlagRun(LatestAttempt):
    """The latest attempt at a job's flag run, whoever asked for it ("recompute now", the beat
    sweep); the report it produces is `JobFlagReport` (`services.flag_runs`)."""

    job = models.OneToOneField(Job, on_delete=models.CASCADE, related_name="flag_run", help_text="The job whose flags the run computes.")

    def __str__(self):
        return f"flag run of job {self.job_id}: {self.status}"


# --- Worker reliability (issue 22): fitted by the flag sweep, read by pages, exports and voting ---


class JobReliability(models.Model):
    """The reliability model of a job's categorical judgements as the last flag run fitted it
    (`services.reliability`, pure maths in `quality/reliability.py`). One row per job, replaced by
    each run; ids are strings because JSON object keys are."""

    job = models.OneToOneField(Job, on_delete=models.CASCADE, related_name="reliability")
    computed_at = models.DateTimeField(help_text="When the run that fitted the model started reading the responses.")
    judgements = models.PositiveIntegerField(default=0, help_text="Categorical answers the model was fitted on.")
    labels = models.JSONField(default=list, blank=True, help_text="The answer values, in the order of every matrix row and column.")
    priors = models.JSONField(default=list, blank=True, help_text="Estimated share of each true label.")
    tasks = models.JSONField(
        default=dict, blank=True,
        help_text='Per judged task ("<response id>:<part>" for votes, "<item id>:<question>" otherwise): '
        '{"outcome", "confidence", "majority", "majority_share", "answers"}.',
    )
    workers = models.JSONField(
        default=dict, blank=True,
        help_text='Per worker: {"answers", "accuracy", "accuracy_interval", "spammer_score", "spammer_interval", "confusion", "label_counts"}.',
    )
    writers = models.JSONField(
        default=dict, blank=True,
        help_text='For a vote job, per author of the voted responses: {"parts", "usable", "usable_interval"} '
        "(the expected share of their voted parts the model judges usable).",
    )

    def __str__(self):
        return f"reliability of job {self.job_id} at {self.computed_at:%Y-%m-%d %H:%M}"


# --- Spoken readings (issue 14): the audio of a spoken_reading response, and its transcription ----


def audio_storage():
    """The storage readings live in: STORAGES["audio"] (local files by default, a bucket by setting).
    A callable, so that changing the setting needs no migration."""
    from django.core.files.storage import storages

    return storages["audio"]


def reading_path(reading, filename: str) -> str:
    # Grouped by job and response, so an operator can find (and a bucket policy scope) one job's audio.
    return f"readings/job-{reading.job_id}/response-{reading.response_id}/reading-{reading.index + 1}.wav"


class SpokenReading(models.Model):
    """One recording of a `spoken_reading` response (reading `index` of k), the WAV in the audio
    storage, and what the ASR backend heard. Written by `services.readings`; the file is removed from
    storage when the row goes (with its response or job), after the deleting transaction commits."""

    response = models.ForeignKey(Response, on_delete=models.CASCADE, related_name="readings", db_index=False)  # led by the unique constraint
    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="+", help_text="Copy of response.item.job, for the path and job-wide reads.")
    index = models.IntegerField(help_text="Which reading of the response, from 0.")
    audio = models.FileField(storage=audio_storage, upload_to=reading_path, max_length=300, help_text="16-bit PCM WAV, mono.")
    seconds = models.FloatField(help_text="Duration of the recording.")
    sample_rate = models.PositiveIntegerField(help_text="Samples per second of the stored WAV.")
    asr_text = models.TextField(blank=True, default="", help_text="What the ASR backend heard (the hypothesis); empty until transcribed.")
    asr_confidence = models.FloatField(null=True, blank=True, help_text="The backend's confidence in the hypothesis, 0 to 1, if it gives one.")
    decode_seconds = models.FloatField(null=True, blank=True, help_text="Wall-clock seconds the transcription took.")
    asr_backend = models.CharField(max_length=60, blank=True, default="", help_text="Which ASR backend transcribed it.")
    transcribed_at = models.DateTimeField(null=True, blank=True, help_text="When the hypothesis was stored; empty: not yet.")
    asr_error = models.TextField(blank=True, default="", help_text="Why the last transcription attempt failed, if it did.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["response_id", "index"]
        constraints = [
            models.UniqueConstraint(fields=["response", "index"], name="reading_one_per_index"),
            models.CheckConstraint(condition=Q(index__gte=0), name="reading_index_not_negative"),
            models.CheckConstraint(condition=Q(seconds__gt=0), name="reading_seconds_positive"),
        ]

    def __str__(self):
        return f"reading {self.index + 1} of response {self.response_id}"
