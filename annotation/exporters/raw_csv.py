"""`responses.csv`: every response of a job, whatever its status, one row each. Pure: no Django import.

Cells hold the text as stored (quotes, commas and newlines are quoted by the csv module), except
that a text starting like a spreadsheet formula (`=`, `+`, `-`, `@`, tab, carriage return) gets a
leading `'` (`quorum.csv_safety`); the JSON exports keep the raw text. Read the file with a CSV parser.
"""
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from quorum import csv_safety

LEADING_COLUMNS = ["item_id", "dialog_id", "turn_index", "source_text", "worker"]
TRAILING_COLUMNS = [
    "status", "claimed_at", "submitted_at", "seconds_to_submit", "active_seconds", "failed_checks", "response_id", "flags",
    "flag_evidence",  # appended after `flags`, so scripts that read the columns before it by position still work
]
#: Between two flags' evidence in the `flag_evidence` cell (one flag's evidence may hold "; ").
EVIDENCE_SEPARATOR = " | "


@dataclass(frozen=True)
class ResponseRecord:
    item_id: int
    dialog_id: str  # the dialog's id in the source corpus
    turn_index: int | None
    source_text: str
    worker: str  # provider:external_id
    answers: Mapping
    status: str
    claimed_at: datetime | None
    submitted_at: datetime | None
    active_seconds: float | None
    checks: Mapping
    response_id: int | None = None


def columns(variants: Sequence[str]) -> list[str]:
    return [*LEADING_COLUMNS, *variants, *TRAILING_COLUMNS]


def failed_checks(checks) -> str:
    """The checks a response failed, as `field:code` joined by `; ` (empty when all passed).

    Responses store {"passed": bool, "problems": [{"field", "code", "message"}]}.
    """
    if not isinstance(checks, Mapping):
        return ""
    names = []
    for problem in checks.get("problems") or []:
        if isinstance(problem, Mapping):
            names.append(":".join(str(problem[k]) for k in ("field", "code") if problem.get(k)))
        else:
            names.append(str(problem))
    if not names and checks.get("passed") is False:
        names.append("failed")
    return "; ".join(n for n in names if n)


def _time(value: datetime | None) -> str:
    return value.isoformat() if value else ""


def _seconds(start: datetime | None, end: datetime | None) -> str:
    if not start or not end:
        return ""
    return f"{(end - start).total_seconds():.3f}"


def row(record: ResponseRecord, variants: Sequence[str]) -> list:
    answers = record.answers if isinstance(record.answers, Mapping) else {}
    return [
        record.item_id,
        record.dialog_id,
        "" if record.turn_index is None else record.turn_index,
        record.source_text,
        record.worker,
        *(cell(answers.get(v, "")) for v in variants),
        record.status,
        _time(record.claimed_at),
        _time(record.submitted_at),
        _seconds(record.claimed_at, record.submitted_at),
        "" if record.active_seconds is None else f"{record.active_seconds:.3f}",
        failed_checks(record.checks),
        "" if record.response_id is None else record.response_id,
        flag_codes(record.checks),
        flag_evidence(record.checks),
    ]


def cell(value):
    """An answer as a CSV cell: text and numbers as they are, None as empty, anything else (a list,
    a mapping) as JSON, never as a Python repr."""
    if value is None:
        return ""
    if isinstance(value, (str, int, float)):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def flag_codes(checks) -> str:
    """The flags the last flag run stored on a response, joined by `; ` (empty when none)."""
    if not isinstance(checks, Mapping):
        return ""
    return "; ".join(str(c) for c in checks.get("flags") or [])


def flag_evidence(checks) -> str:
    """Why the last flag run flagged a response, in words: `code: why` per flag in the order of
    `flags`, apart by " | " (a flag stored without evidence as its code alone; empty when none)."""
    if not isinstance(checks, Mapping):
        return ""
    evidence = checks.get("flag_evidence")
    evidence = evidence if isinstance(evidence, Mapping) else {}
    return EVIDENCE_SEPARATOR.join(
        f"{code}: {evidence[code]}" if evidence.get(code) else str(code) for code in checks.get("flags") or []
    )


def write_responses(fh, records: Iterable[ResponseRecord], variants: Sequence[str], on_row=None) -> int:
    """Write the header and one row per record to a text file opened with newline=""; return the row count."""
    writer = csv_safety.Writer(fh)  # worker text may start like a formula
    writer.writerow(columns(variants))
    count = 0
    for record in records:
        writer.writerow(row(record, variants))
        count += 1
        if on_row:
            on_row()
    return count
