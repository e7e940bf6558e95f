"""Prolific's fees. Pure: no Django.

Prolific charges a service fee as a share of the reward and of bonuses; the share is a setting of
the job (its option `prolific_fee_rate`, options.py) because it changes with the account's plan.

A study's fee is the share of its total reward (Prolific's API reference, "Calculate the study cost":
the reward and the places give the study's total cost with fees), not the share of one place rounded
and then multiplied: at $0.10 a place and 33.33%, 7 places cost $0.93, where 7 x ($0.10 + $0.03) would
reserve $0.91 and let the study pass a budget of $0.92.
"""
from decimal import Decimal

from ...policy.costs import cents


def fee(amount, fee_rate) -> Decimal:
    return cents(Decimal(str(amount)) * Decimal(str(fee_rate)))


def study_fee(reward, places: int, fee_rate) -> Decimal:
    """The fee on `places` places of one study at `reward` each (or on that many of its approved places)."""
    return fee(cents(reward) * places, fee_rate)
