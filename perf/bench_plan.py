"""Benchmark: the planner (`power.fit` then `power.plan`, top 3, raters 1-5, the defaults: 2,000
t-test simulations and 1,000 report-scored campaigns a size) on the 1,000,000 seeded ratings of
`bench_allocation` (10 systems x 16,700 instances x 3 raters of a crowd of 300 x 2 questions),
against a pandas group-by mean of the same ratings measured in the same run (the ratio is the
figure: the machine is shared). Prints one JSON line; `--profile` prints where the time goes.

Run: QUORUM_ENV=test .venv/bin/python -m perf.bench_plan [--profile]
"""
import cProfile
import json
import pstats
import sys
import time

from evaluation.stats import power
from perf.bench_allocation import generate

TARGET_SECONDS = 60.0


def run(report=None, profile=False):
    ratings, _judge = generate()
    start = time.perf_counter()
    ratings.groupby(["system", "instance"])["value"].mean()
    baseline = time.perf_counter() - start
    profiler = cProfile.Profile() if profile else None
    start = time.perf_counter()
    if profiler:
        profiler.enable()
    model = power.fit(ratings)
    plan = power.plan(model, top_k=3)
    if profiler:
        profiler.disable()
        pstats.Stats(profiler, stream=sys.stderr).sort_stats("cumtime").print_stats(20)
    seconds = time.perf_counter() - start
    best = plan.best
    recommended = {"instances": best.instances, "raters_per_instance": best.raters_per_instance, "planned_power": round(best.power, 3),
                   "t_test_instances": best.t_test_instances} if best else {}
    figures = dict(bench="plan", ratings=int(len(ratings)), groupby_mean_seconds=round(baseline, 3), plan_seconds=round(seconds, 3),
                   plan_ratio=round(seconds / baseline, 1), **recommended, ok=seconds < TARGET_SECONDS)
    if report is not None:
        report(figures)
    return figures


if __name__ == "__main__":
    figures = run(profile="--profile" in sys.argv)
    print(json.dumps(figures))
    sys.exit(0 if figures["ok"] else 1)
