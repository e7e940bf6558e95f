"""Benchmark of issue 22: the reliability model (Dawid-Skene by EM, annotation/quality/dawid_skene.py, with each worker's
accuracy and spammer-score intervals) over 1,000,000 votes from 5,000 workers, against a bare
majority vote (a pandas groupby) on the same table in the same run. Target: under 60 s for the fit.

Items are voted parts with three votes each; 30% of workers are unreliable (always-yes or random).
The figures also say how many of them the flags found and how many honest workers were flagged.
The table is built in memory: this measures the model, not the database read.
"""
import time

import numpy as np
import pandas as pd

from .common import peak_rss_mb, save

VOTES = 1_000_000
WORKERS = 5_000
TARGET_SECONDS = 60.0
UNRELIABLE_SHARE = 0.3


def build(seed: int = 22) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    tasks = np.repeat(np.arange(VOTES // 3 + 1), 3)[:VOTES]
    workers = rng.integers(0, WORKERS, VOTES)
    truth = rng.random(tasks.max() + 1) < 0.3  # unusable
    kinds = rng.random(WORKERS)
    always_yes = kinds < UNRELIABLE_SHARE / 2
    random_ = (kinds >= UNRELIABLE_SHARE / 2) & (kinds < UNRELIABLE_SHARE)
    accuracy = rng.uniform(0.7, 0.95, WORKERS)
    right = rng.random(VOTES) < accuracy[workers]
    against = np.where(right, truth[tasks], ~truth[tasks])
    against = np.where(always_yes[workers], False, against)
    against = np.where(random_[workers], rng.random(VOTES) < 0.5, against)
    frame = pd.DataFrame({"task": tasks, "worker": workers, "label": np.where(against, "against", "for")})
    return frame, always_yes | random_


def run() -> dict:
    from annotation.quality import reliability

    frame, bad = build()
    t0 = time.perf_counter()
    reliability.majority(frame)
    majority_seconds = time.perf_counter() - t0
    t1 = time.perf_counter()
    fitted = reliability.fit(frame)
    fit_seconds = time.perf_counter() - t1
    flagged = {w for w, r in fitted.workers.items() if reliability.unreliable_flag(r, fitted.labels, "votes")}
    bad_ids = set(np.flatnonzero(bad).tolist())
    figures = {
        "votes": VOTES,
        "workers": int(frame["worker"].nunique()),
        "majority_seconds": round(majority_seconds, 2),
        "model_seconds": round(fit_seconds, 2),
        "ratio_to_majority": round(fit_seconds / majority_seconds, 1) if majority_seconds else None,
        "target_seconds": TARGET_SECONDS,
        "iterations": fitted.iterations,
        "unreliable_workers": len(bad_ids),
        "unreliable_found": len(flagged & bad_ids),
        "honest_flagged": len(flagged - bad_ids),
        "peak_rss_mb": round(peak_rss_mb(), 1),
    }
    save("reliability", figures)
    return figures


if __name__ == "__main__":
    import json

    print(json.dumps(run(), indent=2))
