"""Prolific's fees. Pure: no Django.

Prolific charges a service fee as a share of the reward and of bonuses; the share is a setting of
the job (its option `prolific_fee_rate`, options.py) because it changes with the account's plan.
"""
from decimal import Decimal

from ...policy.costs import cents


def fee(amount, fee_rate) -> Decimal:
    return cents(Decimal(str(amount)) * Decimal(str(fee_rate)))
