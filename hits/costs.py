"""What crowd work costs, fees included. Pure: no Django, no database; amounts are Decimal USD.

MTurk (requester pricing): the commission is 20% of the reward, 40% on HITs with 10 or more
assignments, and at least $0.01 per assignment; bonuses carry the 20% commission with the same
minimum. Prolific charges a service fee as a share of the reward (a setting, because it changes
with the account's plan). Fees are computed per assignment and rounded to the cent, half up, as
the provider bills them.
"""
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

CENT = Decimal("0.01")
MTURK_RATE = Decimal("0.20")
MTURK_RATE_LARGE_HIT = Decimal("0.40")
MTURK_LARGE_HIT_ASSIGNMENTS = 10
MTURK_MIN_FEE = Decimal("0.01")
PROVIDERS = ("inhouse", "prolific", "mturk")


def cents(amount) -> Decimal:
    return Decimal(str(amount)).quantize(CENT, rounding=ROUND_HALF_UP)


def mturk_fee_per_assignment(reward, assignments_per_hit: int) -> Decimal:
    """MTurk's commission on one assignment of a HIT with `assignments_per_hit` assignments."""
    rate = MTURK_RATE_LARGE_HIT if assignments_per_hit >= MTURK_LARGE_HIT_ASSIGNMENTS else MTURK_RATE
    return max(cents(Decimal(str(reward)) * rate), MTURK_MIN_FEE)


def mturk_bonus_fee(amount) -> Decimal:
    return max(cents(Decimal(str(amount)) * MTURK_RATE), MTURK_MIN_FEE)


def prolific_fee_per_assignment(reward, fee_rate) -> Decimal:
    return cents(Decimal(str(reward)) * Decimal(str(fee_rate)))


def fee_per_assignment(provider: str, reward, *, assignments_per_posting: int = 1, prolific_fee_rate=0) -> Decimal:
    if provider == "mturk":
        return mturk_fee_per_assignment(reward, assignments_per_posting)
    if provider == "prolific":
        return prolific_fee_per_assignment(reward, prolific_fee_rate)
    if provider == "inhouse":
        return Decimal("0.00")
    raise ValueError(f"unknown provider {provider!r}; choose one of {', '.join(PROVIDERS)}")


def posting_cost(provider: str, reward, assignments: int, *, prolific_fee_rate=0) -> Decimal:
    """Cost of one posting (an MTurk HIT, a Prolific study) of `assignments` assignments, fees included."""
    fee = fee_per_assignment(provider, reward, assignments_per_posting=assignments, prolific_fee_rate=prolific_fee_rate)
    return cents((cents(reward) + fee) * assignments)


def bonus_cost(provider: str, amount, *, prolific_fee_rate=0) -> Decimal:
    if provider == "mturk":
        return cents(amount) + mturk_bonus_fee(amount)
    if provider == "prolific":
        return cents(amount) + prolific_fee_per_assignment(amount, prolific_fee_rate)
    return cents(amount)


def split_into_postings(assignments: int, per_posting: int) -> list[int]:
    """Sizes of the postings that carry `assignments` assignments, at most `per_posting` each."""
    if per_posting < 1:
        raise ValueError("a posting needs at least one assignment")
    full, rest = divmod(assignments, per_posting)
    return [per_posting] * full + ([rest] if rest else [])


def hourly_pay(reward, minutes_per_assignment) -> Decimal:
    """What a worker earns per hour at the estimated time per assignment."""
    minutes = Decimal(str(minutes_per_assignment))
    if minutes <= 0:
        raise ValueError("the time per assignment must be above zero minutes")
    return cents(Decimal(str(reward)) * 60 / minutes)


@dataclass(frozen=True)
class Estimate:
    provider: str
    assignments: int
    postings: int
    rewards: Decimal
    fees: Decimal
    total: Decimal
    hourly_pay: Decimal | None

    def as_dict(self) -> dict:
        return {k: (str(v) if isinstance(v, Decimal) else v) for k, v in self.__dict__.items()}


def estimate(
    provider: str,
    *,
    items: int,
    redundancy: int,
    reward,
    assignments_per_posting: int = 1,
    prolific_fee_rate=0,
    minutes_per_assignment=None,
) -> Estimate:
    """The cost of collecting `redundancy` responses for each of `items` items, fees included.

    MTurk splits the assignments into HITs of `assignments_per_posting`; Prolific runs one study
    with a place per assignment; in-house work has no provider fee.
    """
    if items < 0 or redundancy < 1:
        raise ValueError("items must be zero or more and redundancy at least one")
    total_assignments = items * redundancy
    if provider == "mturk":
        sizes = split_into_postings(total_assignments, assignments_per_posting)
    else:
        sizes = [total_assignments] if total_assignments else []
    rewards = cents(reward) * total_assignments
    total = sum((posting_cost(provider, reward, n, prolific_fee_rate=prolific_fee_rate) for n in sizes), Decimal("0.00"))
    return Estimate(
        provider=provider,
        assignments=total_assignments,
        postings=len(sizes),
        rewards=cents(rewards),
        fees=cents(total - rewards),
        total=cents(total),
        hourly_pay=hourly_pay(reward, minutes_per_assignment) if minutes_per_assignment else None,
    )

