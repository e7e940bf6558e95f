"""How work reaches a crowd and is paid: crowd settings per job, postings, provider assignments,
payments and blocks.

Every row that stands for a call to a provider is written before the call (an intent) and carries
a token derived from our own ids, so a retry after a crash repeats the same request instead of
making a new one. State changes happen only through `hits.services`. The invariants that must hold
under concurrency are constraints: unique tokens and keys, and committed spend never above the
budget (`crowd_committed_within_budget`; the services also take a row lock on the config).
"""
from decimal import Decimal

from django.conf import settings as django_settings
from django.core.validators import MinValueValidator
from django.db import models
from django.db.models import F, Q

from annotation.models import Job, Response, Slot, Worker

from . import providers

#: Hours accepted crowd work waits for the builder before it is paid, unless the job says otherwise.
REVIEW_HOURS_DEFAULT = 24


class JobCrowdConfig(models.Model):
    """Which crowd a job runs on, what it may spend, and what the workers must meet."""

    job = models.OneToOneField(Job, on_delete=models.CASCADE, related_name="crowd")
    # The providers are the registry's packages (hits/providers/): the choices are read from it when
    # asked, and a migration names the function, not the list, so a new crowd needs no migration.
    provider = models.CharField(max_length=16, choices=providers.choices, default=providers.default_key)
    budget = models.DecimalField(
        max_digits=12, decimal_places=2, null=True, blank=True,
        help_text="Most this job may spend, fees included, in USD. Required for Prolific and MTurk.",
    )
    committed = models.DecimalField(
        max_digits=12, decimal_places=2, default=Decimal("0.00"),
        help_text="Cost of what is posted or paid so far, fees included; changed only under a row lock.",
    )
    minutes_per_assignment = models.DecimalField(
        max_digits=6, decimal_places=2, default=Decimal("2.00"), validators=[MinValueValidator(Decimal("0.1"))],
        help_text="Estimated time per assignment, for the effective hourly pay and the provider listing.",
    )
    auto_approval_days = models.PositiveSmallIntegerField(
        default=3, validators=[MinValueValidator(1)],
        help_text="The provider approves a submission by itself after this many days; Quorum settles before.",
    )
    # A day by default: worker flags come from a sweep every 15 minutes and votes take longer still, so
    # paying at the next reconciliation would pay work before anything could say it is bad; a day is
    # one look a day for the builder, and still well inside the providers' own approval deadlines.
    review_hours = models.PositiveSmallIntegerField(
        default=REVIEW_HOURS_DEFAULT,
        help_text="Hours after a submission during which accepted work waits for a builder's decision (reject it, or "
        f"leave it to be paid) before Quorum approves and pays it; {REVIEW_HOURS_DEFAULT} by default, 0 pays it at the "
        "next reconciliation. Work is settled before the provider's own auto-approval deadline whatever this says.",
    )
    assignments_per_posting = models.PositiveSmallIntegerField(
        default=9, validators=[MinValueValidator(1)],
        help_text="MTurk: assignments per HIT (10 or more raises MTurk's fee from 20% to 40%).",
    )
    lifetime_days = models.PositiveSmallIntegerField(default=7, validators=[MinValueValidator(1)])
    requirements = models.JSONField(
        default=dict, blank=True,
        help_text="Worker requirements: the shared keys of hits.policy.requirements and each provider's requirement "
        "options (hits/providers/<provider>/options.py).",
    )
    provider_options = models.JSONField(
        default=dict, blank=True,
        help_text="The providers' own settings of this job by option name, as their schemas declare them "
        "(hits/providers/<provider>/options.py); written only by hits.services.config.",
    )
    pay_unmatched_submissions = models.BooleanField(
        default=True,
        help_text="Approve (pay) a submission the provider has but Quorum never received, instead of rejecting it.",
    )
    title = models.CharField(max_length=200, blank=True, help_text="Listing title; the job name when empty.")
    description = models.TextField(blank=True, help_text="Listing description; the job's instructions when empty.")
    provider_state = models.JSONField(
        default=dict, blank=True,
        help_text="What the provider keeps for the job once made (e.g. its listing type); emptied when the "
        "requirements or options change.",
    )
    rehearsal = models.BooleanField(
        default=False,
        help_text="A copy made by `manage.py rehearse` and posted to a local fake: never posted, reconciled or "
        "paid at a real provider.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(committed__gte=0), name="crowd_committed_not_negative"),
            models.CheckConstraint(
                condition=Q(budget__isnull=True) | Q(committed__lte=F("budget")), name="crowd_committed_within_budget"
            ),
            models.CheckConstraint(condition=Q(budget__isnull=True) | Q(budget__gte=0), name="crowd_budget_not_negative"),
        ]

    def __str__(self):
        return f"{self.job_id} on {self.provider}"


class Posting(models.Model):
    """One listing at a provider: an MTurk HIT, a Prolific study, or the in-house queue.

    A posting is a number of slots, not items: the item is bound when a worker claims it.
    States: intended (row written, call not known to have succeeded) -> created -> expired | closed;
    intended -> failed when the provider refused the request (its cost is released). The places a
    closed posting never filled give their share back once no worker can still be inside (`released_at`).
    """

    class State(models.TextChoices):
        INTENDED = "intended", "Intended (call pending)"
        CREATED = "created", "Created at the provider"
        FAILED = "failed", "Refused by the provider"
        EXPIRED = "expired", "Expired"
        CLOSED = "closed", "Closed"

    OPEN_STATES = (State.INTENDED, State.CREATED)

    job = models.ForeignKey(Job, on_delete=models.PROTECT, related_name="postings")
    provider = models.CharField(max_length=16, choices=providers.choices)
    seq = models.PositiveIntegerField(help_text="Number of the posting within its job, from 1.")
    request_token = models.CharField(
        max_length=64, unique=True, help_text="Idempotency token sent with the create call (MTurk UniqueRequestToken)."
    )
    external_id = models.CharField(max_length=64, null=True, blank=True, help_text="HIT id or study id.")
    state = models.CharField(max_length=16, choices=State.choices, default=State.INTENDED)
    assignments = models.PositiveIntegerField(validators=[MinValueValidator(1)])
    reward = models.DecimalField(max_digits=8, decimal_places=2)
    committed_cost = models.DecimalField(max_digits=12, decimal_places=2, help_text="Reward plus fees for all assignments.")
    attempts = models.PositiveSmallIntegerField(default=0, help_text="Create calls made for this posting.")
    attempted_at = models.DateTimeField(null=True, blank=True, help_text="When the last create call began.")
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    posted_at = models.DateTimeField(null=True, blank=True)
    closed_at = models.DateTimeField(null=True, blank=True, help_text="When Quorum closed the listing at the provider.")
    released_at = models.DateTimeField(
        null=True, blank=True,
        help_text="When the share of the places this closed posting never filled went back to the budget.",
    )

    class Meta:
        ordering = ["job", "seq"]
        constraints = [
            models.UniqueConstraint(fields=["job", "seq"], name="posting_unique_seq"),
            models.UniqueConstraint(
                fields=["provider", "external_id"], condition=Q(external_id__isnull=False), name="posting_unique_external_id"
            ),
            models.CheckConstraint(
                condition=~Q(state="created") | Q(external_id__isnull=False), name="posting_created_has_external_id"
            ),
        ]
        indexes = [models.Index(fields=["state", "provider"])]

    def __str__(self):
        return f"{self.provider}:{self.external_id or self.request_token} ({self.state})"


class ProviderAssignment(models.Model):
    """One worker's turn on a posting (an MTurk assignment, a Prolific submission), linked to the
    slot the worker claimed and the response they gave.

    States: accepted (worker arrived) -> submitted (response saved here, or seen submitted at the
    provider) -> approved | rejected; accepted -> returned (abandoned or returned at the provider);
    accepted | submitted -> void (the provider does not know it: an invented entry, never paid).

    A worker who arrives through an entry link holds one of the posting's places (`place`, 1 to
    `posting.assignments`) until the assignment is returned or void, so a posting never admits more
    workers than it has assignments, however many identities someone invents.
    """

    class State(models.TextChoices):
        ACCEPTED = "accepted", "Accepted (working)"
        SUBMITTED = "submitted", "Submitted"
        APPROVED = "approved", "Approved (paid)"
        REJECTED = "rejected", "Rejected (not paid)"
        RETURNED = "returned", "Returned or abandoned"
        VOID = "void", "Unknown at the provider (never paid)"

    SETTLED = (State.APPROVED, State.REJECTED)
    #: States that no longer hold a place on the posting.
    ENDED = (State.RETURNED, State.VOID)

    posting = models.ForeignKey(Posting, on_delete=models.PROTECT, related_name="assignments_at_provider")
    provider = models.CharField(max_length=16, choices=providers.choices)
    external_id = models.CharField(max_length=64, help_text="MTurk assignment id or Prolific submission (session) id.")
    worker = models.ForeignKey(Worker, on_delete=models.PROTECT, related_name="provider_assignments")
    slot = models.ForeignKey(Slot, null=True, blank=True, on_delete=models.SET_NULL, related_name="provider_assignments")
    response = models.OneToOneField(
        Response, null=True, blank=True, on_delete=models.SET_NULL, related_name="provider_assignment"
    )
    state = models.CharField(max_length=16, choices=State.choices, default=State.ACCEPTED)
    provider_status = models.CharField(max_length=32, blank=True, help_text="Status as the provider last reported it.")
    return_url = models.URLField(max_length=500, blank=True, help_text="MTurk turkSubmitTo, where the worker is sent back.")
    missing_response = models.BooleanField(
        default=False, help_text="Submitted at the provider without a response in Quorum."
    )
    place = models.PositiveSmallIntegerField(
        null=True, blank=True,
        help_text="Which of the posting's places (1 to its assignments) this worker holds; empty once returned or "
        "void, and for assignments first seen by the reconciler.",
    )
    accepted_at = models.DateTimeField(auto_now_add=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    settled_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["accepted_at"]
        constraints = [
            models.UniqueConstraint(fields=["provider", "external_id"], name="provider_assignment_unique_external_id"),
            models.UniqueConstraint(fields=["slot"], condition=Q(slot__isnull=False), name="provider_assignment_one_per_slot"),
            # One worker per place: with places numbered 1..assignments (the service picks them under a
            # row lock on the posting), no more workers than assignments can hold a posting at once.
            models.UniqueConstraint(
                fields=["posting", "place"], condition=Q(place__isnull=False), name="provider_assignment_one_per_place"
            ),
            models.CheckConstraint(condition=Q(place__isnull=True) | Q(place__gte=1), name="provider_assignment_place_from_one"),
            models.CheckConstraint(
                condition=Q(place__isnull=True) | ~Q(state__in=["returned", "void"]),
                name="provider_assignment_ended_holds_no_place",
            ),
        ]
        indexes = [models.Index(fields=["state", "provider"])]

    def __str__(self):
        return f"{self.provider}:{self.external_id} ({self.state})"


class Payment(models.Model):
    """An intent to settle or pay, written before the provider is called.

    States: intended (the call has not been made) -> sent (the call may have reached the provider)
    -> confirmed | failed. A payment in `sent` is only repeated where the provider deduplicates
    the request (MTurk's UniqueRequestToken, approve/reject of one assignment); Prolific's bonus
    payment is not idempotent, so a `sent` Prolific bonus is never paid again, only checked.
    """

    class Kind(models.TextChoices):
        APPROVE = "approve", "Approve"
        REJECT = "reject", "Reject"
        BONUS = "bonus", "Bonus"

    class State(models.TextChoices):
        INTENDED = "intended", "Intended"
        SENT = "sent", "Sent"
        CONFIRMED = "confirmed", "Confirmed"
        FAILED = "failed", "Failed"

    PENDING = (State.INTENDED, State.SENT)

    assignment = models.ForeignKey(ProviderAssignment, on_delete=models.PROTECT, related_name="payments")
    kind = models.CharField(max_length=8, choices=Kind.choices)
    amount = models.DecimalField(max_digits=8, decimal_places=2, default=Decimal("0.00"), help_text="USD, before fees.")
    cost = models.DecimalField(max_digits=10, decimal_places=2, default=Decimal("0.00"), help_text="Amount plus fees, counted against the budget.")
    idempotency_key = models.CharField(max_length=64, unique=True)
    message = models.TextField(blank=True, help_text="Feedback or bonus reason shown to the worker.")
    state = models.CharField(max_length=16, choices=State.choices, default=State.INTENDED)
    provider_reference = models.CharField(max_length=128, blank=True, help_text="e.g. Prolific bulk bonus id.")
    error = models.TextField(blank=True)
    sent_at = models.DateTimeField(null=True, blank=True, help_text="When the paying call began.")
    needs_attention = models.BooleanField(default=False, help_text="The outcome is unknown; check at the provider.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["created_at"]
        constraints = [
            models.CheckConstraint(condition=Q(amount__gte=0), name="payment_amount_not_negative"),
            models.CheckConstraint(condition=~Q(kind="bonus") | Q(amount__gt=0), name="payment_bonus_positive"),
            # One settlement per assignment: approve and reject exclude each other.
            models.UniqueConstraint(
                fields=["assignment"], condition=Q(kind__in=["approve", "reject"]), name="payment_one_settlement"
            ),
        ]
        indexes = [models.Index(fields=["state", "kind"])]

    def __str__(self):
        return f"{self.kind} {self.amount} ({self.state})"


class Block(models.Model):
    """A worker kept from a job (job set) or from every job (job empty).

    Soft: on MTurk a block qualification the worker is excluded by, revocable, not reported to
    the provider. Hard: an MTurk worker block (affects the worker's standing), or a refusal at entry.
    """

    class Kind(models.TextChoices):
        SOFT = "soft", "Soft (block qualification)"
        HARD = "hard", "Hard (provider block)"

    worker = models.ForeignKey(Worker, on_delete=models.CASCADE, related_name="blocks")
    job = models.ForeignKey(Job, null=True, blank=True, on_delete=models.CASCADE, related_name="worker_blocks")
    kind = models.CharField(max_length=8, choices=Kind.choices)
    reason = models.TextField()
    created_by = models.ForeignKey(django_settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    synced_at = models.DateTimeField(null=True, blank=True, help_text="When the provider was told.")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["worker", "job", "kind"], name="block_unique_per_job"),
            models.UniqueConstraint(
                fields=["worker", "kind"], condition=Q(job__isnull=True), name="block_unique_global"
            ),
        ]

    def __str__(self):
        return f"{self.kind} block of {self.worker_id}"


class ProviderEvent(models.Model):
    """A status event a provider pushed to Quorum (a Prolific hook), kept once by its event id.

    Providers deliver events at least once and repeat them on any failure; the unique constraint on
    (provider, event_id) makes a repeat a no-op, whichever process receives it.
    """

    provider = models.CharField(max_length=16, choices=providers.choices)
    event_id = models.CharField(max_length=128, help_text="The provider's id of the event (Prolific's X-Event-ID).")
    event_type = models.CharField(max_length=64)
    resource_id = models.CharField(max_length=64, help_text="What the event is about (a Prolific submission id).")
    status = models.CharField(max_length=32, blank=True, help_text="The status the event reports.")
    outcome = models.CharField(max_length=200, blank=True, help_text="What Quorum did with it.")
    received_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["received_at"]
        constraints = [models.UniqueConstraint(fields=["provider", "event_id"], name="provider_event_once")]

    def __str__(self):
        return f"{self.provider}:{self.event_type} {self.resource_id} {self.status}"
