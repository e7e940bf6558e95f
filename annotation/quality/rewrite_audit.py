"""Audit rewrites collected elsewhere with Quorum's automatic checks. Pure: no Django import.

One JSONL line is one rewrite: {"source": "...", "slot_values": [...], "variant": "paraphrase",
"rewrite": "..."}. `slot_values` may be strings or {"slot": ..., "value": ...} objects (the
shape of Turn.slot_values). A line that cannot be judged gets an error that says what to fix.
"""
import json
from dataclasses import dataclass, field

from ..text.rewrite_checks import DEFAULT_TYPO_MAX_EDIT_RATIO, VARIANTS, Problem, check_rewrite

PASS, FAIL, ERROR = "PASS", "FAIL", "ERROR"
FIELDS = ("source", "slot_values", "variant", "rewrite")


@dataclass
class Verdict:
    line: int
    verdict: str  # PASS | FAIL | ERROR
    reasons: list[str] = field(default_factory=list)
    codes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"line": self.line, "verdict": self.verdict, "reasons": self.reasons, "codes": self.codes}

    def as_text(self) -> str:
        text = f"line {self.line}: {self.verdict}"
        return text + (" - " + "; ".join(self.reasons) if self.reasons else "")


def _slot_values(raw) -> list[str]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ValueError('"slot_values" must be a list of strings or of {"slot", "value"} objects')
    values = []
    for entry in raw:
        if isinstance(entry, str):
            values.append(entry)
        elif isinstance(entry, dict) and isinstance(entry.get("value"), str):
            values.append(entry["value"])
        else:
            raise ValueError(f'"slot_values" has an entry that is neither a string nor {{"value": "..."}}: {entry!r}')
    return values


def audit_line(number: int, text: str, typo_max_edit_ratio: float = DEFAULT_TYPO_MAX_EDIT_RATIO) -> Verdict | None:
    """The verdict on one line of the file; None for a blank line."""
    if not text.strip():
        return None
    try:
        record = json.loads(text)
    except json.JSONDecodeError as exc:
        return Verdict(number, ERROR, [f"not valid JSON ({exc.msg} at column {exc.colno})"], ["bad_json"])
    if not isinstance(record, dict):
        return Verdict(number, ERROR, ["each line must be a JSON object"], ["bad_json"])
    unknown = [name for name in record if name not in FIELDS]
    if unknown:  # e.g. "slots" for "slot_values": ignoring it would pass rewrites that drop every value
        return Verdict(
            number, ERROR,
            [f"unknown field{'s' if len(unknown) > 1 else ''} {', '.join(repr(u) for u in unknown)}; "
             f"the accepted fields are {', '.join(FIELDS)}"],
            ["unknown_field"],
        )
    missing = [name for name in ("source", "variant", "rewrite") if not isinstance(record.get(name), str)]
    if missing:
        return Verdict(number, ERROR, [f"give {', '.join(repr(m) for m in missing)} as text"], ["missing_field"])
    if record["variant"] not in VARIANTS:
        return Verdict(number, ERROR, [f"variant {record['variant']!r} is not one of {', '.join(VARIANTS)}"], ["bad_variant"])
    try:
        slot_values = _slot_values(record.get("slot_values"))
    except ValueError as exc:
        return Verdict(number, ERROR, [str(exc)], ["bad_slot_values"])
    problems: list[Problem] = check_rewrite(
        record["variant"], record["source"], record["rewrite"], slot_values, typo_max_edit_ratio
    )
    if not problems:
        return Verdict(number, PASS)
    return Verdict(number, FAIL, [p.message for p in problems], [p.code for p in problems])


def audit_lines(lines, typo_max_edit_ratio: float = DEFAULT_TYPO_MAX_EDIT_RATIO):
    """Verdicts for an iterable of lines (numbered from 1), blank lines skipped."""
    for number, text in enumerate(lines, start=1):
        verdict = audit_line(number, text, typo_max_edit_ratio)
        if verdict is not None:
            yield verdict
