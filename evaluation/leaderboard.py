"""The leaderboard of a stored report as JSON, CSV and Markdown. Pure: no Django.

Rows follow the report's order (final score, best first). Reference rows (ground truth,
baseline) have no rank. CI columns are the report's bootstrap percentile intervals.
"""
from __future__ import annotations

import csv
import io
import json


def rows(report: dict) -> list[dict]:
    out = []
    for system in report["systems"]:
        row = {
            "rank": system["rank"],
            "shared_rank": system["shared_rank"],
            "rank_range": None if system["rank_low"] is None else f"{system['rank_low']}-{system['rank_high']}",
            "system": system["system"],
            "kind": system["kind"],
        }
        for q in report["questions"]:
            per_q = system["questions"][q]
            row[q] = per_q["score"]
            row[f"{q}_ci_low"] = per_q["ci_low"]
            row[f"{q}_ci_high"] = per_q["ci_high"]
            row[f"{q}_n"] = per_q["n"]
        row.update(final=system["final"], final_ci_low=system["final_ci_low"], final_ci_high=system["final_ci_high"], n=system["n"])
        out.append(row)
    return out


def to_json_dict(report: dict) -> dict:
    return {"campaign": report.get("campaign"), "inputs_version": report.get("inputs_version"), "method": report["method"], "rows": rows(report)}


def to_json(report: dict) -> str:
    return json.dumps(to_json_dict(report), indent=2)


def to_csv(report: dict) -> str:
    table = rows(report)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(table[0]) if table else ["system"], lineterminator="\n")
    writer.writeheader()
    for row in table:
        writer.writerow({k: ("" if v is None else (f"{v:.4f}" if isinstance(v, float) else v)) for k, v in row.items()})
    return buffer.getvalue()


def _score(value, low, high):
    if value is None:
        return "n/a"
    return f"{value:.3f} [{low:.3f}, {high:.3f}]" if low is not None else f"{value:.3f}"


def to_markdown(report: dict) -> str:
    questions = report["questions"]
    header = ["Rank", "Rank range", "System"] + [q.capitalize() for q in questions] + ["Final", "n"]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] * len(header)) + "|"]
    for system in report["systems"]:
        rank = "ref" if system["rank"] is None else str(system["shared_rank"]) + ("" if system["shared_rank"] == system["rank"] else f" ({system['rank']})")
        span = "" if system["rank_low"] is None else f"{system['rank_low']}-{system['rank_high']}"
        cells = [rank, span, f"{system['system']}" + ("" if system["kind"] == "entry" else f" ({system['kind'].replace('_', ' ')})")]
        cells += [_score(system["questions"][q]["score"], system["questions"][q]["ci_low"], system["questions"][q]["ci_high"]) for q in questions]
        cells += [_score(system["final"], system["final_ci_low"], system["final_ci_high"]), str(system["n"])]
        lines.append("| " + " | ".join(cells) + " |")
    method = report["method"]
    lines += [
        "",
        f"Scores with {method['ci']:.0%} {method['ci_method']} (B = {method['bootstrap']}, seed {method['seed']}).",
        f"Rank: shared rank ({method['shared_rank']}), competition rank in parentheses when it differs; 'ref' marks reference rows.",
    ]
    return "\n".join(lines) + "\n"


FORMATS = {"json": to_json, "csv": to_csv, "md": to_markdown}


def render(report: dict, fmt: str) -> str:
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}")
    return FORMATS[fmt](report)
