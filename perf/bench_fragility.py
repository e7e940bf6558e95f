"""Benchmark and figures: the fragility of the DSTC9 Track 1 leaderboard (issue 24), from the real
finalists' ratings and outputs in the shared data folder, and what computing it adds to the report.

Reads `dstc9-track1-human-eval/` of the shared data folder (`tests.shared_data`; labels, each entry's outputs and its
`human_eval.json`), builds the report as the campaign service does (Eq. 1 with each entry's detection
predictions; rater ids are list positions, so rater_ids_known=False) and records, per adjacent pair
and for rank 1, the ratings whose removal reverses the order, and the length-score association.
Speed as a ratio in the same run: `fragility.report_fragility` against the rest of `build_report`
(the report's time minus the fragility's). No database.

Run: .venv/bin/python -m perf fragility
"""
import json
import time

import numpy as np
import pandas as pd

from evaluation.stats import fragility, report, scoring
from tests.shared_data import DSTC9_HUMAN_EVAL, missing, shared_data

from .common import save

DATA = shared_data(DSTC9_HUMAN_EVAL)
QUESTIONS = ("accuracy", "appropriateness")


def _load():
    labels = json.loads((DATA / "data_eval" / "test" / "labels.json").read_text())
    truth = np.array([bool(x["target"]) for x in labels])
    rows, specs = [], []
    for rated in sorted((DATA / "results").glob("*/*.human_eval.json")):
        label = f"{rated.parent.name}/{rated.name.split('.')[0]}"
        outputs_path = rated.with_name(rated.name.replace(".human_eval", ""))
        outputs = json.loads(outputs_path.read_text()) if outputs_path.exists() else None
        kind = "baseline" if rated.parent.name == "baseline" else "entry"
        predicted = None if outputs is None else np.array([bool(o.get("target")) for o in outputs])
        specs.append(report.SystemSpec(label, kind, predicted, responses=None if outputs is None else [o.get("response") for o in outputs]))
        for instance, ratings in enumerate(json.loads(rated.read_text())):
            for question, values in (ratings or {}).items():
                rows += [(label, question, instance, f"pos{k}", v) for k, v in enumerate(values)]
    return pd.DataFrame(rows, columns=["system", "question", "instance", "rater", "value"]), truth, specs


def run() -> dict:
    if not (DATA / "results").is_dir():
        raise ModuleNotFoundError(missing(DATA))
    ratings, truth, specs = _load()
    started = time.perf_counter()
    body = report.build_report(ratings, truth, specs, questions=QUESTIONS, rater_ids_known=False)
    report_seconds = time.perf_counter() - started
    labels = [s.label for s in specs]
    scores, _counts = scoring.instance_score_matrix(ratings, labels, QUESTIONS, len(truth))
    cols = scoring.eq1_columns(scores, truth, [s.predicted for s in specs])
    ranked = [row["system"] for row in body["systems"] if row["kind"] == "entry" and row["rank"] is not None]
    started = time.perf_counter()
    board = fragility.report_fragility(ratings, labels, QUESTIONS, len(truth), cols, ranked)
    fragility_seconds = time.perf_counter() - started
    assert board == body["fragility"], "the bench's fragility is the report's"
    figures = {
        "ratings": int(len(ratings)),
        "top": board["top"],
        "pairs": board["pairs"],
        "length_association": body["length_association"],
        "report_seconds": round(report_seconds, 2),
        "fragility_seconds": round(fragility_seconds, 2),
        "fragility_to_rest_of_report": round(fragility_seconds / max(report_seconds - fragility_seconds, 1e-9), 2),
    }
    save("fragility", figures)
    return figures


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
