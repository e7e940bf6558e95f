"""Reads for the finalists table (page and API): each finalist with the values of the chosen
metrics and where each value came from.

A value is *computed* when `score_entries` computed it from the entry's outputs and the labels
(`Entry.computed_scores`) and it is still the value Eq. 2 read (`Entry.objective_scores`); it is
*uploaded* when it came from a score.csv, including an upload after the computation that replaced it.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from evaluation.models import Entry
from quorum.lazy_modules import lazy

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy("pandas")

COMPUTED = "computed"
UPLOADED = "uploaded"
#: Shown in brackets after each value, so plain words without brackets of their own. The score file's
#: name is not kept (a command line import reads one too), so the label names its kind.
SOURCE_LABELS = {COMPUTED: "computed by Quorum", UPLOADED: "from the uploaded score file"}


def score_source(entry: Entry, metric: str) -> str:
    """Where the value of `metric` that Eq. 2 reads for `entry` came from: COMPUTED or UPLOADED."""
    computed = entry.computed_scores or {}
    if metric in computed and computed[metric] == (entry.objective_scores or {}).get(metric):
        return COMPUTED
    return UPLOADED


def finalist_rows(finalists: pd.DataFrame, metrics) -> list[dict]:
    """The rows of `campaigns.finalist_table`, each with `scores`: per chosen metric its value and source."""
    entries = Entry.objects.only("pk", "objective_scores", "computed_scores").in_bulk(list(map(int, finalists["entry_pk"])))
    rows = []
    for row in finalists.itertuples():
        entry = entries[int(row.entry_pk)]
        sources = {m: score_source(entry, m) for m in metrics}
        scores = [
            {"metric": m, "value": float(entry.objective_scores[m]), "source": sources[m], "source_label": SOURCE_LABELS[sources[m]]}
            for m in metrics
        ]
        rows.append({
            "rank": int(row.rank), "team_id": row.team_id, "entry_id": row.entry_id, "entry_pk": int(row.entry_pk),
            "overall": float(row.overall), "tied_at_cutoff": bool(row.tied_at_cutoff), "scores": scores,
        })
    return rows
