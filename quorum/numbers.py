"""How a figure is written for people to read: one rule for every page and every report. Pure.

Pages (the `decimals` and `p_value` template filters, `quorum.template_numbers`) and text reports
(the leaderboards' Markdown, the export READMEs) all write a figure with `decimals`: its shortest
decimal form, the digits a CSV or JSON download carries (`data_cell`), rounded half up. That is
Django's `floatformat` rule and what a person does to the download's value, so the page, the
Markdown and the CSV agree in every digit shown. Python's `format(x, ".3f")` rounds the binary value
instead and can differ in the last digit: a mean of 9,997 ratings over 2,000 instances is 4.9985,
stored as 4.99849999..., which `format` writes 4.998 and a person 4.999.

A p-value below `P_FLOOR` is written "< 0.001" everywhere people read it; the CSV and JSON keep
the value itself.
"""
from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal

P_FLOOR = 0.001
P_DECIMALS = 3
NOT_AVAILABLE = "n/a"


def decimals(value, places: int = 3) -> str:
    """`value` to `places` decimals, half up from its shortest decimal form; "" for None, "n/a" for
    a value that is not a finite number. Zero never carries a sign ("-0.000" reads as a direction)."""
    if value is None or value == "":
        return ""
    number = float(value)
    if not math.isfinite(number):
        return NOT_AVAILABLE
    rounded = Decimal(repr(number)).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    if rounded == 0:
        rounded = abs(rounded)
    return f"{rounded:f}"


def p_value(value) -> str:
    """A p-value as people read it: "< 0.001" below the floor, else three decimals; "n/a" for None."""
    if value is None:
        return NOT_AVAILABLE
    number = float(value)
    if not math.isfinite(number):
        return NOT_AVAILABLE
    if number < P_FLOOR:
        return f"< {P_FLOOR:.{P_DECIMALS}f}"
    return decimals(number, P_DECIMALS)


def p_clause(value) -> str:
    """A p-value inside a sentence: "p < 0.001" or "p = 0.012"."""
    text = p_value(value)
    return f"p {text}" if text.startswith("<") else f"p = {text}"


def percent(value, places: int = 0) -> str:
    """A share as a percentage, by the same rounding: 0.95 -> "95%"."""
    if value is None:
        return ""
    return f"{decimals(float(value) * 100, places)}%"


def money(value) -> str:
    """An amount in US dollars as people read it: "$8.50", "$184,125.00" (cents half up, thousands
    separated); "" for None. Decimal amounts are taken as they are, floats from their shortest form."""
    if value is None or value == "":
        return ""
    amount = value if isinstance(value, Decimal) else Decimal(repr(float(value)) if isinstance(value, float) else str(value))
    cents = amount.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    if cents == 0:
        cents = abs(cents)
    return f"-${-cents:,.2f}" if cents < 0 else f"${cents:,.2f}"


def count(value) -> str:
    """A count as people read it, thousands separated: 14748 -> "14,748"; "" for None."""
    if value is None or value == "":
        return ""
    return f"{int(value):,}"


def interval(low, high, places: int = 3) -> str:
    return f"[{decimals(low, places)}, {decimals(high, places)}]"


def data_cell(value):
    """A float as a CSV carries it: its shortest form that reads back as the same float (`repr`),
    so what a page shows is that value rounded, never a rounding of a rounding."""
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else ""
    return value
