"""Ratings collected anywhere, as a CSV, turned into the inputs of `report.build_report`. Pure: no Django.

Columns: `system,instance,rater,question,rating`, one row per rating (whole numbers 1-5). Optional:
- `kind`: entry (default), baseline or ground_truth; the last two are reference rows, not ranked;
- `target` and `predicted` (0/1): whether the instance truly is knowledge-seeking, and whether the
  system predicted so; with them the score is Eq. 1's detection-weighted F (PROTOCOLS.md), without
  them every instance counts for every system and the score is the plain mean.
A row with an empty `rating` rates nothing: it says that the system saw that instance, with its
`target`/`predicted` flags (Eq. 1 counts a detection that was never rated, e.g. a false alarm, in
the precision denominator). Instances are matched by their id as written, numbered in order of
first appearance.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from quorum.lazy_modules import lazy

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from evaluation.stats import report
else:
    np = lazy("numpy")
    pd = lazy("pandas")
    report = lazy("evaluation.stats.report")


REQUIRED = ("system", "instance", "rater", "question", "rating")
OPTIONAL = ("kind", "target", "predicted")
SCALE = (1, 2, 3, 4, 5)


class RatingsFileError(ValueError):
    """The file cannot be scored; the message names the line and what to fix."""


def _line(index) -> int:
    return int(index) + 2  # header is line 1


def _flag(frame, column, name):
    values = frame[column]
    bad = ~values.isin([0, 1, "0", "1", 0.0, 1.0])
    if bad.any():
        at = values[bad].index[0]
        raise RatingsFileError(f"{name} line {_line(at)}: {column} must be 0 or 1, not {values[at]!r}")
    return values.astype(float).astype(int)


def read(source, name: str = "ratings.csv"):
    """(ratings, truth, systems, questions) for `build_report`, from a path or a file object."""
    frame = _checked_frame(source, name)
    rates = frame["rating"].str.strip() != ""
    numbers = _checked_ratings(frame, rates, name)

    instance_ids = list(dict.fromkeys(frame["instance"]))
    index_of = {iid: k for k, iid in enumerate(instance_ids)}
    instance_index = frame["instance"].map(index_of)
    ratings = pd.DataFrame({
        "system": frame["system"], "question": frame["question"], "instance": instance_index,
        "rater": frame["rater"], "value": numbers.fillna(0).astype(int),
    })[rates].reset_index(drop=True)
    truth = _truth(frame, instance_ids, instance_index, name)
    systems = [_system(frame, label, instance_index, len(instance_ids), name) for label in dict.fromkeys(frame["system"])]
    questions = list(dict.fromkeys(frame.loc[rates, "question"]))
    return ratings, truth, systems, questions


def _checked_frame(source, name: str) -> pd.DataFrame:
    """The CSV as text columns, with the required columns and no unknown one."""
    try:
        frame = pd.read_csv(source, dtype=str, keep_default_na=False)
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise RatingsFileError(f"{name}: cannot read the CSV ({exc})") from None
    missing = [c for c in REQUIRED if c not in frame.columns]
    if missing:
        raise RatingsFileError(f"{name}: missing column(s) {', '.join(missing)}; the header must have {','.join(REQUIRED)}")
    unknown = [str(c) for c in frame.columns if c not in REQUIRED + OPTIONAL]
    if unknown:  # e.g. "targets": ignored, it would turn Eq. 1's weighted F into a plain mean unsaid
        raise RatingsFileError(
            f"{name}: unknown column(s) {', '.join(unknown)}; the columns are {','.join(REQUIRED)} and optionally {','.join(OPTIONAL)}"
        )
    return frame


def _checked_ratings(frame: pd.DataFrame, rates: pd.Series, name: str) -> pd.Series:
    """The rating column as numbers, once every rating row names what it rates, once, on the scale."""
    if not rates.any():
        raise RatingsFileError(f"{name}: no ratings")
    for column in ("system", "instance", "rater", "question"):
        # Every row names its system and instance; only a row that rates needs a rater and a question.
        needed = True if column in ("system", "instance") else rates
        empty = (frame[column].str.strip() == "") & needed
        if empty.any():
            raise RatingsFileError(f"{name} line {_line(empty.idxmax())}: {column} is empty")
    numbers = pd.to_numeric(frame["rating"], errors="coerce")
    bad = rates & ~numbers.isin(SCALE)
    if bad.any():
        at = bad.idxmax()
        raise RatingsFileError(f"{name} line {_line(at)}: rating {frame['rating'][at]!r} is not a whole number from 1 to 5")
    repeated = frame.duplicated(subset=["system", "instance", "rater", "question"]) & rates
    if repeated.any():
        at = repeated.idxmax()
        raise RatingsFileError(f"{name} line {_line(at)}: rater {frame['rater'][at]!r} rated {frame['question'][at]!r} of this system and instance twice")
    return numbers


def _truth(frame: pd.DataFrame, instance_ids: list, instance_index: pd.Series, name: str) -> np.ndarray:
    """Which instances are knowledge-seeking: the `target` column, else all."""
    n = len(instance_ids)
    if "target" not in frame.columns:
        return np.ones(n, dtype=bool)
    target = _flag(frame, "target", name)
    per_instance = target.groupby(instance_index).nunique()
    if (per_instance > 1).any():
        iid = instance_ids[int(per_instance[per_instance > 1].index[0])]
        raise RatingsFileError(f"{name}: instance {iid!r} is marked both as a target and not")
    truth = np.zeros(n, dtype=bool)
    truth[instance_index[target == 1].unique()] = True
    return truth


def _system(frame: pd.DataFrame, label: str, instance_index: pd.Series, n: int, name: str) -> report.SystemSpec:
    """One system's kind and, with a `predicted` column, its detection."""
    rows = frame["system"] == label
    kinds = set(frame.loc[rows, "kind"]) - {""} if "kind" in frame.columns else set()
    if len(kinds) > 1 or (kinds and not kinds <= set(report.KINDS)):
        raise RatingsFileError(f"{name}: system {label!r} has kind {', '.join(sorted(kinds))}; give one of {', '.join(report.KINDS)}")
    predicted = None
    if "predicted" in frame.columns:
        flags = _flag(frame.loc[rows], "predicted", name)
        predicted = np.zeros(n, dtype=bool)  # an instance the system was not rated on: not predicted
        predicted[instance_index[rows][flags == 1].unique()] = True
    return report.SystemSpec(label=label, kind=kinds.pop() if kinds else "entry", predicted=predicted)
