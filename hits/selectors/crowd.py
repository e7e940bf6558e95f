"""Reads for the organizer: estimated cost before launch, and postings, assignments and payments of a job."""
from dataclasses import dataclass
from decimal import Decimal

from django.conf import settings
from django.db.models import Avg, Count, Q, Sum

from annotation.models import Job, Response, Slot
from annotation.selectors.policies import policy_of
from annotation.services.voting import vote_job_of
from quorum import numbers

from .. import providers
from ..models import JobCrowdConfig, Payment, Posting, ProviderAssignment
from ..policy import costs
from ..services.postings import places_carrying_slots, posting_sizes, uncovered_assignments


@dataclass(frozen=True)
class _Unposted:
    """The slots no posting carries yet, and what posting them now would cost."""

    slots: int
    cost: Decimal


def _priced_now(config: JobCrowdConfig, reward: Decimal, slots: int) -> list[tuple[Decimal, int, int]]:
    """(reward, places, posting size) of the postings that would carry `slots` if posted now."""
    return [(reward, n, n) for n in posting_sizes(config, slots)]


def _estimate_and_rest(job: Job, config: JobCrowdConfig) -> tuple[costs.Estimate, _Unposted]:
    """The estimate of every slot the job has, and the slots no posting carries yet with their cost."""
    provider = providers.get(config.provider)
    carried = places_carrying_slots(job)
    slots = uncovered_assignments(job, carried)
    rest = _priced_now(config, job.reward, slots)
    fee_rate = provider.fee_rate(config)
    estimate = costs.estimate_postings(
        provider, carried + rest, reward=job.reward, fee_rate=fee_rate, minutes_per_assignment=config.minutes_per_assignment,
    )
    return estimate, _Unposted(slots, costs.estimate_postings(provider, rest, reward=job.reward, fee_rate=fee_rate).total)


def estimate_for_job(job: Job, config: JobCrowdConfig | None = None) -> costs.Estimate:
    """Cost of every slot the job has, fees included, with the hourly pay: items and raters added to a live
    job count as much as the first round (a job's slots, not items x redundancy), the slots its postings
    carry priced as those postings are, the rest as posting them now would be."""
    config = config or JobCrowdConfig.objects.filter(job=job).first() or JobCrowdConfig(job=job)
    return _estimate_and_rest(job, config)[0]


def _responses_taken(job: Job) -> dict:
    """In one read: the job's responses (`n`), those with a time (`timed`), and their mean time from
    claim to submit (`seconds`)."""
    timed = Q(work_seconds__gt=0)
    return Response.objects.filter(item__job=job).aggregate(
        n=Count("id"), timed=Count("id", filter=timed), seconds=Avg("work_seconds", filter=timed),
    )


def measured_pay(reward, taken: dict) -> dict | None:
    """The hourly pay at the time workers have taken so far (the mean from claim to submit of the
    job's responses, one assignment each), beside the estimate it was set from; None before any."""
    if not taken["timed"]:
        return None
    minutes = Decimal(str(taken["seconds"])) / 60
    return {"minutes": minutes, "responses": taken["timed"], "hourly_pay": costs.hourly_pay(reward, minutes)}


def fits_budget(config: JobCrowdConfig, total) -> bool:
    """Whether `total` more spend fits: a paid provider needs a budget; without one, unpaid work has no cap."""
    if config.budget is None:
        return not providers.get(config.provider).paid
    return config.committed + total <= config.budget


def spent_for_job(job: Job, config: JobCrowdConfig) -> costs.Spent:
    """What the provider has paid for the job so far, fees included: the rewards of the assignments it
    approved (by Quorum or by itself) and the bonuses it confirmed. Unlike `committed`, which also holds
    what postings reserved for work not yet done or paid."""
    provider = providers.get(config.provider)
    # Per posting: a provider that bills a listing's total (Prolific) rounds its fee once per study.
    approved = (
        ProviderAssignment.objects.filter(posting__job=job, state=ProviderAssignment.State.APPROVED)
        .values_list("posting_id", "posting__reward", "posting__assignments").annotate(n=Count("id")).order_by()
    )
    bonuses = Payment.objects.filter(
        assignment__posting__job=job, kind=Payment.Kind.BONUS, state=Payment.State.CONFIRMED
    ).values_list("amount", "cost")
    rows = [(reward, size, n) for _posting, reward, size, n in approved]
    return costs.spent(provider, rows, list(bonuses), fee_rate=provider.fee_rate(config))


def paying_note(config: JobCrowdConfig) -> str:
    """When accepted work is paid, as the crowd section and the launch say it."""
    days = config.auto_approval_days
    deadline = (
        f"always at least {settings.QUORUM_SETTLE_MARGIN_HOURS} hours before {config.get_provider_display()} "
        f"approves it by itself ({days} day{'s' if days != 1 else ''} after submission)"
    )
    hours = config.review_hours
    if hours:
        return (
            f"Accepted work is paid automatically {hours} hour{'s' if hours != 1 else ''} after its submission unless you "
            f"reject it first, {deadline}; change 'Hours to review before paying' in the crowd settings."
        )
    return (
        "Accepted work is paid automatically at the next reconciliation, within minutes and before you can look at it, "
        f"{deadline}; set 'Hours to review before paying' in the crowd settings to decide first."
    )


def _posted(job: Job) -> dict:
    """The job's postings in one query: how many (`n`), and the places and reservation of those not failed."""
    live = ~Q(state=Posting.State.FAILED)
    return Posting.objects.filter(job=job).aggregate(
        n=Count("id"), places=Sum("assignments", filter=live), reserved=Sum("committed_cost", filter=live),
    )


def reservation_note(job: Job, config: JobCrowdConfig, posted: dict | None = None) -> str | None:
    """What the job's postings hold against the budget, e.g. "$4.28 reserved on Prolific for 8 places,
    fees included"; None before anything is posted. `posted`: `_posted(job)` when the caller has it."""
    posted = posted or _posted(job)
    if not posted["places"]:
        return None
    places = posted["places"]
    return (
        f"{numbers.money(posted['reserved'])} reserved on {config.get_provider_display()} for {places} place"
        f"{'s' if places != 1 else ''}, fees included"
    )


def unposted_note(job: Job, config: JobCrowdConfig, rest: _Unposted) -> dict | None:
    """Slots of a live or paused job that no posting carries because the budget cannot: a later round
    (items or raters added) is posted only within the budget. Raising the budget of a live job posts
    them (`services.config.configure_crowd`); a paused job's are posted when it resumes. None when
    there are none, or when posting them fits (they are on their way)."""
    if job.state not in (Job.State.LIVE, Job.State.PAUSED) or config.budget is None:
        return None
    slots, cost = rest.slots, rest.cost
    if not slots:
        return None
    left = config.budget - config.committed
    if cost <= left:
        return None
    return {
        "slots": slots, "cost": str(cost), "left": str(left),
        "note": (
            f"{slots} slot{'s' if slots != 1 else ''} of this job {'are' if slots != 1 else 'is'} not posted to "
            f"{config.get_provider_display()}: posting them costs {numbers.money(cost)} with fees and the budget has {numbers.money(left)} left. "
            f"Raise the budget to at least {numbers.money(config.budget + cost - left)}: "
            + ("they are posted as soon as it carries them." if job.state == Job.State.LIVE else "they are posted when you resume the job.")
        ),
    }


def returned_note(job: Job, config: JobCrowdConfig) -> dict | None:
    """Assignments submitted in Quorum whose workers then took them back at the provider (`services.returns`):
    what happened and what is left to the builder; None when there are none."""
    n = ProviderAssignment.objects.filter(
        posting__job=job, state=ProviderAssignment.State.RETURNED, submitted_at__isnull=False
    ).count()
    if not n:
        return None
    where = config.get_provider_display()
    return {
        "assignments": n,
        "note": (
            f"{n} assignment{'s' if n != 1 else ''} submitted here {'were' if n != 1 else 'was'} then returned on {where}: "
            f"{where} pays nothing for {'them' if n != 1 else 'it'} and Quorum sends no settlement; each place's share of "
            "the reservation goes back once no one can take the place. The responses stay in Quorum as they are: reject "
            "or exclude them in the review queue if they should not count."
        ),
    }


def votes_estimate(job: Job) -> dict | None:
    """What the votes on this job's responses will cost, which the job's own estimate leaves out: the vote
    job is a job of its own, with its own pay, crowd settings and budget. Every slot of the job (re-collections
    included) gives a response, and each is put to the vote with the policy's votes per response; a vote the
    reliability model asks for beyond those is not counted. None when the job does not vote."""
    policy = policy_of(job)  # read first: a job that does not vote asks nothing more
    if policy is None or not policy.voting_enabled:
        return None
    vote_job = vote_job_of(job)
    if vote_job is None:
        return None
    responses = Slot.objects.filter(job=job).count()
    votes = responses * policy.votes_per_response
    stored = JobCrowdConfig.objects.filter(job=vote_job).first()
    config = stored or JobCrowdConfig(job=vote_job)  # the default crowd until its page sets one, as crowd_page reads it
    provider = providers.get(config.provider)
    estimate = costs.estimate_postings(
        provider, _priced_now(config, vote_job.reward, votes), reward=vote_job.reward, fee_rate=provider.fee_rate(config),
    )
    if stored is None:
        where = ""
        crowd = "It has no crowd settings yet: set them on its page to pay its voters through a crowd, with a budget of its own."
    else:
        where = f" on {config.get_provider_display()}"
        crowd = "Its budget is its own" + (f" ({numbers.money(config.budget)})." if config.budget is not None else ".")
    return {
        "vote_job": vote_job.pk, "vote_job_name": vote_job.name, "votes": votes, "responses": responses,
        "votes_per_response": policy.votes_per_response, "estimate": estimate.as_dict(),
        "note": (
            f"Not in the estimate above: the votes on its responses are the job {vote_job.name}, {votes} vote"
            f"{'s' if votes != 1 else ''} ({responses} response{'s' if responses != 1 else ''} x {policy.votes_per_response}) "
            f"at {numbers.money(vote_job.reward)}, {numbers.money(estimate.total)}{where}"
            f"{' with fees' if estimate.fees else ''} if every response is put to the vote. {crowd}"
        ),
    }


def _json_safe(values: dict) -> dict:
    return {k: (str(v) if isinstance(v, Decimal) else v) for k, v in values.items()}


def _by(queryset, field, extra=None):
    rows = queryset.values(field).annotate(n=Count("id"), **(extra or {}))
    return {r[field]: {k: (str(v) if isinstance(v, Decimal) else v) for k, v in r.items() if k != field} for r in rows}


#: Postings a provider refused, newest first, shown with the reason in the overview.
FAILED_POSTINGS_SHOWN = 20


def crowd_overview(job: Job) -> dict:
    """Everything an organizer watches for a job's crowd: budget, postings, assignments, payments."""
    config = JobCrowdConfig.objects.filter(job=job).first()
    if config is None:
        return {"provider": providers.default_key(), "configured": False}
    assignments = ProviderAssignment.objects.filter(posting__job=job)
    payments = Payment.objects.filter(assignment__posting__job=job)
    provider_settings = _json_safe(providers.get(config.provider).options_of(config))
    estimate, rest = _estimate_and_rest(job, config)
    return {
        "configured": True,
        "provider": config.provider,
        "provider_options": provider_settings,
        # Also under their own names (e.g. MTurk's "sandbox"), as clients read them when they were columns.
        **provider_settings,
        "budget": str(config.budget) if config.budget is not None else None,
        "committed": str(config.committed),
        "left": str(config.budget - config.committed) if config.budget is not None else None,
        # What the provider has paid, fees included; `committed` is what is reserved, paid or not.
        "spent": _json_safe(spent_for_job(job, config).__dict__),
        "estimate": estimate.as_dict(),
        # Slots the budget could not post (a later round); null when every slot is posted or on its way.
        "unposted": unposted_note(job, config, rest),
        # Work taken back at the provider after it was submitted: never settled; null when there is none.
        "returned_after_submission": returned_note(job, config),
        # What the votes on the job's responses will cost (their own job, budget and crowd); null when it does not vote.
        "votes": votes_estimate(job),
        # When accepted work is paid: after this many hours (0: at once), before the provider's own deadline.
        "review_hours": config.review_hours,
        "auto_approval_days": config.auto_approval_days,
        "postings": _by(Posting.objects.filter(job=job), "state", {"assignments": Sum("assignments")}),
        "assignments": _by(assignments, "state"),
        "missing_responses": assignments.filter(missing_response=True).count(),
        "payments": {
            kind: _by(payments.filter(kind=kind), "state", {"amount": Sum("amount")}) for kind in Payment.Kind.values
        },
        "payments_needing_attention": payments.filter(needs_attention=True).count(),
        "failed_postings": list(
            Posting.objects.filter(job=job, state=Posting.State.FAILED).order_by("-seq").values("seq", "error")[:FAILED_POSTINGS_SHOWN]
        ),
    }


#: Assignments listed on the job page; the API lists them all.
PAGE_ASSIGNMENTS = 200


def launch_note(job: Job) -> str | None:
    """What a crowd job's launch reserved and when its work is paid, for the builder's message
    (`annotation.extensions.launch_notes`); None for a job no paying crowd runs."""
    config = JobCrowdConfig.objects.filter(job=job).first()
    if config is None or not providers.get(config.provider).paid:
        return None
    reserved = reservation_note(job, config)
    if reserved is None:
        return paying_note(config)
    return f"{reserved[0].upper()}{reserved[1:]}; the postings are made in the background, the crowd section follows them. {paying_note(config)}"


def crowd_page(job: Job) -> dict:
    """What the crowd section of the organizer's job page shows (rendered by hits_tags.job_crowd,
    which adds the section's forms)."""
    config = JobCrowdConfig.objects.filter(job=job).first() or JobCrowdConfig(job=job)
    estimate, rest = _estimate_and_rest(job, config)
    assignments = list(
        ProviderAssignment.objects.filter(posting__job=job)
        .select_related("worker", "response", "posting")
        .prefetch_related("payments")
        .order_by("pk")[:PAGE_ASSIGNMENTS]
    )
    left = config.budget - config.committed if config.budget is not None else None
    provider = providers.get(config.provider)
    posted = _posted(job)
    taken = _responses_taken(job)
    return {
        # The job's own button that posts its open slots to the crowd, if the job has one now.
        "posting_button": {Job.State.DRAFT.value: "Launch", Job.State.PAUSED.value: "Resume"}.get(job.state),
        "config": config,
        "configured": config.pk is not None,
        "estimate": estimate,
        "measured_pay": measured_pay(job.reward, taken),
        "fits_budget": fits_budget(config, rest.cost),  # what is posted is in `committed` already
        "provider_detail": provider.describe(config),
        "provider_paid": provider.paid,
        "paying_note": paying_note(config),
        "reservation_note": reservation_note(job, config, posted) if config.pk is not None else None,
        "unposted": unposted_note(job, config, rest) if config.pk is not None else None,
        "returned": returned_note(job, config) if config.pk is not None else None,
        "votes": votes_estimate(job),
        "spent": spent_for_job(job, config) if config.pk is not None else None,
        "left": left,
        "postings": list(Posting.objects.filter(job=job).order_by("seq")[:PAGE_ASSIGNMENTS]),
        "posting_count": posted["n"],
        "assignments": assignments,
        "assignment_count": ProviderAssignment.objects.filter(posting__job=job).count(),
        # Responses no assignment records (in-house work on a job launched without crowd settings).
        "responses_outside_ledger": 0 if assignments else taken["n"],
        "assignment_states": _by(ProviderAssignment.objects.filter(posting__job=job), "state"),
        "payment_states": list(
            Payment.objects.filter(assignment__posting__job=job)
            .values("kind", "state").annotate(n=Count("id"), amount=Sum("amount")).order_by("kind", "state")
        ),
    }
