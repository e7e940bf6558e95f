"""Reads for the finalists table (page and API): each finalist with the values of the chosen
metrics and where each value came from.

Eq. 2 reads `Entry.scores_for_ranking`: a value is *uploaded* when a score file gave it (what the
challenge published, `Entry.objective_scores`), and *computed* when only `score_entries` did
(`Entry.computed_scores`); a recomputation never replaces a published value.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from evaluation.models import Entry
from evaluation.stats.score_sources import COMPUTED, LABELS, UPLOADED
from quorum.lazy_modules import lazy

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy("pandas")

#: Shown in brackets after each value, so plain words without brackets of their own. The score file's
#: name is not kept (a command line import reads one too), so the label names its kind.
SOURCE_LABELS = LABELS


def score_source(entry: Entry, metric: str) -> str:
    """Where the value of `metric` that Eq. 2 reads for `entry` came from: UPLOADED or COMPUTED."""
    return UPLOADED if metric in (entry.objective_scores or {}) else COMPUTED


def finalist_rows(finalists: pd.DataFrame, metrics) -> list[dict]:
    """The rows of `campaigns.finalist_table`, each with `scores`: per chosen metric its value and source."""
    entries = Entry.objects.only("pk", "objective_scores", "computed_scores").in_bulk(list(map(int, finalists["entry_pk"])))
    rows = []
    for row in finalists.itertuples():
        entry = entries[int(row.entry_pk)]
        sources = {m: score_source(entry, m) for m in metrics}
        read = entry.scores_for_ranking()
        scores = [
            {"metric": m, "value": float(read[m]), "source": sources[m], "source_label": SOURCE_LABELS[sources[m]]}
            for m in metrics
        ]
        rows.append({
            "rank": int(row.rank), "team_id": row.team_id, "entry_id": row.entry_id, "entry_pk": int(row.entry_pk),
            "overall": float(row.overall), "tied_at_cutoff": bool(row.tied_at_cutoff), "scores": scores,
        })
    return rows


def sources_read(test_set, metrics) -> str:
    """Per chosen metric, how many competing entries' values Eq. 2 read from each source, in words:
    "detection_f1: 106 from the uploaded score file; detection_prec: 11 computed by Quorum"."""
    counts: dict[str, dict[str, int]] = {m: {} for m in metrics}
    entries = Entry.objects.filter(test_set=test_set, is_baseline=False, is_ground_truth=False).only("objective_scores", "computed_scores")
    for entry in entries:
        read = entry.scores_for_ranking()
        for metric in metrics:
            if metric in read:
                source = score_source(entry, metric)
                counts[metric][source] = counts[metric].get(source, 0) + 1
    return "; ".join(
        f"{metric}: " + ", ".join(f"{n} {SOURCE_LABELS[source]}" for source, n in sorted(by_source.items(), key=lambda item: item[0] != UPLOADED))
        for metric, by_source in counts.items() if by_source
    )
