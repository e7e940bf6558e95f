"""Benchmark: the full evaluation report on 1,000,000 seeded ratings against krippendorff.alpha alone.

12 systems x 28,000 test instances (52% knowledge-seeking, 95% detected), 2 questions, 3 raters
from a pool of 300 -> about 1.0M ratings. Times `evaluation.stats.report.build_report` (scores, Eq. 1,
two-way (instance x rater) bootstrap intervals with B=1000, rank ranges, tie groups and the
paired-difference pairwise table, Spearman, alpha per question at
two levels with bootstrap CIs, per-rater diagnostics) and `krippendorff.alpha` on a prebuilt
value-counts array of one question. Prints one JSON line. Target: report < 20 s and < 2 GB: the time
of a plain run, the memory (peak traced by tracemalloc, and the process's peak RSS) of a second one.

Run: QUORUM_ENV=test .venv/bin/python -m perf.bench_evaluation
"""
import json
import resource
import sys
import time
import tracemalloc

import krippendorff
import numpy as np
import pandas as pd

from annotation.quality import agreement
from evaluation.stats.report import SystemSpec, build_report

SYSTEMS, INSTANCES, RATERS_PER_ITEM, RATER_POOL = 12, 28_000, 3, 300
QUESTIONS = ("appropriateness", "accuracy")
TARGET_SECONDS, TARGET_BYTES = 20.0, 2 * 1024**3


def generate(seed=2021):
    rng = np.random.default_rng(seed)
    truth = rng.random(INSTANCES) < 0.52
    difficulty = rng.normal(0, 0.4, INSTANCES)
    bias = rng.normal(0, 0.3, RATER_POOL)
    frames, systems = [], []
    for s in range(SYSTEMS):
        predicted = (truth & (rng.random(INSTANCES) < 0.95)) | (~truth & (rng.random(INSTANCES) < 0.05))
        label = f"team{s:02d}/entry0"
        systems.append(SystemSpec(label, "entry", predicted, {"bleu": float(rng.random()), "r@1": float(rng.random())}))
        rated = np.flatnonzero(truth & predicted)
        for question in QUESTIONS:
            base = rng.integers(0, RATER_POOL, len(rated))
            offsets = np.stack([np.zeros(len(rated), int), rng.integers(1, RATER_POOL // 2, len(rated)), rng.integers(RATER_POOL // 2, RATER_POOL, len(rated))], 1)
            raters = (base[:, None] + offsets) % RATER_POOL  # three distinct raters per instance
            noise = rng.normal(0, 0.7, raters.shape)
            values = np.clip(np.rint(4.2 + 0.02 * s + difficulty[rated][:, None] + bias[raters] + noise), 1, 5).astype(np.int8)
            frames.append(
                pd.DataFrame(
                    {
                        "system": label,
                        "question": question,
                        "instance": np.repeat(rated, RATERS_PER_ITEM),
                        "rater": raters.ravel().astype(str),
                        "value": values.ravel(),
                    }
                )
            )
    return pd.concat(frames, ignore_index=True), truth, systems


def run(report=None):
    ratings, truth, systems = generate()
    one_question = ratings[ratings["question"] == QUESTIONS[0]]
    item = one_question["system"].astype("category").cat.codes.to_numpy(np.int64) * INSTANCES + one_question["instance"].to_numpy()
    counts, domain, _ = agreement.value_counts_from_long(
        pd.DataFrame({"item": item, "rater": one_question["rater"].to_numpy(), "value": one_question["value"].to_numpy()}), "ordinal", agreement.LIKERT_1_5
    )

    start = time.perf_counter()
    krippendorff.alpha(value_counts=counts, value_domain=domain, level_of_measurement="ordinal")
    alpha_seconds = time.perf_counter() - start

    # Time and memory in separate runs: tracemalloc hooks every allocation and made the timed run
    # several times slower than the report itself (72 s against 10 s on the shared machine).
    start = time.perf_counter()
    result = build_report(ratings, truth, systems, questions=QUESTIONS, bootstrap=1000, seed=1)
    report_seconds = time.perf_counter() - start
    tracemalloc.start()
    build_report(ratings, truth, systems, questions=QUESTIONS, bootstrap=1000, seed=1)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux reports KiB

    figures = {
        "bench": "evaluation",
        "ratings": int(len(ratings)),
        "systems": SYSTEMS,
        "instances": INSTANCES,
        "report_seconds": round(report_seconds, 3),
        "krippendorff_alpha_seconds": round(alpha_seconds, 3),
        "ratio": round(report_seconds / alpha_seconds, 1),
        "report_peak_traced_mb": round(peak / 2**20, 1),
        "process_maxrss_mb": round(maxrss / 2**20, 1),
        "alpha_ordinal_" + QUESTIONS[0]: result["agreement"][QUESTIONS[0]]["levels"]["ordinal"]["alpha"],
        "ok": report_seconds < TARGET_SECONDS and max(peak, maxrss) < TARGET_BYTES,
    }
    if report is not None:
        report(figures)
    return figures


if __name__ == "__main__":
    figures = run()
    print(json.dumps(figures))
    sys.exit(0 if figures["ok"] else 1)
