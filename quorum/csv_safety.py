"""Spreadsheet-safe CSV cells, one rule for every CSV export. Pure: no Django.

A spreadsheet runs a cell that starts with `=`, `+`, `-` or `@` (and, in some, a leading tab or
carriage return) as a formula, so a worker's rewrite "=HYPERLINK(...)" in `responses.csv` would run
on the organizer's machine. OWASP's advice (CSV Injection) is followed: such a text cell gets a
leading single quote, which spreadsheets show as text. Only strings are touched: numbers passed as
numbers (a -0.5 score) are written as they are and stay numeric; a caller that formats a number
into a string formats it after `safe_cell`. JSON and JSONL exports keep the raw text.
"""
from __future__ import annotations

import csv

from quorum import numbers

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value):
    """The cell as a spreadsheet will show it as text: strings that start like a formula get a quote."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def safe_row(values) -> list:
    return [safe_cell(v) for v in values]


class Writer:
    """`csv.writer` whose rows go through `safe_cell`."""

    def __init__(self, fh, **kwargs):
        self._writer = csv.writer(fh, **kwargs)

    def writerow(self, row):
        return self._writer.writerow(safe_row(row))

    def writerows(self, rows):
        for row in rows:
            self.writerow(row)


def formatted_cell(value):
    """A cell of a numeric report: "" for None, a float as its full value (`numbers.data_cell`,
    after the formula rule, so -0.5 stays a number), any other value through `safe_cell`."""
    if value is None:
        return ""
    if isinstance(value, float):
        return numbers.data_cell(value)
    return safe_cell(value)
