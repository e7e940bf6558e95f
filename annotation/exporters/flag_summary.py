"""The dataset card's account of flags: per variant, how many responses were flagged for which
reason and what became of them. Pure: no Django import.

A response's flags are what the last flag run stored in its checks (`checks["flags"]`, with
`checks["flag_evidence"]`: code -> why). A typing-process flag is about one field: its evidence
starts with the field's name (`quality.flags.typing_evidence`), so it counts for that variant only;
a reading worth a listen names its readings ("reading 2: ..."), and a job of readings has one test
set per reading in their order (`spoken_1`, `spoken_2`, ...), so it counts for those sets only; any
other flag (fast, near-duplicate, ...) is about the whole response and counts for every variant.

Each flagged response is also kept as data (`records`: its id, worker, status and each flag's code,
name and evidence), which the export writes to `flags.jsonl`.
"""
import re
from collections.abc import Mapping, Sequence

from ..quality.flags import WORTH_A_LISTEN, flag_name

#: A reading named at the head of its evidence ("reading 2: ..."; not "as reading 1 of response 7").
READING_NAMED = re.compile(r"(?:^|; )reading (\d+): ")


class FlagSummary:
    """Fed one response at a time (`add`), as the export streams them."""

    def __init__(self, variants: Sequence[str]):
        self.variants = list(variants)
        self.responses = 0
        self.flagged = 0
        self.reviewed = 0
        # variant -> code -> status -> count
        self.counts: dict[str, dict[str, dict[str, int]]] = {v: {} for v in self.variants}
        #: One record per flagged response, in the order added: the lines of `flags.jsonl`.
        self.records: list[dict] = []

    def add(self, status: str, checks: Mapping, *, response_id: int | None = None, worker: str = "") -> list[str]:
        """Count one response and keep its flags with their evidence; returns its flag codes."""
        self.responses += 1
        checks = checks if isinstance(checks, Mapping) else {}
        codes = [str(c) for c in checks.get("flags") or []]
        if not codes:
            return []
        self.flagged += 1
        if checks.get("override"):
            self.reviewed += 1
        evidence = checks.get("flag_evidence")
        evidence = evidence if isinstance(evidence, Mapping) else {}
        self.records.append({
            "response_id": response_id, "worker": worker, "status": status,
            "flags": [{"code": code, "name": flag_name(code), "evidence": str(evidence.get(code) or "")} for code in codes],
        })
        for code in codes:
            for variant in self._variants_of(code, str(evidence.get(code, ""))):
                by_status = self.counts[variant].setdefault(code, {})
                by_status[status] = by_status.get(status, 0) + 1
        return codes

    def _variants_of(self, code: str, why: str) -> list[str]:
        if code == WORTH_A_LISTEN:
            readings = {int(k) for k in READING_NAMED.findall(why)}
            named = [v for k, v in enumerate(self.variants, start=1) if k in readings]
        else:
            named = [v for v in self.variants if why.startswith(f"{v}: ") or f"; {v}: " in why]
        return named or self.variants

    def as_json(self) -> dict:
        return {
            "source": "each response's flags as the last flag run stored them (worker flags: docs/annotation.md); "
            "status is what was decided (accepted counts; excluded: paid, left out; rejected: not paid, left out; "
            "awaiting_review, held: not decided yet)",
            "responses": self.responses,
            "flagged_responses": self.flagged,
            "flagged_and_reviewed_by_a_person": self.reviewed,
            "per_variant": {v: {code: dict(sorted(s.items())) for code, s in sorted(codes.items())} for v, codes in self.counts.items()},
            "names": {code: flag_name(code) for code in sorted({c for codes in self.counts.values() for c in codes})},
        }


def readme_lines(summary: Mapping, *, part: str) -> list[str]:
    """The README's section for a summary made by `FlagSummary.as_json`; `part` is what the summary
    counts by ("test set": a flagged response that counts is in them; "answer field": in the files)."""
    where = "the test sets" if part == "test set" else "the exported files"
    lines = [
        "## Flags and decisions",
        "",
        f"{summary['flagged_responses']} of {summary['responses']} responses carry at least one flag "
        f"({summary['flagged_and_reviewed_by_a_person']} of them decided by a reviewer). Flags are evidence, not verdicts: "
        f"a flagged response that counts (`accepted`) may be in {where}. The `flags` column of `responses.csv` "
        "names each response's flags and `flag_evidence` says why, in words with the numbers measured; `response_id` "
        "identifies it. `flags.jsonl` has the same as data, one flagged response a line.",
        "",
    ]
    rows = [(v, code, s) for v, codes in summary["per_variant"].items() for code, s in codes.items()]
    if not rows:
        return [*lines, "No response was flagged.", ""]
    lines += [f"| {part} | flag | responses | what was decided |", "|---|---|---|---|"]
    for variant, code, statuses in rows:
        decided = ", ".join(f"{n} {status}" for status, n in statuses.items())
        lines.append(f"| {variant} | `{code}`: {flag_name(code)} | {sum(statuses.values())} | {decided} |")
    return [*lines, ""]
