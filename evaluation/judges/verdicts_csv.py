"""An automatic judge's verdicts on a pairwise job's pairs, as a CSV. Pure: pandas; no Django.

Columns: `pair,preferred` and optionally `probability`, one row per pair. `pair` is the pair's
position in the job (0 for the first line of the pairs file), `preferred` the output the judge
prefers, `a` or `b` as the pair names them (not the side a worker saw), or `tie`; `probability`
the judge's probability that its preferred output is the better one, from 0.5 to 1, empty for a
tie or when the judge gives none. Everything wrong is named by line, and nothing is imported.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from evaluation.judges.scores_csv import JudgeFileError, line_number, read_columns
from quorum.lazy_modules import lazy

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy("pandas")

REQUIRED = ("pair", "preferred")
OPTIONAL = ("probability",)
VERDICTS = ("a", "b", "tie")


VerdictFileError = JudgeFileError  # the file cannot be imported; the message names the line and what to fix


def read(source, positions, name: str = "verdicts.csv") -> pd.DataFrame:
    """The verdicts as a frame (pair, preferred, probability: NaN when not given), checked against
    `positions`, the positions of the job's pairs that can be judged."""
    frame = read_columns(source, name, REQUIRED, OPTIONAL, what="verdicts")
    for column in REQUIRED:
        empty = frame[column] == ""
        if empty.any():
            raise VerdictFileError(f"{name} line {line_number(empty.idxmax())}: {column} is empty")
    pair = pd.to_numeric(frame["pair"], errors="coerce")
    known = set(positions)
    bad = pair.isna() | (pair % 1 != 0) | ~pair.isin(known)
    if bad.any():
        at = bad.idxmax()
        raise VerdictFileError(f"{name} line {line_number(at)}: pair {frame['pair'][at]!r} is not a pair of the job (its positions run 0 to {max(known, default=-1)}; gold items are not pairs)")
    preferred = frame["preferred"].str.lower()
    bad = ~preferred.isin(VERDICTS)
    if bad.any():
        at = bad.idxmax()
        raise VerdictFileError(f"{name} line {line_number(at)}: preferred {frame['preferred'][at]!r} is not a, b or tie")
    given = frame["probability"] != ""
    probability = pd.to_numeric(frame["probability"].where(given), errors="coerce")
    bad = given & (probability.isna() | (probability < 0.5) | (probability > 1))
    if bad.any():
        at = bad.idxmax()
        raise VerdictFileError(f"{name} line {line_number(at)}: probability {frame['probability'][at]!r} is not a number from 0.5 to 1 (the judge's probability for the output it prefers)")
    bad = given & (preferred == "tie")
    if bad.any():
        raise VerdictFileError(f"{name} line {line_number(bad.idxmax())}: a tie takes no probability; leave it empty")
    out = pd.DataFrame({"pair": pair.astype(int), "preferred": preferred, "probability": probability.astype(float)})
    repeated = out.duplicated(subset=["pair"])
    if repeated.any():
        at = repeated.idxmax()
        raise VerdictFileError(f"{name} line {line_number(at)}: pair {out['pair'][at]} is judged twice")
    return out


def share_of_a(preferred: str, probability: float | None) -> float:
    """The judge's share of the win for output a: its verdict, or its probability when given."""
    if preferred == "tie":
        return 0.5
    certainty = 1.0 if probability is None or probability != probability else float(probability)  # NaN: not given
    return certainty if preferred == "a" else 1.0 - certainty
