"""Benchmark: the planner, the adaptive replay and the judge report (PPI++, agreement, the
alternative-annotator test) on 1,000,000 seeded ratings, each against a pandas group-by mean of the
same ratings (the least any of them must do) measured in the same run.

10 systems x 16,700 instances x 3 raters (a pool of 300) x 2 questions = 1,002,000 ratings; the
judge scores every instance of every system (334,000 scores), humans rate all of them.
- replay: `allocation.replay` of one seeded campaign on the pool (boundary included), drawing whole
  instances and, as `simulate_allocation` does by default, one rating at a time (50,100 units);
- planner: `power.fit` on the ratings, then `power.plan` for the top 3 (2,000 t-test simulations a size,
  then 120 campaigns a size scored as the report scores them);
- judge report: `judges.build` (correlations, alt-test, PPI++ per system and pair) with humans on a
  random 20% of the items (200,400 ratings), and on all 1,002,000 (the alt-test over 167,000 items).
Targets: each under 60 s (a campaign page or command, not a request). Prints one JSON line.

Run: QUORUM_ENV=test .venv/bin/python -m perf.bench_allocation
"""
import json
import sys
import time

import numpy as np
import pandas as pd

from evaluation.stats import allocation, judges, power

SYSTEMS, INSTANCES, RATERS, POOL = 10, 16_700, 3, 300
QUESTIONS = ("appropriateness", "accuracy")
TARGET_SECONDS = 60.0


def generate(seed=2021):
    rng = np.random.default_rng(seed)
    difficulty = rng.normal(0, 0.4, INSTANCES)
    leniency = rng.normal(0, 0.3, POOL)
    frames, judge_frames = [], []
    for s in range(SYSTEMS):
        label = f"team{s:02d}/entry0"
        quality = 4.0 + 0.03 * s + difficulty + rng.normal(0, 0.3, INSTANCES)
        raters = (rng.integers(0, POOL, INSTANCES)[:, None] + np.array([0, POOL // 3, 2 * POOL // 3])) % POOL
        for question in QUESTIONS:
            values = np.clip(np.rint(quality[:, None] + leniency[raters] + rng.normal(0, 0.7, raters.shape)), 1, 5).astype(np.int8)
            frames.append(pd.DataFrame({
                "system": label, "instance": np.repeat(np.arange(INSTANCES), RATERS), "question": question,
                "rater": raters.ravel().astype(str), "value": values.ravel(),
            }))
            judge_frames.append(pd.DataFrame({"system": label, "instance": np.arange(INSTANCES), "question": question, "score": quality + 0.2 + rng.normal(0, 0.4, INSTANCES)}))
    return pd.concat(frames, ignore_index=True), pd.concat(judge_frames, ignore_index=True)


def timed(function):
    start = time.perf_counter()
    value = function()
    return value, time.perf_counter() - start


def run(report=None):
    ratings, judge = generate()
    _, baseline = timed(lambda: ratings.groupby(["system", "instance"])["value"].mean())

    item = ratings.groupby(["system", "instance"])["value"]
    labels = sorted(ratings["system"].unique())
    scores = item.mean().unstack("instance").loc[labels].to_numpy()
    counts = item.size().unstack("instance").loc[labels].to_numpy(dtype=float)
    pool = allocation.pool_from_arrays(labels, scores, counts)
    replay, replay_seconds = timed(lambda: allocation.replay(pool, seed=1))
    # Rating units: one rater's answers to both questions on one instance, weighted 1/RATERS.
    position = ratings.groupby(["system", "instance", "question"]).cumcount()
    unit = ratings.assign(unit=ratings["instance"].to_numpy() * RATERS + position.to_numpy()).groupby(["system", "unit"])["value"]
    unit_scores = unit.mean().unstack("unit").loc[labels].to_numpy()
    unit_pool = allocation.pool_from_arrays(
        labels, unit_scores, unit.size().unstack("unit").loc[labels].to_numpy(dtype=float), weights=np.full(unit_scores.shape, 1 / RATERS),
        unit="rating", instances=np.repeat(np.arange(INSTANCES), RATERS),
    )
    unit_replay, unit_replay_seconds = timed(lambda: allocation.replay(unit_pool, seed=1))

    def planner():
        model = power.fit(ratings)
        return power.plan(model, top_k=3)

    plan, planner_seconds = timed(planner)
    # The judge report: humans rate a random 20% of the items, the judge all of them.
    keep = ratings.set_index(["system", "instance"]).index.isin(
        judge.drop_duplicates(["system", "instance"]).sample(frac=0.2, random_state=1).set_index(["system", "instance"]).index
    )
    subset = ratings[keep]
    judge_report, judge_seconds = timed(lambda: judges.build(subset, judge, labels))
    _, judge_full_seconds = timed(lambda: judges.build(ratings, judge, labels))  # every rating: the alt-test's worst case

    figures = {
        "bench": "allocation",
        "ratings": int(len(ratings)),
        "groupby_mean_seconds": round(baseline, 3),
        "replay_seconds": round(replay_seconds, 3),
        "replay_ratio": round(replay_seconds / baseline, 1),
        "replay_ratings_used_fraction": round(replay["ratings_used_fraction"], 3),
        "replay_rating_units_seconds": round(unit_replay_seconds, 3),
        "replay_rating_units_ratio": round(unit_replay_seconds / baseline, 1),
        "replay_rating_units_ratings_used_fraction": round(unit_replay["ratings_used_fraction"], 3),
        "planner_seconds": round(planner_seconds, 3),
        "planner_ratio": round(planner_seconds / baseline, 1),
        "planner_instances": plan.best.instances if plan.best else None,
        "judge_report_seconds": round(judge_seconds, 3),
        "judge_report_ratio": round(judge_seconds / baseline, 1),
        "judge_report_human_ratings": int(len(subset)),
        "judge_report_all_ratings_seconds": round(judge_full_seconds, 3),
        "judge_ppi_width_ratio_first_system": round(judge_report["systems"][0]["width_ratio"], 3),
        "ok": max(replay_seconds, unit_replay_seconds, planner_seconds, judge_seconds, judge_full_seconds) < TARGET_SECONDS,
    }
    if report is not None:
        report(figures)
    return figures


if __name__ == "__main__":
    figures = run()
    print(json.dumps(figures))
    sys.exit(0 if figures["ok"] else 1)
