"""What crowd work costs, fees included. Pure: no Django, no database; amounts are Decimal USD.

The fee rules belong to each provider (its package's fees.py, reached through the provider's
`fee_on_places`, `bonus_fee` and `posting_sizes`); this module adds them up the same way for every
provider. Each provider rounds its fees to the cent where and as it bills them: MTurk half up on each
assignment (`fee_per_assignment`, the default; its pricing FAQ), Prolific up on a study's total, since
its own rounding is not published (its fees.py). `pricing` below is a provider (anything with those
methods).
"""
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_HALF_UP, Decimal

CENT = Decimal("0.01")


def cents(amount) -> Decimal:
    return Decimal(str(amount)).quantize(CENT, rounding=ROUND_HALF_UP)


def cents_up(amount) -> Decimal:
    """`amount` rounded up to the cent: the least whole-cent figure that is not below it."""
    return Decimal(str(amount)).quantize(CENT, rounding=ROUND_CEILING)


def whole_cents(amount) -> Decimal:
    """`amount` as a Decimal of whole cents; ValueError when it has a fraction of a cent (the crowds pay
    whole cents, and rounding a sum someone chose would pay, and charge, what they did not ask for)."""
    value = Decimal(str(amount))
    if not value.is_finite() or value != value.quantize(CENT, rounding=ROUND_HALF_UP):
        raise ValueError(f"{amount} USD is not a whole number of cents")
    return value.quantize(CENT)


def posting_cost(pricing, reward, assignments: int, *, size: int | None = None, fee_rate=0) -> Decimal:
    """Cost of `assignments` places of one posting (an MTurk HIT, a Prolific study) of `size` places
    (default: those assignments), fees included."""
    fee = pricing.fee_on_places(reward, assignments, assignments_per_posting=size or assignments, fee_rate=fee_rate)
    return cents(cents(reward) * assignments + fee)


def postings_cost(pricing, reward, sizes, *, fee_rate=0) -> Decimal:
    return sum((posting_cost(pricing, reward, n, fee_rate=fee_rate) for n in sizes), Decimal("0.00"))


def bonus_cost(pricing, amount, *, fee_rate=0) -> Decimal:
    return cents(amount) + pricing.bonus_fee(amount, fee_rate=fee_rate)


@dataclass(frozen=True)
class Spent:
    """What the provider has paid out for a job: approved rewards, bonuses and the fees on both."""

    approved: int
    rewards: Decimal
    bonuses: Decimal
    fees: Decimal
    total: Decimal


def spent(pricing, approved, bonuses=(), *, fee_rate=0) -> Spent:
    """What has been paid, fees included: `approved` is (reward, assignments of its posting, how many
    approved) per posting (a posting's size sets MTurk's fee; Prolific's is on each study's approved
    total), `bonuses` is (amount, cost with fees) per paid bonus."""
    count, rewards, reward_fees = 0, Decimal("0.00"), Decimal("0.00")
    for reward, posting_size, n in approved:
        count += n
        rewards += cents(reward) * n
        reward_fees += pricing.fee_on_places(reward, n, assignments_per_posting=posting_size, fee_rate=fee_rate)
    bonus_amounts = sum((cents(amount) for amount, _cost in bonuses), Decimal("0.00"))
    bonus_fees = sum((cents(cost) - cents(amount) for amount, cost in bonuses), Decimal("0.00"))
    fees = cents(reward_fees + bonus_fees)
    return Spent(count, cents(rewards), bonus_amounts, fees, cents(rewards + bonus_amounts + fees))


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
    pricing,
    *,
    items: int,
    redundancy: int,
    reward,
    assignments_per_posting: int = 1,
    fee_rate=0,
    minutes_per_assignment=None,
) -> Estimate:
    """The cost of collecting `redundancy` responses for each of `items` items, fees included, split
    into postings as the provider splits them."""
    if items < 0 or redundancy < 1:
        raise ValueError("items must be zero or more and redundancy at least one")
    sizes = pricing.posting_sizes(items * redundancy, assignments_per_posting)
    return estimate_postings(
        pricing, [(reward, n, n) for n in sizes], reward=reward, fee_rate=fee_rate, minutes_per_assignment=minutes_per_assignment,
    )


def estimate_postings(pricing, postings, *, reward, fee_rate=0, minutes_per_assignment=None) -> Estimate:
    """The cost of the places `postings` carry, fees included: (reward, places, posting size) per posting.

    A posting is priced on the places it carries, its fee where its provider bills it (a posted MTurk HIT
    of 10 keeps its 40% fee on each place; a Prolific study's fee is on the total of its places), so a job
    posted in rounds is estimated as its rounds were reserved, not as one posting of all its places.
    `reward` sets the hourly pay."""
    count, rewards, total = 0, Decimal("0.00"), Decimal("0.00")
    for posting_reward, places, size in postings:
        count += places
        rewards += cents(posting_reward) * places
        total += posting_cost(pricing, posting_reward, places, size=size, fee_rate=fee_rate)
    return Estimate(
        provider=pricing.key,
        assignments=count,
        postings=sum(1 for _reward, places, _size in postings if places),
        rewards=cents(rewards),
        fees=cents(total - rewards),
        total=cents(total),
        hourly_pay=hourly_pay(reward, minutes_per_assignment) if minutes_per_assignment else None,
    )
