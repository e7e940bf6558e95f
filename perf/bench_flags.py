"""Benchmark of issue 5: every worker flag over 1,000,000 responses from 5,000 workers.

Half the responses are ratings (two 1-5 criteria each, as in hard-test scoring, three raters per
item), half are rewrites (text with typing telemetry, three workers per item), across four jobs.
Some workers are planted with each behaviour a flag looks for; the figures report how many of
them were found and how many honest workers were flagged. Target: under 15 s for the flags.
The tables are built in memory: this measures the flag computation, not the database read.
"""
import time

import numpy as np
import pandas as pd

from .common import peak_rss_mb, save

RESPONSES = 1_000_000
WORKERS = 5_000
TARGET_SECONDS = 15.0
PLANTED = 50  # workers per planted behaviour


def build(seed=11):
    rng = np.random.default_rng(seed)
    n_rating = RESPONSES // 2
    n_text = RESPONSES - n_rating
    behaviours = {"fast": range(0, PLANTED), "straight": range(PLANTED, 2 * PLANTED), "alternating": range(2 * PLANTED, 3 * PLANTED),
                  "random": range(3 * PLANTED, 4 * PLANTED), "paster": range(4 * PLANTED, 5 * PLANTED)}

    # Ratings: items of three raters, each item with a true difficulty.
    r_items = np.repeat(np.arange(n_rating // 3 + 1), 3)[:n_rating]
    r_workers = rng.integers(0, WORKERS, n_rating)
    truth = rng.integers(1, 6, r_items.max() + 1)
    ratings = {}
    for c, key in enumerate(("hard", "spoken")):
        noise = rng.integers(-1, 2, n_rating) * (rng.random(n_rating) < 0.3)
        values = np.clip(truth[r_items] + noise + c * 0, 1, 5)
        ratings[key] = values
    order = np.arange(n_rating)
    flat = np.isin(r_workers, list(behaviours["straight"]))
    rand = np.isin(r_workers, list(behaviours["random"]))
    for key in ratings:
        ratings[key] = np.where(flat, 3, ratings[key])
        ratings[key] = np.where(rand, rng.integers(1, 6, n_rating), ratings[key])
    alt = np.isin(r_workers, list(behaviours["alternating"]))
    # Alternating raters give 1, 5, 1, 5 ... in their own order of work.
    rank = pd.Series(order).groupby(r_workers).cumcount().to_numpy()
    for key in ratings:
        ratings[key] = np.where(alt, np.where(rank % 2 == 0, 1, 5), ratings[key])
    rating_rows = pd.DataFrame({
        "response": np.tile(np.arange(n_rating), 2),
        "worker": np.tile(r_workers, 2),
        "item": np.tile(r_items, 2),
        "key": np.repeat(["hard", "spoken"], n_rating),
        "value": np.concatenate([ratings["hard"], ratings["spoken"]]),
        "order": np.tile(order, 2),
    })

    # Texts: items of three writers.
    t_ids = np.arange(n_rating, RESPONSES)
    t_items = 10_000_000 + np.repeat(np.arange(n_text // 3 + 1), 3)[:n_text]
    t_workers = rng.integers(0, WORKERS, n_text)
    words = np.array("please find book cheap table centre north hotel train taxi for two people tonight at near a the me".split())
    picks = rng.integers(0, len(words), (n_text, 9))
    texts = [" ".join(row) for row in words[picks]]
    paster = np.isin(t_workers, list(behaviours["paster"]))
    typed = rng.integers(30, 90, n_text)
    pasted = np.where(paster, typed * 2, 0)
    text_rows = pd.DataFrame({"response": t_ids, "worker": t_workers, "item": t_items, "text": texts,
                              "pasted_chars": pasted, "typed_chars": np.where(paster, 3, typed)})

    ids = np.arange(RESPONSES)
    workers = np.concatenate([r_workers, t_workers])
    seconds = rng.gamma(4.0, 15.0, RESPONSES)
    seconds = np.where(np.isin(workers, list(behaviours["fast"])), seconds * 0.05, seconds)
    response_rows = pd.DataFrame({"response": ids, "worker": workers, "job": ids % 4, "item": np.concatenate([r_items, t_items]),
                                  "seconds": seconds})
    return response_rows, rating_rows, text_rows, behaviours


def run() -> dict:
    from annotation.quality.flags import FlagThresholds, compute_flags

    t0 = time.perf_counter()
    responses, ratings, texts, behaviours = build()
    built = time.perf_counter() - t0
    t1 = time.perf_counter()
    report = compute_flags(responses, ratings, texts, FlagThresholds(ordinal_keys=frozenset({"hard", "spoken"})))
    elapsed = time.perf_counter() - t1
    expected = {"fast": "fast", "straight": "straight_lining", "alternating": "alternating", "random": "low_agreement", "paster": "pasted"}
    found = {
        name: sum(1 for w in members if expected[name] in {f.code for f in report.workers.get(w, [])})
        for name, members in behaviours.items()
    }
    planted = {w for members in behaviours.values() for w in members}
    honest_flagged = sum(1 for w, flags in report.workers.items() if flags and w not in planted)
    figures = {
        "responses": int(len(responses)),
        "rating_rows": int(len(ratings)),
        "text_rows": int(len(texts)),
        "workers": int(responses["worker"].nunique()),
        "build_seconds": round(built, 2),
        "flag_seconds": round(elapsed, 2),
        "target_seconds": TARGET_SECONDS,
        "planted_per_behaviour": PLANTED,
        "planted_found": found,
        "honest_workers_flagged": honest_flagged,
        "flagged_responses": len(report.responses),
        "peak_rss_mb": round(peak_rss_mb(), 1),
    }
    save("flags", figures)
    return figures


if __name__ == "__main__":
    import json

    print(json.dumps(run(), indent=2))
