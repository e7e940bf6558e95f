"""A pairwise job's Bradley-Terry ranking as CSV and Markdown, from its rows as stored
(`bradley_terry.export_rows`, kept in the job's report). Pure: no Django."""
from __future__ import annotations

import csv
import io

from evaluation.stats import fragility
from evaluation.stats.bradley_terry import ROW_ORDER
from evaluation.stats.report_format import RANK_COLUMNS_WORDS, RANK_RANGE, TIE_GROUP
from evaluation.stats.scoring import tie_group_rule
from quorum import numbers
from quorum.csv_safety import formatted_cell, safe_row

#: The CSV's columns, in `bradley_terry.export_rows`'s order (a stored row's keys may come back in
#: another: PostgreSQL's jsonb keeps objects' keys sorted its own way).
COLUMNS = ["rank", "system", "strength", "log_strength", "ci_low", "ci_high", "rank_low", "rank_high", "wins", "losses", "ties", "comparisons"]


def to_csv(table: list[dict], *, note: str = "") -> str:
    """The rows; with a `note` (a report an older method computed, `versions.Standing.note`)
    a last column `note` says it on every row, so a row read alone still says it."""
    columns = sorted(table[0], key=lambda name: COLUMNS.index(name) if name in COLUMNS else len(COLUMNS))
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=safe_row(columns + (["note"] if note else [])), lineterminator="\n")
    writer.writeheader()
    for row in table:
        cells = [formatted_cell(row[name]) for name in columns] + ([formatted_cell(note)] if note else [])
        writer.writerow(dict(zip(writer.fieldnames, cells, strict=True)))
    return buffer.getvalue()


def to_markdown(table: list[dict], *, job_name: str = "", controls: dict | None = None, rank_sets: list[dict] | None = None,
                note: str = "") -> str:
    """The ranking as Markdown; a `note` (a report an older method computed) comes first, quoted."""
    header = [TIE_GROUP, RANK_RANGE, "System", "Log-strength [95% CI]", "Wins", "Losses", "Ties", "Comparisons"]
    lines = ([f"## {job_name}", ""] if job_name else []) + ([f"> {note}.", ""] if note else [])
    lines += ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] * len(header)) + "|"]
    for row in table:
        span = "" if row["rank_low"] is None else f"{row['rank_low']}-{row['rank_high']}"
        interval = "" if row["ci_low"] is None else " " + numbers.interval(row["ci_low"], row["ci_high"])
        lines.append(f"| {row['rank']} | {span} | {row['system']} | {numbers.decimals(row['log_strength'])}{interval} | {row['wins']} | {row['losses']} | {row['ties']} | {row['comparisons']} |")
    lines += [
        "",
        "Bradley-Terry strengths by penalised maximum likelihood (ties count half a win each side), mean "
        "log-strength 0; 95% percentile intervals from a seeded bootstrap over contexts; with it, rank "
        "and rank range as on the ratings leaderboard: " + tie_group_rule() + "; " + ROW_ORDER + ".",
        "",
        RANK_COLUMNS_WORDS + ".",
    ]
    if controls:
        lines += controls_markdown(controls)
    for judged in rank_sets or []:
        lines += rank_sets_markdown(judged)
    return "\n".join(lines) + "\n"


def rank_sets_markdown(judged: dict) -> list[str]:
    """One judge's prediction-powered rank sets beside the human-only ones (`judges.selectors.pairwise_judge_rank_sets`)."""
    lines = ["", f"## Rank sets with judge {judged['name']}", ""]
    if "skipped" in judged:
        return lines + [f"Not computed: {judged['skipped']}."]
    result = judged["result"]
    lines += ["| System | Win rate (with the judge) | Ranks (with the judge) | Win rate (humans only) | Ranks (humans only) |", "|---|---|---|---|---|"]
    for row in result["rows"]:
        ppi, human = row["ppi"], row["human_only"]
        lines.append(f"| {row['system']} | {numbers.decimals(ppi['estimate'])} | {ppi['rank_low']}-{ppi['rank_high']} | {numbers.decimals(human['estimate'])} | {human['rank_low']}-{human['rank_high']} |")
    return lines + [
        "",
        f"{result['method'][:1].upper()}{result['method'][1:]}. {result['labelled']} pairs with human votes and the judge's verdict, "
        f"{result['unlabelled']} with the judge's verdict only. Mean set size: {numbers.decimals(result['mean_size']['ppi'], 2)} with the judge, "
        f"{numbers.decimals(result['mean_size']['human_only'], 2)} humans only.",
    ]


def controls_markdown(controls: dict) -> list[str]:
    """Style-controlled ranking, position bias and fragility (`campaigns.controls.pairwise_controls`) as Markdown lines."""
    lines = ["", "## Style-controlled ranking", ""]
    styled = controls["style"]
    if "error" in styled:
        lines.append(f"Not fitted: {styled['error']}.")
    else:
        lines += [
            f"| {TIE_GROUP} | {RANK_RANGE} | System | Log-strength [{numbers.percent(styled['level'])} CI] | Raw rank range | Raw log-strength |",
            "|---|---|---|---|---|---|",
        ]
        for row in styled["rows"]:
            raw = numbers.decimals(row["raw_log_strength"])
            span = f"{row['rank_low']}-{row['rank_high']}" if row.get("rank_low") else "not computed"
            raw_span = f"{row['raw_rank_low']}-{row['raw_rank_high']}" if row.get("raw_rank_low") else str(row["raw_rank"])
            lines.append(
                f"| {row['rank']} | {span} | {row['system']} | {numbers.decimals(row['log_strength'])} "
                f"{numbers.interval(row['ci_low'], row['ci_high'])} | {raw_span} | {raw} |"
            )
        for c in styled["coefficients"]:
            lines.append(
                f"\nStyle coefficient, {c['label']}: {numbers.decimals(c['coefficient'])} {numbers.interval(c['ci_low'], c['ci_high'])} "
                f"per standard deviation ({numbers.p_clause(c['p'])})."
            )
        lines += ["", styled["method"] + "."]
    position = controls["position"]
    lines += ["", "## Position bias", ""]
    if position["share"] is None:
        lines.append("No decided comparison recorded which output was on the left.")
    else:
        lines.append(
            f"The output shown on the left was chosen in {position['left_chosen']} of {position['decided']} decided comparisons "
            f"({numbers.decimals(position['share'])}, {numbers.percent(position['level'])} Clopper-Pearson interval "
            f"{numbers.interval(position['ci_low'], position['ci_high'])}; exact binomial test of 1/2, "
            f"{numbers.p_clause(position['p'])}; {position['ties']} ties left out)."
        )
    return lines + fragility.markdown(controls["fragility"], "votes")
