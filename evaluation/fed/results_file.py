"""The FED results as a CSV an organizer publishes or reads into a spreadsheet. Pure: it writes what
`selectors.fed_report` read, so the file, the page and the API give the same figures.

One row per system and question (long form: a system's row per question, so a table with a
different set of questions has the same columns): the mean with its 95% interval, how many answers
it rests on, how many were N/A, and how many dialogs or responses of the system were rated. Then,
under system "(all)", each question's agreement between raters: Krippendorff's ordinal alpha with
its bootstrap interval, on the same columns, and the items rated twice or more. Every row says in
`coding` how its question's answers are numbered ("1 = No, 2 = Somewhat, 3 = Yes"): the FED paper's
tables code the three-point answers 1-3, some loaders 0-2, and a mean means nothing without it.
`ci_clipped` (True/False) says a mean's interval ran past the scale and was cut at its end.
"""
from __future__ import annotations

import csv
import io

from quorum.csv_safety import formatted_cell

COLUMNS = ["system", "question", "statistic", "value", "ci_low", "ci_high", "answers", "na", "items", "coding", "ci_clipped"]


def results_csv(results: list[dict], agreement: list[dict]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in results:
        for q in row["questions"]:
            writer.writerow(_cells(row["system"], q["name"], "mean", *_floats(q["mean"], q["low"], q["high"]), q["n"], q["na"], row["items"], q["coding"], q.get("ci_clipped", False)))
    for a in agreement:
        writer.writerow(_cells("(all)", a["name"], "krippendorff_alpha_ordinal", *_floats(a["alpha"], a["ci_low"], a["ci_high"]), None, None, a["units"], a["coding"]))
    return buffer.getvalue()


def _floats(*values) -> list:
    # A bound clipped to the scale comes as the scale's integer end: written like every other figure.
    return [None if v is None else float(v) for v in values]


def _cells(*values) -> list:
    """Figures as their full value (a negative alpha stays a number), names safe from formulas."""
    return [formatted_cell(v) for v in values]
