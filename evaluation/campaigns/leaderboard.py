"""The leaderboard of a stored report as JSON, CSV and Markdown. Pure: no Django.

One set of columns everywhere (`COLUMNS` and the per-question ones): the JSON rows, the CSV, the
Markdown table, the campaign page and the API all come from `rows()`. Rows follow the report's
order (final score, best first; rows that were not rated last). `rank` is the tie-group rank of
the report (reference rows have none); `rank_range` the ranks the same
Holm-adjusted comparisons allow (it always holds `rank`); every interval comes
from the same paired resamples as the pairwise table (see `evaluation.scoring`).
"""
from __future__ import annotations

import csv
import io
import json
from typing import TYPE_CHECKING

from evaluation.stats import score_sources, versions
from evaluation.stats.report_format import RANK_COLUMNS_WORDS, RANK_RANGE, TIE_GROUP
from quorum import numbers
from quorum.csv_safety import formatted_cell, safe_row
from quorum.lazy_modules import lazy

if TYPE_CHECKING:
    from evaluation.stats import fragility
else:
    fragility = lazy("evaluation.stats.fragility")


NOT_RATED = "not rated"
#: The count column, named the same way on the page, in the Markdown and (as `instances_rated`) in the
#: CSV and JSON: it counts test-set instances, not ratings or dialogs.
INSTANCES_RATED = "Instances rated"
INSTANCES_RATED_WORDS = (
    "Instances rated: the test-set instances with at least one rating of the system on every question (each "
    "<question>_instances_rated in the CSV and JSON: on that question, the instances its score is over); it counts "
    "instances, not ratings (several raters may rate one instance) nor dialogs"
)
#: The Spearman table's count: the ranked entries with a value of the metric.
CORRELATED_ENTRIES = "Entries"


def rows(report: dict) -> list[dict]:
    out = []
    for system in report["systems"]:
        row = {
            "rank": system["rank"],
            "rank_range": None if system["rank_low"] is None else f"{system['rank_low']}-{system['rank_high']}",
            "system": system["system"],
            "kind": system["kind"],
        }
        for q in report["questions"]:
            per_q = system["questions"][q]
            row[q] = per_q["score"]
            row[f"{q}_ci_low"] = per_q["ci_low"]
            row[f"{q}_ci_high"] = per_q["ci_high"]
            row[f"{q}_instances_rated"] = per_q["n"]
        row.update(
            final=system["final"], final_ci_low=system["final_ci_low"], final_ci_high=system["final_ci_high"],
            instances_rated=system["n"], unrated=system.get("unrated", 0), ci_clipped=bool(system.get("ci_clipped")),
        )
        out.append(row)
    return out


def pairwise_rows(report: dict) -> list[dict]:
    """`p_unadjusted`: the pair's own bootstrap p, before Holm; `significant` and `better` are the
    Holm-adjusted decision the tie groups read (`scoring.pairwise_differences`), so no pair is
    called better that the leaderboard puts in one group. `ci_clipped`: the interval met the
    difference the two scales allow; `too_few`: rated on both sides on too few instances to compare
    (the whole possible range, no p)."""
    out = []
    for row in report.get("pairwise", []):
        holm = row["p_holm"] is not None and bool(row.get("significant_holm"))
        out.append({
            "a": row["a"], "b": row["b"], "difference": row["difference"], "ci_low": row["ci_low"], "ci_high": row["ci_high"],
            "p_unadjusted": row["p"], "p_holm": row["p_holm"], "significant": holm,
            "better": (row["a"] if row["difference"] > 0 else row["b"]) if holm else None,
            "ci_clipped": bool(row.get("ci_clipped")), "too_few": bool(row.get("too_few")),
        })
    return out


def interval_cell(row) -> str:
    """A pairwise row's interval as the page and the Markdown show it."""
    return numbers.interval(row["ci_low"], row["ci_high"], 4) + (" too few to compare" if row["too_few"] else " clipped" if row["ci_clipped"] else "")


def fragility_rows(report: dict) -> list[dict]:
    """Rank 1 and each adjacent pair: ratings whose removal reverses the order (`stats.fragility`)."""
    return fragility.display_rows(report.get("fragility"))


def length_rows(report: dict) -> list[dict]:
    """Per system with response texts: Spearman's rho of response length (words) and its mean rating."""
    return list(report.get("length_association") or [])


TOO_FEW = "too few"  # a correlation's p-value over fewer than scoring.MIN_CORRELATION_POINTS points


def spearman_rows(report: dict) -> list[dict]:
    """Each metric's correlation with the final score, on the uploaded score file's values, then on
    Quorum's recomputation where it has one; `scores` names the source, `scores_text` in words."""
    if "spearman_computed" in report:
        sources = [(score_sources.UPLOADED, report.get("spearman", {})), (score_sources.COMPUTED, report["spearman_computed"])]
    else:  # stored before the two were kept apart: it read the merged values
        sources = [(score_sources.MERGED, report.get("spearman", {}))]
    # In the report's `metric_order` (the score file's), which the stored objects' keys do not keep;
    # a report stored before it keeps its keys' order.
    position = {metric: i for i, metric in enumerate(report.get("metric_order") or ())}
    return [
        {"metric": metric, "scores": source, "scores_text": scores_text(source),
         "rho": value["rho"], "p": value["p"], "entries": value["n"], "too_few": bool(value.get("too_few"))}
        for source, by_metric in sources
        for metric, value in sorted(by_metric.items(), key=lambda kv: position.get(kv[0], len(position)))
    ]


def scores_text(source: str) -> str:
    return score_sources.MERGED_LABEL if source == score_sources.MERGED else score_sources.LABELS[source]


def correlation_text(report: dict) -> str:
    """What the objective metrics' correlations read, as the page and the Markdown say it."""
    return report.get("method", {}).get("objective_scores") or f"Spearman's rho of each objective metric with the final score, on the entries' scores {score_sources.MERGED_LABEL}"


def to_json_dict(report: dict) -> dict:
    return {
        "campaign": report.get("campaign"),
        "inputs_version": report.get("inputs_version"),
        "n_evaluated": report.get("n_evaluated"),
        "n_unrated": report.get("n_unrated", 0),
        "clipped_note": clipped_note(report),
        "method": report["method"],
        "rows": rows(report),
        "pairwise": pairwise_rows(report),
        "spearman": spearman_rows(report),
        "fragility": fragility_rows(report),
        "length_association": length_rows(report),
    }


def to_json(report: dict) -> str:
    return json.dumps(to_json_dict(report), indent=2)


def _csv(table, empty_header=("system",)) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=safe_row(table[0] if table else empty_header), lineterminator="\n")
    writer.writeheader()
    for row in table:
        # Numbers are formatted here, after the formula rule, so a -0.5 score is not quoted.
        writer.writerow(dict(zip(writer.fieldnames, (formatted_cell(v) for v in row.values()), strict=False)))
    return buffer.getvalue()


def agreement_json(report: dict) -> str:
    """The raters' agreement the page shows (per question, Krippendorff's alpha at each level with its
    interval), as the page's download and the campaign's export write it."""
    return json.dumps(
        {"campaign": report.get("campaign"), "inputs_version": report.get("inputs_version"), "agreement": report.get("agreement", {})},
        indent=2,
    )


def to_csv(report: dict) -> str:
    """The leaderboard table; `pairwise_csv` and `spearman_csv` are its companions in the exports."""
    return _csv(rows(report))


def pairwise_csv(report: dict) -> str:
    return _csv(pairwise_rows(report), ("a", "b"))


def spearman_csv(report: dict) -> str:
    return _csv(spearman_rows(report), ("metric",))


def fragility_csv(report: dict) -> str:
    return _csv(fragility_rows(report), ("place", "above", "below"))


def score_cell(value, low, high):
    if value is None:
        return NOT_RATED
    return f"{numbers.decimals(value)} {numbers.interval(low, high)}" if low is not None else numbers.decimals(value)


def clipped_note(report: dict) -> str:
    """The warning for rows whose interval met the scale's bound (empty when none did)."""
    clipped = [system["system"] for system in report["systems"] if system.get("ci_clipped")]
    if not clipped:
        return ""
    bounds = report["method"].get("ci_bounds", "intervals are clipped to the scale")
    return f"Too few ratings for a reliable interval: {', '.join(clipped)} ({bounds})."


def starts_group(table: list[dict]) -> list[bool]:
    """Per row of `rows()`: the first entry of a tie group after another group, where the page draws
    the line the legend speaks of (`scoring.tie_group_rule`). Reference rows (no rank) and rows not
    rated draw none and do not end a group."""
    out, previous = [], None
    for row in table:
        rank = row["rank"] if row["kind"] == "entry" else None
        out.append(rank is not None and previous is not None and rank != previous)
        previous = rank if rank is not None else previous
    return out


def rank_cell(row) -> str:
    if row["kind"] != "entry":
        return "ref"
    return NOT_RATED if row["rank"] is None else str(row["rank"])


def system_cell(row) -> str:
    return row["system"] + ("" if row["kind"] == "entry" else f" ({row['kind'].replace('_', ' ')})")


EQ1_WORDS = (
    "Eq. 1's S_f (DSTC9 Track 1), not the mean rating: the harmonic mean of the ratings of its responses summed over the turns "
    "it detected as knowledge-seeking, per detected turn (S_p) and per true knowledge-seeking turn (S_r), so a turn it missed "
    "counts 0 and one it detected wrongly counts against it"
)
PLAIN_WORDS = "the mean over rated instances of each instance's mean rating"


def score_text(report: dict) -> str:
    """What each question's score is, as the stored report says each row was scored (Eq. 1's S_f for
    a row weighted by its knowledge-turn detection, else the mean of the instances' mean ratings):
    the page's "How to read this" and the Markdown say it in the same words."""
    method = report.get("method", {})
    scored = [r for r in report.get("systems", []) if r.get("rated", True)]
    weighted = [r["system"] for r in scored if r.get("weighted")]
    if "weighted" not in (scored[0] if scored else {}):
        return f"each question's score is {method.get('system_score', PLAIN_WORDS)}"  # a report stored before rows said how they were scored
    if weighted and len(weighted) == len(scored):
        return f"each question's score is {EQ1_WORDS}"
    if weighted:
        return f"each question's score is, for {', '.join(weighted)}, {EQ1_WORDS}; for the other rows (which predict no knowledge-seeking turns), {PLAIN_WORDS}"
    return f"each question's score is {PLAIN_WORDS}"


def to_markdown(report: dict) -> str:
    questions = report["questions"]
    header = [TIE_GROUP, RANK_RANGE, "System"] + [q.capitalize() for q in questions] + ["Final", INSTANCES_RATED, "Unrated"]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] * len(header)) + "|"]
    for row in rows(report):
        cells = [rank_cell(row), row["rank_range"] or "", system_cell(row)]
        cells += [score_cell(row[q], row[f"{q}_ci_low"], row[f"{q}_ci_high"]) for q in questions]
        cells += [score_cell(row["final"], row["final_ci_low"], row["final_ci_high"]), str(row["instances_rated"]), str(row["unrated"])]
        lines.append("| " + " | ".join(cells) + " |")
    method = report["method"]
    final = method.get("final_score", "mean of the question scores; the ranked statistic")
    lines += [
        "",
        # The page leads its reading guide with this: without it a plain-mean file and an Eq. 1 one read alike.
        f"Scores: {score_text(report)}. Final: {final}.",
        f"Scores with {method['ci']:.0%} intervals: {method['ci_method']} (B = {method['bootstrap']}, seed {method['seed']}).",
        f"{TIE_GROUP}: {method['rank']}; 'ref' marks reference rows. {RANK_RANGE}: {method['rank_range']}.",
        f"{RANK_COLUMNS_WORDS}.",
        f"{INSTANCES_RATED_WORDS}.",
    ]
    note = clipped_note(report)
    if note:
        lines.append(note)
    if report.get("n_unrated"):
        lines.append(f"Still unrated: up to {report['n_unrated']} evaluated instances per system; scores cover the rated ones.")
    pairs = pairwise_rows(report)
    if pairs:
        lines += ["", "## Pairwise comparisons (final score)", "", f"{method['pairwise']}.", "",
                  "| A | B | A - B | Interval | p (unadjusted) | p (Holm) | Better (Holm) |", "|---|---|---|---|---|---|---|"]
        for p in pairs:
            lines.append(
                f"| {p['a']} | {p['b']} | {numbers.decimals(p['difference'], 4)} | {interval_cell(p)} | {numbers.p_value(p['p_unadjusted'])} | {numbers.p_value(p['p_holm'])} | {p['better'] or 'no difference shown'} |"
            )
    lines += fragility.markdown(report.get("fragility"), "ratings")
    lengths = length_rows(report)
    if lengths:
        lines += ["", "## Response length and score", "", "Spearman's rho between a response's length in words and its mean rating, per system "
                  "(an association: longer responses rated higher when positive).", "", "| System | rho | p | Rated responses | Mean length |", "|---|---|---|---|---|"]
        for row in lengths:
            rho = "n/a" if row["rho"] is None else numbers.decimals(row["rho"])
            mean = numbers.decimals(row["mean_length"], 1)
            lines.append(f"| {row['system']} | {rho} | {TOO_FEW if row.get('too_few') else numbers.p_value(row['p'])} | {row['n']} | {mean} |")
    spearman = spearman_rows(report)
    if spearman:
        lines += ["", "## Spearman correlation of each objective metric with the human ranking", "", f"{correlation_text(report)}.", "",
                  f"| Metric | Scores | rho | p | {CORRELATED_ENTRIES} |", "|---|---|---|---|---|"]
        for s in spearman:
            rho = "n/a" if s["rho"] is None else numbers.decimals(s["rho"], 4)
            lines.append(f"| {s['metric']} | {s['scores_text']} | {rho} | {TOO_FEW if s['too_few'] else numbers.p_value(s['p'])} | {s['entries']} |")
    return "\n".join(lines) + "\n"


def older_method_note(report: dict) -> str:
    """The first paragraph of a download of results an older report format computed (the page's and
    the API's alike), in place of `stale_note`: their inputs may be today's, their method is not."""
    return "> **Out of date.** " + older_method_words(report, then="Compute the results again for today's") + "."


def older_method_words(report: dict, then: str = "") -> str:
    """What every output of results an older report format computed says first, before `then`
    (what happens next, in the output's own words); "" for results of today's format."""
    return versions.standing(versions.RATINGS, report.get("format")).note(then)


def older_format(report: dict) -> bool:
    """The report names a format older than today's (`versions.RATINGS`); one that names none
    (before format 2) is not judged by it."""
    return versions.standing(versions.RATINGS, report.get("format")).older


def out_of_date_note(report: dict, computed_at: str) -> str:
    """What a download of results that are not current says first: an older method, or older inputs."""
    return older_method_note(report) if older_format(report) else stale_note(computed_at)


def stale_note(computed_at: str) -> str:
    """The Markdown's first paragraph when the results it carries are older than the campaign's
    inputs (the page's download and the API's alike); `computed_at` as the reader's clock writes it."""
    return (
        f"> **Out of date.** The campaign's inputs (ratings, entries or instances) changed after these results were computed "
        f"({computed_at}); they are not the results of its current inputs. Compute the results again for those."
    )


FORMATS = {"json": to_json, "csv": to_csv, "md": to_markdown}


def render(report: dict, fmt: str) -> str:
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}")
    return FORMATS[fmt](report)
