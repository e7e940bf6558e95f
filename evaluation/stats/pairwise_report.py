"""A pairwise job's Bradley-Terry ranking as CSV and Markdown. Pure: no Django."""
from __future__ import annotations

import csv
import io

from evaluation.stats import bradley_terry
from evaluation.stats.scoring import tie_group_rule
from quorum.csv_safety import formatted_cell, safe_row


def rows(result) -> list[dict]:
    return bradley_terry.export_rows(result)


def to_csv(result) -> str:
    table = rows(result)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=safe_row(table[0]), lineterminator="\n")
    writer.writeheader()
    for row in table:
        writer.writerow(dict(zip(writer.fieldnames, (formatted_cell(v) for v in row.values()), strict=False)))
    return buffer.getvalue()


def to_markdown(result, *, job_name: str = "") -> str:
    header = ["Rank", "Rank range", "System", "Log-strength [95% CI]", "Wins", "Losses", "Ties", "Comparisons"]
    lines = ([f"## {job_name}", ""] if job_name else []) + ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] * len(header)) + "|"]
    for row in rows(result):
        span = "" if row["rank_low"] is None else f"{row['rank_low']}-{row['rank_high']}"
        interval = "" if row["ci_low"] is None else f" [{row['ci_low']:.3f}, {row['ci_high']:.3f}]"
        lines.append(f"| {row['rank']} | {span} | {row['system']} | {row['log_strength']:.3f}{interval} | {row['wins']} | {row['losses']} | {row['ties']} | {row['comparisons']} |")
    lines += [
        "",
        "Bradley-Terry strengths by penalised maximum likelihood (ties count half a win each side), mean "
        "log-strength 0; 95% percentile intervals from a seeded bootstrap over contexts; with it, rank "
        "and rank range as on the ratings leaderboard: " + tie_group_rule() + ".",
    ]
    return "\n".join(lines) + "\n"
