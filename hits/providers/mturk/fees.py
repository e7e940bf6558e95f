"""MTurk's fees (requester pricing). Pure: no Django.

The commission is 20% of the reward, 40% on HITs with 10 or more assignments, and at least $0.01
per assignment; bonuses carry the 20% commission with the same minimum.
"""
from decimal import Decimal

from ...policy.costs import cents

RATE = Decimal("0.20")
RATE_LARGE_HIT = Decimal("0.40")
LARGE_HIT_ASSIGNMENTS = 10
MIN_FEE = Decimal("0.01")


def fee_per_assignment(reward, assignments_per_hit: int) -> Decimal:
    """MTurk's commission on one assignment of a HIT with `assignments_per_hit` assignments."""
    rate = RATE_LARGE_HIT if assignments_per_hit >= LARGE_HIT_ASSIGNMENTS else RATE
    return max(cents(Decimal(str(reward)) * rate), MIN_FEE)


def bonus_fee(amount) -> Decimal:
    return max(cents(Decimal(str(amount)) * RATE), MIN_FEE)
