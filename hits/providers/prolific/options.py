"""Prolific's job options (see hits/providers/options.py): participant filters and the fee rate.

The fee rate is a setting of the job because Prolific's share changes with the account's plan; a
new job takes the deployment's QUORUM_PROLIFIC_FEE_RATE.
"""
from decimal import Decimal

from django.conf import settings

from ..options import Kind, Option


def _filters(value) -> str | None:
    if not isinstance(value, list) or any(
        not isinstance(f, dict) or not f.get("filter_id") or not ("selected_values" in f or "selected_range" in f)
        for f in value
    ):
        return "a list of {filter_id, selected_values} or {filter_id, selected_range}"
    return None


def _deployment_fee_rate() -> Decimal:
    return Decimal(str(settings.QUORUM_PROLIFIC_FEE_RATE))


OPTIONS = (
    Option(
        "prolific_filters", Kind.JSON,
        'Prolific participant filters as JSON, e.g. [{"filter_id": "current-country-of-residence", '
        '"selected_values": ["1"]}]. Empty: none.',
        check=_filters, requirement=True,
    ),
    Option(
        "prolific_fee_rate", Kind.DECIMAL, "Prolific's service fee as a share of pay (0.3333 = 33.33%), for estimates and budgets; a share "
        "with more places is rounded up (a third is 0.3334), so budgets hold what Prolific charges. Where "
        "Prolific charges VAT on its fee, include it: 0.3333 with 20% VAT is 0.4000.",
        default=_deployment_fee_rate, minimum=Decimal("0"), maximum=Decimal("1"), places=4, on_form=False,
    ),
)
