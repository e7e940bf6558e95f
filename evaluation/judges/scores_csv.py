"""An automatic judge's per-instance scores, as a CSV. Pure: pandas; no Django.

Columns, exactly: `system,instance,question,score`, one row per score. `system` is an entry's label
as the campaign shows it (team/entry), `instance` the index of the instance in the test set,
`question` one of the campaign's questions, `score` a number on the judge's own scale (an LLM's
1-5, a metric's 0-1). Everything wrong is named by line, and nothing is imported.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from quorum.lazy_modules import lazy

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy("pandas")


COLUMNS = ("system", "instance", "question", "score")


class JudgeFileError(ValueError):
    """The file cannot be imported; the message names the line and what to fix."""


def line_number(index) -> int:
    return int(index) + 2  # the header is line 1


def _first(mask, frame, column, name, what):
    at = mask.idxmax()
    raise JudgeFileError(f"{name} line {line_number(at)}: {column} {frame[column][at]!r} {what}")


def read_columns(source, name: str, required, optional=(), what: str = "rows") -> pd.DataFrame:
    """The CSV as text columns, stripped, its header checked (`required`, and `optional` ones
    added empty when absent); an unreadable file, a wrong header or no rows is refused."""
    try:
        frame = pd.read_csv(source, dtype=str, keep_default_na=False)
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise JudgeFileError(f"{name}: cannot read the CSV ({exc})") from None
    frame.columns = [str(c).strip() for c in frame.columns]
    unknown = [c for c in frame.columns if c not in (*required, *optional)]
    missing = [c for c in required if c not in frame.columns]
    if unknown or missing:
        parts = ([f"unknown column(s) {', '.join(unknown)}"] if unknown else []) + ([f"missing column(s) {', '.join(missing)}"] if missing else [])
        header = ",".join(required) + (f" (optional: {','.join(optional)})" if optional else "")
        raise JudgeFileError(f"{name}: {'; '.join(parts)}; the header must be {header}")
    if frame.empty:
        raise JudgeFileError(f"{name}: no {what}")
    frame = frame.apply(lambda column: column.str.strip())
    for column in optional:
        if column not in frame.columns:
            frame[column] = ""
    return frame


def read(source, systems, n_instances: int, questions, name: str = "judge.csv") -> pd.DataFrame:
    """The scores as a frame (system, instance, question, score), checked against the campaign's
    `systems` (labels), its test set's size and its `questions`."""
    frame = read_columns(source, name, COLUMNS, what="scores")
    for column in COLUMNS:
        empty = frame[column] == ""
        if empty.any():
            raise JudgeFileError(f"{name} line {line_number(empty.idxmax())}: {column} is empty")
    scores = pd.to_numeric(frame["score"], errors="coerce")
    bad = scores.isna() | ~scores.abs().lt(float("inf"))
    if bad.any():
        _first(bad, frame, "score", name, "is not a number")
    instances = pd.to_numeric(frame["instance"], errors="coerce")
    bad = instances.isna() | (instances % 1 != 0) | (instances < 0) | (instances >= n_instances)
    if bad.any():
        _first(bad, frame, "instance", name, f"is not an instance of the test set (0 to {n_instances - 1})")
    bad = ~frame["system"].isin(list(systems))
    if bad.any():
        strangers = sorted(set(frame["system"][bad]))
        raise JudgeFileError(
            f"{name} line {line_number(bad.idxmax())}: system(s) {', '.join(map(repr, strangers))} are not in the campaign "
            f"(it rates {', '.join(sorted(systems))})"
        )
    bad = ~frame["question"].isin(list(questions))
    if bad.any():
        _first(bad, frame, "question", name, f"is not a question of the campaign ({', '.join(questions)})")
    out = pd.DataFrame({"system": frame["system"], "instance": instances.astype(int), "question": frame["question"], "score": scores.astype(float)})
    repeated = out.duplicated(subset=["system", "instance", "question"])
    if repeated.any():
        at = repeated.idxmax()
        raise JudgeFileError(f"{name} line {line_number(at)}: {out['system'][at]} instance {out['instance'][at]} {out['question'][at]!r} is scored twice")
    return out
