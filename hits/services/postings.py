"""Writes for postings: reserve spend under the budget, write intent rows, make the provider calls.

Order of work, so that a crash at any point is repaired by the reconciler without a duplicate:
1. one transaction locks the job's crowd config, checks the budget, adds the cost to `committed`
   and writes the postings as `intended`, each with a request token derived from our ids;
2. each posting's call is made outside any transaction, after `attempts` is counted; the call
   carries the token, so a repeat returns the listing the first call made;
3. the result moves the posting to `created` (or `failed`, which releases its cost).
"""
import logging
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from decimal import ROUND_DOWN, Decimal

from django.conf import settings
from django.db import close_old_connections, connection, transaction
from django.db.models import Count, Q
from django.utils import timezone

from annotation.models import Job, Slot
from annotation.services.jobs import launch_job

from .. import providers
from ..models import JobCrowdConfig, Posting, ProviderAssignment
from ..policy import costs
from .config import crowd_config, time_beyond_claim

log = logging.getLogger(__name__)


class BudgetExceeded(ValueError):
    """The postings asked for would take the job's committed spend above its budget."""


class SpendingSwitchedOff(BudgetExceeded):
    """The provider may not spend now (its live switch is off): nothing can be reserved. A kind of
    BudgetExceeded so that every caller that refuses a reservation refuses this one the same way."""


def request_token(job_id: int, seq: int) -> str:
    prefix = getattr(settings, "QUORUM_REQUEST_TOKEN_PREFIX", "quorum")
    token = f"{prefix}-j{job_id}-p{seq}"
    if len(token) > 64:
        raise ValueError("request token longer than MTurk's 64 characters; shorten QUORUM_REQUEST_TOKEN_PREFIX")
    return token


def posting_sizes(config: JobCrowdConfig, assignments: int) -> list[int]:
    return providers.get(config.provider).posting_sizes(assignments, config.assignments_per_posting)


def cost_of(config: JobCrowdConfig, sizes: list[int], reward) -> Decimal:
    provider = providers.get(config.provider)
    return costs.postings_cost(provider, reward, sizes, fee_rate=provider.fee_rate(config))


def places_carrying_slots(job: Job) -> list[tuple[Decimal, int, int]]:
    """(reward, places, posting size) of each of the job's postings that carries slots: every place of an
    open posting, and the places a finished posting used (a returned assignment's place carries none)."""
    open_places = [
        (reward, n, n) for reward, n in
        Posting.objects.filter(job=job, state__in=Posting.OPEN_STATES).values_list("reward", "assignments")
    ]
    used = (
        ProviderAssignment.objects.filter(posting__job=job, posting__state__in=[Posting.State.EXPIRED, Posting.State.CLOSED])
        .exclude(state=ProviderAssignment.State.RETURNED)
        .values_list("posting_id", "posting__reward", "posting__assignments").annotate(n=Count("id")).order_by()
    )
    return open_places + [(reward, n, size) for _posting, reward, size, n in used]


def _slots_beyond_places(job: Job, carried: list | None) -> int:
    """The job's slots less the places carrying them (negative: places no slot needs)."""
    carried = places_carrying_slots(job) if carried is None else carried
    return Slot.objects.filter(job=job).count() - sum(n for _reward, n, _size in carried)


def uncovered_assignments(job: Job, carried: list | None = None) -> int:
    """Slots of the job that no open posting carries and no finished posting used (`carried`:
    `places_carrying_slots(job)` when the caller has it)."""
    return max(0, _slots_beyond_places(job, carried))


def surplus_places(job: Job) -> int:
    """Places of the job's postings that no slot needs (a slot taken back after its place was posted)."""
    return max(0, -_slots_beyond_places(job, None))


def reserve_postings(job: Job, *, assignments: int | None = None) -> list[Posting]:
    """Write intended postings for `assignments` more assignments (default: every uncovered slot).

    The budget is checked and the cost committed under a row lock on the job's crowd config, so
    concurrent launches and re-collections never commit more than the budget. BudgetExceeded
    leaves everything unchanged.
    """
    with transaction.atomic():
        config = JobCrowdConfig.objects.select_for_update(of=("self",)).select_related("job").get(job=job)
        job = config.job
        wanted = uncovered_assignments(job) if assignments is None else int(assignments)
        if wanted <= 0:
            return []
        sizes = posting_sizes(config, wanted)
        total = cost_of(config, sizes, job.reward)
        provider = providers.get(config.provider)
        if provider.paid and config.budget is None:
            raise BudgetExceeded("set a budget for this job before posting it to a paid crowd")
        if config.budget is not None and config.committed + total > config.budget:
            # No full stop: callers end the sentence ("Not launched on Prolific: ...").
            raise BudgetExceeded(
                f"posting {wanted} assignments costs {total} USD with fees, but the budget of {config.budget} USD "
                f"has {config.budget - config.committed} USD left: raise the budget or post fewer"
            )
        refusal = provider.spending_refusal()  # after the budget: what the builder sets on the page comes first
        if refusal:
            raise SpendingSwitchedOff(refusal)
        last = Posting.objects.filter(job=job).order_by("-seq").values_list("seq", flat=True).first() or 0
        rows = []
        for i, size in enumerate(sizes, start=last + 1):
            rows.append(
                Posting(
                    job=job,
                    provider=config.provider,
                    seq=i,
                    request_token=request_token(job.id, i),
                    assignments=size,
                    reward=job.reward,
                    committed_cost=cost_of(config, [size], job.reward),
                )
            )
        created = Posting.objects.bulk_create(rows)
        config.committed = config.committed + total
        config.save(update_fields=["committed"])
    return created


def release_cost(job_id: int, amount: Decimal) -> None:
    with transaction.atomic():
        config = JobCrowdConfig.objects.select_for_update().get(job_id=job_id)
        config.committed = max(Decimal("0.00"), config.committed - amount)
        config.save(update_fields=["committed"])


def close_listings(postings, provider, *, now=None) -> int:
    """Stop the created listings among `postings` taking workers at `provider` and record when
    (`closed_at`, from which their unfilled places are given back); one the provider refuses to close
    stays created and is logged. How many were closed."""
    closed = 0
    for posting in postings.filter(state=Posting.State.CREATED):
        try:
            provider.close_posting(posting)
        except providers.ProviderError as exc:
            log.warning("could not close %s: %s", posting.request_token, exc)
            continue
        closed += Posting.objects.filter(pk=posting.pk, state=Posting.State.CREATED).update(
            state=Posting.State.CLOSED, closed_at=now or timezone.now()
        )
    return closed


def place_share(posting: Posting) -> Decimal:
    """One place's share of a posting's reservation (reward and fees), rounded down to the cent, so
    that what is given back never exceeds what was reserved."""
    return (posting.committed_cost / posting.assignments).quantize(Decimal("0.01"), rounding=ROUND_DOWN)


def release_unfilled_places(posting_id: int, *, now=None) -> Decimal:
    """Give back the share of the places a closed posting never filled, once.

    Called when no worker can still be inside the listing (its close plus the assignment's duration):
    every place not held by an assignment (returned and void ones hold none) will never be paid. A
    rejected assignment still counts as held: its share went back when the rejection was confirmed.
    """
    now = now or timezone.now()
    with transaction.atomic():
        if not Posting.objects.filter(pk=posting_id, state=Posting.State.CLOSED, released_at__isnull=True).update(released_at=now):
            return Decimal("0.00")
        posting = Posting.objects.get(pk=posting_id)
        held = ProviderAssignment.objects.filter(posting=posting).exclude(state__in=ProviderAssignment.ENDED).count()
        amount = place_share(posting) * max(0, posting.assignments - held)
        if amount:
            release_cost(posting.job_id, amount)
    if amount:
        log.info("posting %s: %s USD of places never filled given back", posting.request_token, amount)
    return amount


def send_posting(posting_id: int, *, grace_seconds: float | None = None) -> Posting:
    """Make (or repeat) the provider call for an intended posting.

    A posting whose last attempt began less than `grace_seconds` ago is left alone: another
    process may still be waiting for that call.
    """
    grace = timedelta(seconds=getattr(settings, "QUORUM_RECONCILE_GRACE_SECONDS", 300) if grace_seconds is None else grace_seconds)
    now = timezone.now()
    with transaction.atomic():
        posting = Posting.objects.select_for_update(of=("self",)).select_related("job__crowd").get(pk=posting_id)
        if posting.state != Posting.State.INTENDED:
            return posting
        if posting.attempted_at and now - posting.attempted_at < grace:
            return posting
        posting.attempts += 1
        posting.attempted_at = now
        posting.save(update_fields=["attempts", "attempted_at"])
    config = posting.job.crowd
    provider = providers.get(posting.provider)
    refusal = provider.spending_refusal()
    if refusal:
        # Left intended, as after an outage: once the switch is on the reconciler sends it.
        Posting.objects.filter(pk=posting.pk).update(error=refusal[:1000])
        log.warning("posting %s not sent: %s", posting.request_token, refusal)
        return Posting.objects.get(pk=posting.pk)
    try:
        external_id = provider.create_posting(posting, config)
    except providers.TransientProviderError as exc:
        Posting.objects.filter(pk=posting.pk).update(error=str(exc)[:1000])
        log.warning("posting %s not sent yet: %s", posting.request_token, exc)
        return Posting.objects.get(pk=posting.pk)
    except providers.ProviderError as exc:
        with transaction.atomic():
            if Posting.objects.filter(pk=posting.pk, state=Posting.State.INTENDED).update(
                state=Posting.State.FAILED, error=str(exc)[:1000]
            ):
                release_cost(posting.job_id, posting.committed_cost)
        return Posting.objects.get(pk=posting.pk)
    Posting.objects.filter(pk=posting.pk, state=Posting.State.INTENDED).update(
        state=Posting.State.CREATED, external_id=external_id, posted_at=timezone.now(), error=""
    )
    return Posting.objects.get(pk=posting.pk)


def _send_in_thread(posting_id: int, grace_seconds):
    try:
        return send_posting(posting_id, grace_seconds=grace_seconds).state
    finally:
        close_old_connections()
        connection.close()


def send_postings(posting_ids: list[int], *, concurrency: int | None = None, grace_seconds: float | None = None) -> dict:
    """Send many postings, `concurrency` at a time (the provider's rate limiter paces the calls)."""
    concurrency = int(getattr(settings, "QUORUM_MTURK_CONCURRENCY", 8) if concurrency is None else concurrency)
    states = []
    if concurrency <= 1 or len(posting_ids) <= 1:
        states = [send_posting(pid, grace_seconds=grace_seconds).state for pid in posting_ids]
    else:
        with ThreadPoolExecutor(max_workers=concurrency) as pool:
            states = list(pool.map(lambda pid: _send_in_thread(pid, grace_seconds), posting_ids))
    summary: dict[str, int] = {}
    for state in states:
        summary[state] = summary.get(state, 0) + 1
    return summary


def prepare_provider(job: Job) -> None:
    """Provider set-up shared by the job's postings (MTurk: the HIT type), saved once."""
    config = JobCrowdConfig.objects.select_related("job").get(job=job)
    state = providers.get(config.provider).prepare_job(config)
    if state != config.provider_state:
        JobCrowdConfig.objects.filter(pk=config.pk).update(provider_state=state)


def post_job(job: Job, *, concurrency: int | None = None) -> dict:
    """Post every uncovered slot of the job and send the calls. Returns counts by posting state.

    Slots that the budget cannot carry stay unposted (logged); what is already reserved is sent.
    """
    try:
        reserve_postings(job)
    except BudgetExceeded as exc:
        log.warning("job %s: more slots than the budget carries stay unposted: %s", job.pk, exc)
    crowd_config(job)  # in-house defaults when the job has no crowd settings yet
    prepare_provider(job)
    pending = list(
        Posting.objects.filter(job=job, state=Posting.State.INTENDED, attempts=0).order_by("seq").values_list("pk", flat=True)
    )
    return send_postings(pending, concurrency=concurrency, grace_seconds=0)


def launch_crowd_job(job: Job) -> Job:
    """Launch a job on its crowd: refused (nothing changes) when its postings would exceed the budget.

    The spend is reserved before the job goes live; the calls to the provider follow in a task
    enqueued after commit (see hits.receivers), and the reconciler repeats what a crash cut short.
    """
    crowd_config(job)  # in-house defaults when the job has no crowd settings yet
    with transaction.atomic():
        # Lock the job before the config, in the same order as launch_job and its budget check.
        Job.objects.select_for_update().filter(pk=job.pk).exists()
        reserve_postings(job)  # BudgetExceeded propagates and rolls back
        job = launch_job(job)  # launch_budget_check finds nothing left to reserve
    return job


def launch_budget_check(job: Job) -> str | None:
    """The launch check hits registers in annotation's `extensions.launch_checks` (see hits.apps).

    A job with crowd settings goes live only with the spend of its postings reserved within the
    budget (in-house work too: it costs its reward, and a budget, when set, caps it), whichever path
    launches it (the organizer's Launch button, the jobs API, a command).
    It runs inside launch_job's transaction and reserves with `reserve_postings`, the same budget
    logic as `launch_crowd_job`: the spend is committed in the launch's own transaction, so nothing
    can take the budget between this check and the posting, and a refused launch keeps nothing.
    Returns the reason to refuse, or None.
    """
    config = JobCrowdConfig.objects.filter(job=job).only("provider", "minutes_per_assignment").first()
    if config is None:
        return None
    beyond = time_beyond_claim(job, config)
    if beyond:
        return f"Not launched on {config.get_provider_display()}: the minutes per assignment must be {beyond}."
    try:
        reserve_postings(job)
    except BudgetExceeded as exc:
        return f"Not launched on {config.get_provider_display()}: {exc}"
    return None


def stale_intended_postings(now=None, grace_seconds: float | None = None):
    now = now or timezone.now()
    grace = timedelta(seconds=getattr(settings, "QUORUM_RECONCILE_GRACE_SECONDS", 300) if grace_seconds is None else grace_seconds)
    return Posting.objects.filter(state=Posting.State.INTENDED).filter(
        Q(attempted_at__isnull=True) | Q(attempted_at__lte=now - grace)
    )
