"""What is annotated and how: corpora, dialogs, turns, jobs, items, slots, responses, workers.

State changes happen only through `annotation.services`; the invariants that must hold under
concurrency (one worker per item, no more responses than the item's redundancy) are database
constraints, not Python checks.
"""
from decimal import Decimal

from django.conf import settings as django_settings
from django.core.validators import MinValueValidator
from django.db import models
from django.db.models import Q


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
    created_by = models.ForeignKey(django_settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "corpora"
        ordering = ["-created_at"]

    def __str__(self):
        return self.name


class Dialog(models.Model):
    corpus = models.ForeignKey(Corpus, on_delete=models.CASCADE, related_name="dialogs")
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
    dialog = models.ForeignKey(Dialog, on_delete=models.CASCADE, related_name="turns")
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
    corpus = models.OneToOneField(Corpus, null=True, blank=True, on_delete=models.SET_NULL, related_name="import_run")


class Job(models.Model):
    class State(models.TextChoices):
        DRAFT = "draft", "Draft"
        LIVE = "live", "Live"
        PAUSED = "paused", "Paused"
        FINISHED = "finished", "Finished"

    name = models.CharField(max_length=200)
    corpus = models.ForeignKey(Corpus, on_delete=models.PROTECT, related_name="jobs")
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
    annotators = models.ManyToManyField(
        "Worker", blank=True, related_name="jobs", help_text="In-house annotators this job is open to; empty means all."
    )
    created_by = models.ForeignKey(django_settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    launched_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [models.CheckConstraint(condition=Q(redundancy__gte=1), name="job_redundancy_positive")]

    def __str__(self):
        return self.name


class Item(models.Model):
    class State(models.TextChoices):
        OPEN = "open", "Open"
        COMPLETE = "complete", "Complete"

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="items")
    turn = models.ForeignKey(Turn, null=True, blank=True, on_delete=models.PROTECT, related_name="items")
    position = models.PositiveIntegerField(help_text="Order in which items are offered.")
    payload = models.JSONField(help_text="What the annotator sees, built by the task type.")
    state = models.CharField(max_length=16, choices=State.choices, default=State.OPEN)

    class Meta:
        ordering = ["job", "position"]
        constraints = [
            models.UniqueConstraint(fields=["job", "position"], name="item_unique_position"),
            models.UniqueConstraint(fields=["job", "turn"], name="item_unique_turn"),
        ]
        indexes = [models.Index(fields=["job", "state", "position"])]


class Worker(models.Model):
    """An annotator identity: an in-house user, or a crowd worker known by the provider's id."""

    provider = models.CharField(max_length=16, default="inhouse", help_text="inhouse, prolific or mturk.")
    external_id = models.CharField(max_length=200, help_text="User name in-house; the provider's worker id otherwise.")
    user = models.OneToOneField(django_settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="worker")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["provider", "external_id"], name="worker_unique_identity")]

    def __str__(self):
        return f"{self.provider}:{self.external_id}"


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

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="slots")
    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="+", help_text="Copy of item.job, for the claim query.")
    index = models.PositiveSmallIntegerField()
    position = models.PositiveIntegerField(help_text="Copy of item.position, for the claim query's order.")
    state = models.CharField(max_length=16, choices=State.choices, default=State.OPEN)
    worker = models.ForeignKey(Worker, null=True, blank=True, on_delete=models.PROTECT, related_name="slots")
    claimed_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["job", "position", "index"]
        constraints = [
            models.UniqueConstraint(fields=["item", "index"], name="slot_unique_index"),
            models.UniqueConstraint(
                fields=["item", "worker"], condition=Q(worker__isnull=False), name="slot_one_worker_per_item"
            ),
            models.CheckConstraint(
                condition=(Q(state="open") & Q(worker__isnull=True)) | (~Q(state="open") & Q(worker__isnull=False)),
                name="slot_worker_iff_taken",
            ),
        ]
        indexes = [
            models.Index(fields=["job", "state", "position"]),
            models.Index(fields=["state", "expires_at"]),
        ]


class Response(models.Model):
    class Status(models.TextChoices):
        SUBMITTED = "submitted", "Submitted"
        ACCEPTED = "accepted", "Accepted"
        REJECTED = "rejected", "Rejected (not paid)"
        SOFT_REJECTED = "soft_rejected", "Soft-rejected (paid, data excluded)"

    slot = models.OneToOneField(Slot, on_delete=models.PROTECT, related_name="response")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="responses")
    worker = models.ForeignKey(Worker, on_delete=models.PROTECT, related_name="responses")
    answers = models.JSONField(help_text="The response, in the task type's schema.")
    checks = models.JSONField(default=dict, blank=True, help_text="Outcome of the automatic checks at submission.")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.SUBMITTED)
    claimed_at = models.DateTimeField()
    submitted_at = models.DateTimeField(auto_now_add=True)
    active_seconds = models.FloatField(null=True, blank=True, help_text="Time the page was in use, as the browser measured it.")

    class Meta:
        ordering = ["submitted_at"]
        constraints = [models.UniqueConstraint(fields=["item", "worker"], name="response_one_per_worker_per_item")]
        indexes = [models.Index(fields=["item", "status"])]


class ExportRun(BackgroundRun):
    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="export_runs")
    directory = models.CharField(max_length=500, blank=True, help_text="Where the export files were written.")
    files = models.JSONField(default=list, blank=True, help_text="Names of the files written, relative to directory.")
