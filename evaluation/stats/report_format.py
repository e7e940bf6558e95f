"""The stored report's format number, apart from `report.py` so that a campaign's inputs version can
be computed without loading numpy, pandas and SciPy (`campaigns/services/inputs.py`)."""

REPORT_FORMAT = 7  # 7: objective metrics correlated on the uploaded and the computed scores apart (score_sources), rank ranges from 1 + the entries significantly better; 6: response length and score "too few" below 5 responses; 5: "better" from the Holm decision the tie groups read; 4: pairwise intervals within the difference the scales allow, too few instances to compare; 3: tie groups and rank ranges from Holm-adjusted comparisons, intervals on the scale, "too few" correlations; 2: tie-group ranks, paired-difference pairwise table, rater-aware intervals

#: The method that computes a pairwise job's stored ranking (`PairwiseReport.method`), raised with
#: every change to what a stored report says. A report computed by an older method is computed again
#: in the background, and until then every output marks it (`PAIRWISE_OLDER_METHOD`).
#: 2: the style-controlled ranking's tie groups and rank ranges from Holm-adjusted Wald tests of
#: every pair (it ranked by the point estimates alone, 1, 2, 3 where the intervals overlapped);
#: 1: rank ranges from 1 + the entries significantly better (Holm) to N less those significantly
#: worse; 0: reports stored before the method was recorded (ranges from the tie group's first place).
PAIRWISE_REPORT_METHOD = 2
PAIRWISE_OLDER_METHOD = (
    "This ranking was computed with an older method (method {stored}; the current one is {current}): its rank ranges "
    "may contradict the Holm-adjusted pairwise decisions. {then}"
)


def pairwise_older_method(stored: int, *, under_way: bool) -> str:
    """What every output of a pairwise ranking stored by an older method says first; `under_way`:
    its recomputation is queued or running (else it failed, or could not be asked for)."""
    then = "It is being computed again" if under_way else "Compute it again to replace it"
    return PAIRWISE_OLDER_METHOD.format(stored=stored, current=PAIRWISE_REPORT_METHOD, then=then)

#: The two rank columns of every leaderboard (ratings, pairwise, interactive), named apart on every
#: page and in every Markdown table: the tie group's place and the ranks the pairwise table allows.
#: The CSV and JSON keep their keys (`rank`, `rank_low`/`rank_high`, `rank_range`).
TIE_GROUP = "Tie-group rank"
RANK_RANGE = "Rank range"
RANK_COLUMNS_WORDS = (
    "Tie-group rank is the place of the system's tie group: systems that no Holm-adjusted comparison separates share it, "
    "and the next group's place counts every system above it (1, 1, 3). Rank range is the system's own: from 1 plus the "
    "systems significantly better than it to the number of systems less those significantly worse, as its rows of the "
    "pairwise table say; two systems of one group can have different ranges. In the CSV and JSON they are rank, and "
    "rank_low and rank_high (rank_range on the ratings leaderboard)"
)
