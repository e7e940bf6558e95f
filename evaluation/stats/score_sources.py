"""Where an entry's objective score came from, in the same words wherever one is read. Pure.

An uploaded score file (score.csv) carries what the challenge published; `score_entries` recomputes
the metrics from the entries' outputs. The recomputation is evidence beside the published values and
never replaces them (`Entry.objective_scores` and `Entry.computed_scores` are kept apart), so a
correlation or a selection says which it read.
"""
UPLOADED = "uploaded"
COMPUTED = "computed"
#: Short labels, shown in a column or in brackets after a value.
LABELS = {UPLOADED: "from the uploaded score file", COMPUTED: "computed by Quorum"}
#: A correlation stored before the two were kept apart read the entries' scores with Quorum's values
#: merged over the uploaded ones.
MERGED = "merged"
MERGED_LABEL = "uploaded, with Quorum's values where it computed one (stored before they were kept apart)"

CORRELATION_WORDS = (
    "Spearman's rho of each objective metric with the final score over the ranked entries, computed once on the values of "
    "the uploaded score file (what the challenge published) and, for the entries whose metrics Quorum computed from their "
    "outputs (score_entries), once on those; the column Scores says which: a recomputation is shown beside the published "
    "values and never replaces them"
)
