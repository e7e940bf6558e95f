"""Coverage of Krippendorff's alpha's 95% bootstrap interval, by simulation with known truth.

Ratings from `tests/quality/alpha_simulation.py` (population alpha known exactly), over designs of
5 to 200 units, 2, 3 or 5 raters, nominal, ordinal and interval levels and alpha 0.2, 0.5, 0.8;
for each and per interval method: the share of intervals covering the truth, how many data sets got
an interval, and how many of those had their estimate not strictly inside it. No database.

Run: PYTHONPATH=. .venv/bin/python -m perf.alpha_coverage [REPS] [--no-minimum] (default 500:
binomial SE 0.0097 at 95%); prints a Markdown table and writes JSON to perf/results/alpha_coverage.json.
`--no-minimum` gives every data set its interval, as before the minimum (the "before" columns).
"""
import itertools
import json
import sys
import time

import numpy as np

from annotation.quality import agreement
from tests.quality.alpha_simulation import coverage

from .common import RESULTS

UNITS = (5, 10, 20, 50, 200)
RATERS = (2, 3, 5)
LEVELS = ("nominal", "ordinal", "interval")
ALPHAS = (0.2, 0.5, 0.8)


def _cell(value) -> str:
    return "-" if value is None else f"{value:.3f}"


def main(reps: int) -> None:
    started = time.time()
    rows = []
    for number, design in enumerate(itertools.product(UNITS, RATERS, LEVELS, ALPHAS)):
        # The same data sets for every method: the same generator seed.
        found = {m: coverage(np.random.default_rng(number), design, reps, method=m) for m in agreement.INTERVAL_METHODS}
        rows.append({"design": design, **found})
        units, raters, level, true_alpha = design
        cells = " | ".join(f"{_cell(f['coverage'])} ({f['intervals']}, {f['outside']})" for f in found.values())
        print(f"| {units} | {raters} | {level} | {true_alpha} | {cells} |", flush=True)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "alpha_coverage.json").write_text(json.dumps({"reps": reps, "rows": rows, "seconds": time.time() - started}, indent=1))
    print(f"{reps} data sets a design, {time.time() - started:.0f} s")


if __name__ == "__main__":
    arguments = [a for a in sys.argv[1:] if a != "--no-minimum"]
    if "--no-minimum" in sys.argv:
        agreement.MIN_INTERVAL_UNITS = agreement.MIN_DISAGREEING_UNITS = 0
    main(int(arguments[0]) if arguments else 500)
