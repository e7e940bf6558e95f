"""The FED results as a CSV an organizer publishes or reads into a spreadsheet, and as Markdown (the
`fed_results` command). Pure: it writes what `selectors.fed_report` computed and the set stored, so
the files, the page and the API give the same figures.

One row per system and question (long form: a system's row per question, so a table with a
different set of questions has the same columns): the mean with its 95% interval, how many answers
it rests on, how many were N/A, and how many dialogs or responses of the system were rated. Then,
under system "(all)", each question's agreement between raters: Krippendorff's ordinal alpha with
its bootstrap interval, on the same columns, and the items rated twice or more. Every row says in
`coding` how its question's answers are numbered ("1 = No, 2 = Somewhat, 3 = Yes"): the FED paper's
tables code the three-point answers 1-3, some loaders 0-2, and a mean means nothing without it.
`ci_clipped` (True/False) says a mean's interval ran past the scale and was cut at its end. Results
that are not current (answers changed since, an older method) carry a last column `note` saying so on
every row, so a row read alone still says it.
"""
from __future__ import annotations

import csv
import io

from quorum import numbers
from quorum.csv_safety import formatted_cell

COLUMNS = ["system", "question", "statistic", "value", "ci_low", "ci_high", "answers", "na", "items", "coding", "ci_clipped"]


def results_csv(results: list[dict], agreement: list[dict], *, note: str = "") -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(COLUMNS + (["note"] if note else []))
    noted = [note] if note else []
    for row in results:
        for q in row["questions"]:
            writer.writerow(_cells(
                row["system"], q["name"], "mean", *_floats(q["mean"], q["low"], q["high"]), q["n"], q["na"], row["items"], q["coding"],
                q.get("ci_clipped", False), *noted,
            ))
    for a in agreement:
        writer.writerow(_cells(
            "(all)", a["name"], "krippendorff_alpha_ordinal", *_floats(a["alpha"], a["ci_low"], a["ci_high"]), None, None, a["units"], a["coding"],
            *([None, note] if note else []),
        ))
    return buffer.getvalue()


def _floats(*values) -> list:
    # A bound clipped to the scale comes as the scale's integer end: written like every other figure.
    return [None if v is None else float(v) for v in values]


def _cells(*values) -> list:
    """Figures as their full value (a negative alpha stays a number), names safe from formulas."""
    return [formatted_cell(v) for v in values]


def results_markdown(results: list[dict], agreement: list[dict], *, name: str, unit: str, note: str = "") -> str:
    """The page's results and agreement tables as Markdown, each figure written as the page writes it
    (`quorum.numbers`: three decimals); `unit` is what the interval is clustered by ("dialog", or
    "response" at turn level); a `note` (results not current) comes first, quoted."""
    lines = [f"## {name}", ""] + ([f"> {note}.", ""] if note else [])
    if not results:
        return "\n".join(lines + ["No answers count yet."]) + "\n"
    header = ["System", "Items"] + [q["label"] for q in results[0]["questions"]]
    lines += ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] * len(header)) + "|"]
    for row in results:
        lines.append("| " + " | ".join([_text(row["system"]), str(row["items"])] + [mean_cell(q) for q in row["questions"]]) + " |")
    lines += [
        "",
        f"Mean answer per question over the answers that count, with its 95% interval clustered by {unit} and by rater "
        f"(t with min({unit}s, raters) - 1 degrees of freedom, within the scale; \"clipped\": cut at the scale's end); "
        "N/A answers are counted apart and left out of the mean. Coding: "
        + "; ".join(f"{q['label']}: {q['coding']}" for q in results[0]["questions"]) + ".",
        "",
        "## Agreement between raters",
        "",
        "| Question | α [95% interval] | Items rated twice or more |",
        "|---|---|---|",
    ]
    lines += [f"| {a['label']} | {a['shown']} | {a['units']} |" for a in agreement]
    lines += ["", "Krippendorff's α per question (ordinal, on the question's scale, N/A left out), with its 95% bootstrap interval over items."]
    return "\n".join(lines) + "\n"


def mean_cell(q: dict) -> str:
    """A question's figure as the set's page writes it: mean [low, high], "clipped", (n=…, N/A …)."""
    if q["mean"] is None:
        figure = "—"
    else:
        figure = numbers.decimals(q["mean"])
        if q["low"] is not None:
            figure += " " + numbers.interval(q["low"], q["high"]) + (" clipped" if q.get("ci_clipped") else "")
    na = f", N/A {q['na']}" if q["na"] else ""
    return f"{figure} (n={q['n']}{na})"


def _text(value: str) -> str:
    return value.replace("|", "\\|")
