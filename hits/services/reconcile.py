"""Bring Quorum's state in line with the provider's, after a crash, an outage, or a worker who
submitted at the provider but not here. Run by Celery beat; safe to run at any time, any number
of times.

Steps for a job: (1) repeat the calls of postings left `intended` (same request token, so no
duplicate); (2) list each posting's assignments and record what Quorum missed (work its worker took back
at the provider after submitting is returned, never settled: `returns`); (2b) ask the provider
again about responses still awaiting its confirmation; (3) repeat pending payments (never a
non-idempotent one that may have been made); (4) settle every submitted assignment whose response is
decided, and any other before the provider's auto-approval deadline (never one whose response the
provider has not confirmed); (5) close the listings of a job whose slots are all submitted; (6) once no
worker can still be inside a closed listing (the assignment's duration and the grace after its close),
give back the share of the places it never filled. A closed listing is still listed in (2) until then,
so a worker who was inside when it closed is seen and settled.
"""
import logging
from datetime import timedelta
from decimal import Decimal
from typing import NotRequired, TypedDict

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Count, Q
from django.utils import timezone

from annotation.models import Job, Response, Slot, Worker
from annotation.services.claims import release_slot
from quorum.background import after_commit

from .. import providers
from ..models import JobCrowdConfig, Payment, Posting, ProviderAssignment
from . import confirmation
from . import payments as payment_services
from .entry import saved_response_of
from .postings import close_listings, release_unfilled_places, send_postings, stale_intended_postings, surplus_places
from .returns import returned_after_submitting

log = logging.getLogger(__name__)
UNMATCHED_REJECTION = (
    "We did not receive your answers for this task in our system, so we cannot accept this submission. "
    "If you believe this is our mistake, please contact us with your worker id and the task name."
)

REJECTION_MESSAGE = (
    "Your answers did not meet the requirements stated in the task instructions, as judged by other "
    "workers' votes and our automatic checks, so this submission cannot be accepted. Thank you for your time."
)


def rejection_message() -> str:
    """What the settlement of a rejected response tells its worker."""
    return settings.QUORUM_REJECTION_MESSAGE or REJECTION_MESSAGE


def _grace(grace_seconds):
    return timedelta(
        seconds=getattr(settings, "QUORUM_RECONCILE_GRACE_SECONDS", 300) if grace_seconds is None else grace_seconds
    )


def sync_remote_assignment(posting: Posting, remote, now) -> str:
    """Record one assignment as the provider reports it; returns what changed (for the summary)."""
    worker, _ = Worker.objects.get_or_create(provider=posting.provider, external_id=remote.worker_external_id)
    try:
        with transaction.atomic():
            assignment, created = ProviderAssignment.objects.get_or_create(
                provider=posting.provider,
                external_id=remote.external_id,
                defaults={"posting": posting, "worker": worker, "provider_status": remote.provider_status},
            )
    except IntegrityError:
        assignment, created = ProviderAssignment.objects.get(provider=posting.provider, external_id=remote.external_id), False
    change = "new" if created else ""
    updates = {}
    if assignment.provider_status != remote.provider_status:
        updates["provider_status"] = remote.provider_status
    state = assignment.state
    if remote.status in ("submitted", "approved", "rejected") and state == ProviderAssignment.State.ACCEPTED:
        response = saved_response_of(assignment)
        updates["submitted_at"] = assignment.submitted_at or now
        updates["state"] = ProviderAssignment.State.SUBMITTED
        if response is not None:
            updates["response"] = response
        else:
            # Submitted at the provider, never here: free the claim so the item is done by someone else.
            updates["missing_response"] = True
            if assignment.slot_id:
                release_slot(slot_id=assignment.slot_id, worker=worker)
            change = change or "missing_response"
        state = ProviderAssignment.State.SUBMITTED
    if remote.status in ("approved", "rejected") and state == ProviderAssignment.State.SUBMITTED:
        # Settled at the provider (auto-approval, or by hand there): follow it.
        updates["state"] = remote.status
        updates["settled_at"] = now
        kind = Payment.Kind.APPROVE if remote.status == "approved" else Payment.Kind.REJECT
        assignment.payments.filter(kind=kind, state__in=Payment.PENDING).update(state=Payment.State.CONFIRMED)
        change = change or "settled_at_provider"
    if remote.status == "returned" and state == ProviderAssignment.State.SUBMITTED:
        # Taken back at the provider after submitting: it refuses to settle it, so it is not tried again.
        if returned_after_submitting(assignment.pk, remote.provider_status):
            change = change or "returned_after_submission"
    if remote.status == "returned" and state == ProviderAssignment.State.ACCEPTED:
        updates["state"] = ProviderAssignment.State.RETURNED
        updates["place"] = None  # the provider offers the place to another worker
        if assignment.slot_id:
            release_slot(slot_id=assignment.slot_id, worker=worker)
        change = change or "returned"
    if updates:
        ProviderAssignment.objects.filter(pk=assignment.pk).update(**updates)
        change = change or "updated"
    return change


def _review_window_over(assignment: ProviderAssignment, config: JobCrowdConfig, now) -> bool:
    """Whether accepted work has waited the job's review window, in which a builder may still reject it."""
    if not config.review_hours:
        return True
    submitted = assignment.submitted_at
    return submitted is None or submitted <= now - timedelta(hours=config.review_hours)


def _settle_due(job_id: int, config: JobCrowdConfig, now, grace) -> list:
    """Submitted, unsettled assignments and the action each needs now (approve / reject), if any."""
    margin = timedelta(hours=getattr(settings, "QUORUM_SETTLE_MARGIN_HOURS", 12))
    deadline_cut = now - (timedelta(days=config.auto_approval_days) - margin)
    due = []
    in_hand = Payment.objects.filter(
        assignment__posting__job_id=job_id, kind__in=[Payment.Kind.APPROVE, Payment.Kind.REJECT]
    ).exclude(state=Payment.State.FAILED).values("assignment_id")
    pending = ProviderAssignment.objects.filter(
        posting__job_id=job_id, state=ProviderAssignment.State.SUBMITTED
    ).exclude(pk__in=in_hand)
    for assignment in pending.select_related("response"):
        response = assignment.response or saved_response_of(assignment)
        near_deadline = assignment.submitted_at and assignment.submitted_at <= deadline_cut
        if response is not None and response.status == Response.Status.AWAITING_CONFIRMATION:
            continue  # unconfirmed work is never paid; the provider's own deadline decides if it never confirms
        if response is None:
            if assignment.submitted_at and assignment.submitted_at <= now - grace:
                if config.pay_unmatched_submissions:
                    due.append((assignment.pk, "approve", ""))
                else:
                    due.append((assignment.pk, "reject", UNMATCHED_REJECTION))
        elif response.status in (Response.Status.ACCEPTED, Response.Status.EXCLUDED):
            if near_deadline or _review_window_over(assignment, config, now):
                due.append((assignment.pk, "approve", ""))
        elif response.status == Response.Status.REJECTED:
            due.append((assignment.pk, "reject", rejection_message()))
        elif near_deadline:
            due.append((assignment.pk, "approve", ""))  # undecided at the deadline: the provider would approve anyway
    return due


class ReconcileSummary(TypedDict):
    """What one reconciliation of a job did: counts by outcome, and the provider errors met."""

    job: int
    postings_sent: dict[str, int]
    assignments: dict[str, int]
    confirmations: dict[str, int]
    payments: dict[str, int]
    settled: dict[str, int]
    errors: list[str]
    closed: NotRequired[int]
    released: NotRequired[str]


def request_reconciliation(job_id: int) -> None:
    """"Reconcile now": queue `reconcile_job` for the job once the caller's transaction commits (a
    broker that is down is logged, not raised: the beat's `reconcile_all` comes round anyway)."""
    after_commit("hits.tasks.reconcile_job", job_id)


def reconcile_job(job_id: int, *, grace_seconds: float | None = None, now=None) -> ReconcileSummary:
    now = now or timezone.now()
    grace = _grace(grace_seconds)
    config = JobCrowdConfig.objects.select_related("job").filter(job_id=job_id).first()
    summary: ReconcileSummary = {
        "job": job_id, "postings_sent": {}, "assignments": {}, "confirmations": {}, "payments": {}, "settled": {}, "errors": [],
    }
    if config is None:
        return summary
    provider = providers.get(config.provider)

    # 1. Postings whose call may not have happened or finished.
    stale = list(stale_intended_postings(now=now, grace_seconds=grace.total_seconds()).filter(job_id=job_id).values_list("pk", flat=True))
    if stale:
        summary["postings_sent"] = send_postings(stale, concurrency=1, grace_seconds=grace.total_seconds())

    # 2. Assignments at the provider (in-house: the database, read the same way).
    for posting in _postings_to_list(job_id):
        try:
            remotes = provider.list_assignments(posting)
        except providers.ProviderError as exc:
            summary["errors"].append(f"{posting.request_token}: {exc}")
            continue
        for remote in remotes:
            change = sync_remote_assignment(posting, remote, now)
            if change:
                summary["assignments"][change] = summary["assignments"].get(change, 0) + 1

    # 2b. Crowd entries whose response the provider has not confirmed yet (the prompt task's fallback).
    for assignment_id in list(confirmation.awaiting_confirmation(job_id)):
        verdict = confirmation.confirm_assignment(assignment_id, now=now)
        if verdict:
            summary["confirmations"][verdict] = summary["confirmations"].get(verdict, 0) + 1

    # 3. Payments left pending by a crash or an outage.
    pending = Payment.objects.filter(assignment__posting__job_id=job_id, state__in=Payment.PENDING).filter(
        Q(state=Payment.State.INTENDED, created_at__lte=now - grace) | Q(state=Payment.State.SENT, sent_at__lte=now - grace)
        | Q(state=Payment.State.SENT, sent_at__isnull=True)
    )
    for payment_id in pending.values_list("pk", flat=True):
        payment = payment_services.execute_payment(payment_id)
        key = "needs_attention" if payment.needs_attention else payment.state
        summary["payments"][key] = summary["payments"].get(key, 0) + 1

    # 4. Settle before the auto-approval deadline.
    for assignment_id, action, message in _settle_due(job_id, config, now, grace):
        if action == "approve":
            result = payment_services.approve_assignments([assignment_id])[0]
        else:
            result = payment_services.reject_assignments([assignment_id], message)[0]
        key = action if result.ok else f"{action}_failed"
        summary["settled"][key] = summary["settled"].get(key, 0) + 1

    # 5. Listings with nothing left to claim stop taking workers, and so do those no slot needs.
    summary["closed"] = expire_finished_postings(job_id, now=now) + close_surplus_postings(config.job, provider, now=now)

    # 6. Places of closed listings that no worker can still take go back to the budget.
    summary["released"] = str(release_places_never_filled(config.job, now, grace))
    return summary


def _listed_postings():
    """Postings whose assignments the provider may still change: created ones, and closed ones whose
    unfilled places have not been given back (a worker inside at the close may still submit)."""
    return Posting.objects.filter(
        Q(state=Posting.State.CREATED) | Q(state=Posting.State.CLOSED, closed_at__isnull=False, released_at__isnull=True)
    )


def _postings_to_list(job_id: int):
    """The job's postings whose assignments are listed: those the provider may still change, and any with
    submitted work not settled yet, even once its places were given back: until it is settled its worker
    may still take it back at the provider (Prolific lets a participant return a submission awaiting review)."""
    unsettled = ProviderAssignment.objects.filter(posting__job_id=job_id, state=ProviderAssignment.State.SUBMITTED)
    return Posting.objects.filter(job_id=job_id).filter(
        Q(pk__in=_listed_postings().values("pk")) | Q(pk__in=unsettled.values("posting_id"))
    ).order_by("seq")


def jobs_to_reconcile() -> list[int]:
    """Jobs with something the provider may still change: open or just closed postings, unsettled work,
    pending payments."""
    open_jobs = set(
        (Posting.objects.filter(state__in=Posting.OPEN_STATES) | _listed_postings())
        .filter(provider__in=providers.paid_keys()).values_list("job_id", flat=True)
    )
    open_jobs |= set(
        ProviderAssignment.objects.filter(state=ProviderAssignment.State.SUBMITTED).values_list("posting__job_id", flat=True)
    )
    open_jobs |= set(Payment.objects.filter(state__in=Payment.PENDING).values_list("assignment__posting__job_id", flat=True))
    # A rehearsal copy's listings live at a local fake that is gone: never ask a real provider about them.
    open_jobs -= set(JobCrowdConfig.objects.filter(rehearsal=True).values_list("job_id", flat=True))
    return sorted(open_jobs)


def expire_finished_postings(job_id: int, now=None) -> int:
    """Close the open postings of a job that is finished or whose slots are all submitted (nothing
    left to claim)."""
    finished = Job.objects.filter(pk=job_id, state=Job.State.FINISHED).exists()
    if not finished and Slot.objects.filter(job_id=job_id).exclude(state=Slot.State.SUBMITTED).exists():
        return 0
    postings = Posting.objects.filter(job_id=job_id)
    first = postings.filter(state=Posting.State.CREATED).only("provider").first()
    if first is None:
        return 0
    return close_listings(postings, providers.get(first.provider), now=now)


def close_surplus_postings(job: Job, provider, now=None) -> int:
    """Close listings whose places no slot needs any more: a re-collection's place is posted on its
    own, and a reviewer who then accepts the turned-down response takes the slot back
    (`voting.withdraw_recollection`). Places serve any of the job's slots, so any listing no worker
    has taken a place on, no larger than the surplus, can go, newest first. Their reservation goes
    back with their unfilled places (`release_places_never_filled`), as any closed listing's does."""
    surplus = surplus_places(job)
    if surplus <= 0:
        return 0
    untaken = (
        Posting.objects.filter(job=job, state=Posting.State.CREATED)
        .annotate(taken=Count("assignments_at_provider")).filter(taken=0).order_by("-seq")
    )
    chosen = []
    for posting in untaken:
        if posting.assignments <= surplus:
            chosen.append(posting.pk)
            surplus -= posting.assignments
    return close_listings(Posting.objects.filter(pk__in=chosen), provider, now=now) if chosen else 0


def release_places_never_filled(job: Job, now, grace: timedelta) -> Decimal:
    """Give back the unfilled places of the job's closed postings that no worker can still be inside:
    MTurk's assignment duration is the job's claim timeout, and a claim lapses after it here too."""
    cutoff = now - timedelta(minutes=job.claim_timeout_minutes) - grace
    released = Decimal("0.00")
    for posting_id in Posting.objects.filter(
        job=job, state=Posting.State.CLOSED, closed_at__lte=cutoff, released_at__isnull=True
    ).values_list("pk", flat=True):
        released += release_unfilled_places(posting_id, now=now)
    return released
