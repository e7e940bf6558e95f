"""Prolific's fees, and the amounts Prolific is sent. Pure: no Django.

Prolific charges a service fee as a share of the reward and of bonuses; the share is a setting of
the job (its option `prolific_fee_rate`, options.py) because it changes with the account's plan.

What Prolific's API reference says, and what Quorum does with it:

- A study's `reward` is in cents ("Calculate the study cost": "How much are you going to pay the
  participants in cents"), so Quorum sends the whole cents it reserved (`minor_units`).
- A bulk bonus's amount is a decimal in the study's currency ("Set up bonuses": "e.g. 1.50 for
  £1.50"; an amount of 30 pays 30.00), so Quorum sends whole cents written that way (`decimal_text`).
- Prolific's fee is on a study's total reward ("Calculate the study cost" takes the reward and the
  places and gives the total cost "including VAT and fees in cents"), and Prolific states fees in
  hundredths of a cent: "Set up bonuses" answers two bonuses of 4.25 with `amount` 850, `fees` 283.34,
  `total_amount` 1133.34 (cents), where a third of 850 is 283.333. How it rounds those hundredths, and
  whether per participant (141.67 + 141.67) or on the total, it does not say.

So Quorum reserves the largest charge that any of those roundings can give (`fee`): the share of the
total, plus, per participant, under a hundredth of a cent for the rounding of the fee and under two
for VAT's (its own rounding, and its share of the fee's; VAT is below 100%), rounded up to the cent.
Half up on the total would let 7 places at $0.10 and 33.33% reserve $0.93 while Prolific charges
$0.9333, so a budget of $0.93 would pass; Quorum reserves $0.94.
"""
from decimal import Decimal

from ...policy.costs import cents, cents_up, whole_cents

HUNDREDTH_OF_A_CENT = Decimal("0.0001")
# Per participant: the fee's rounding (under one hundredth of a cent) and VAT's (under two).
ROUNDING_ALLOWANCE = 3 * HUNDREDTH_OF_A_CENT


def fee(amount, fee_rate, participants: int = 1) -> Decimal:
    """The most Prolific can charge as its fee (VAT included in the rate) on `amount` paid to
    `participants` participants, in whole cents. No share, no fee: nothing is rounded then."""
    share = Decimal(str(amount)) * Decimal(str(fee_rate))
    if not share:
        return Decimal("0.00")
    return cents_up(share + participants * ROUNDING_ALLOWANCE)


def study_fee(reward, places: int, fee_rate) -> Decimal:
    """The fee on `places` places of one study at `reward` each (or on that many of its approved places)."""
    return fee(cents(reward) * places, fee_rate, participants=places)


def minor_units(amount) -> int:
    """`amount` USD as the whole cents Prolific takes (a study's reward); ValueError for a fraction of a cent."""
    return int(whole_cents(amount) * 100)


def decimal_text(amount) -> str:
    """`amount` USD as Prolific's bonus CSV takes it: whole cents, two decimals ("0.25")."""
    return f"{whole_cents(amount):.2f}"
