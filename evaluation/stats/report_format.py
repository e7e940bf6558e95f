"""The stored report's format number (declared with its words in `versions`) and the rank columns'
words, apart from `report.py` so that a campaign's inputs version can
be computed without loading numpy, pandas and SciPy (`campaigns/services/inputs.py`)."""

from evaluation.stats.versions import PAIRWISE, RATINGS

#: Today's methods, under the names their readers and writers use (`versions` declares them and their words).
REPORT_FORMAT = RATINGS.current
PAIRWISE_REPORT_METHOD = PAIRWISE.current

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
