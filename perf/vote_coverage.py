"""Coverage of the vote agreement's 95% interval (nominal alpha over the parts voted on, BCa,
resampled by response), by simulation with known truth.

Votes from `tests/quality/vote_simulation.py` (population alpha known exactly; three votes a
response, parts tied by a halo of 0.8), over 10 to 100 responses, one or four parts a response, alpha
0.2, 0.5, 0.8 and 15% or 35% of votes against by chance. For each design, on the same simulated jobs:
the share of intervals covering the truth with no minimum and with the minimum
(`agreement.MIN_INTERVAL_CLUSTERS` responses, `MIN_DISAGREEING_UNITS` with any disagreement), how many
jobs got an interval with it, and how many intervals did not hold their estimate strictly inside. No
database.

Run: PYTHONPATH=. .venv/bin/python -m perf.vote_coverage [REPS] (default 1000: binomial SE 0.0069 at
95%); prints a Markdown table and writes JSON to perf/results/vote_coverage.json.
"""
import itertools
import json
import sys
import time

import numpy as np

from annotation.quality import agreement
from tests.quality.alpha_simulation import tally_coverage
from tests.quality.vote_simulation import VALUES, vote_data_sets

from .common import RESULTS

RESPONSES = (10, 20, 30, 50, 100)
PARTS = (1, 4)
ALPHAS = (0.2, 0.5, 0.8)
AGAINST = (0.15, 0.35)
WORDS = ("response", "responses")


def _cell(found) -> str:
    return "-" if found["coverage"] is None else f"{found['coverage']:.3f}"


def main(reps: int) -> None:
    started = time.time()
    minimum = agreement.MIN_INTERVAL_CLUSTERS, agreement.MIN_DISAGREEING_UNITS
    rows = []
    print("| responses | parts | alpha | against | no minimum | with the minimum | intervals given | estimate not inside |")
    print("|---|---|---|---|---|---|---|---|")
    for number, design in enumerate(itertools.product(RESPONSES, PARTS, ALPHAS, AGAINST)):
        jobs = list(vote_data_sets(np.random.default_rng(1000 + number), design, reps))
        agreement.MIN_INTERVAL_CLUSTERS = agreement.MIN_DISAGREEING_UNITS = 0
        unrestricted = tally_coverage(jobs, design[2], VALUES, "nominal", cluster_words=WORDS)
        agreement.MIN_INTERVAL_CLUSTERS, agreement.MIN_DISAGREEING_UNITS = minimum
        restricted = tally_coverage(jobs, design[2], VALUES, "nominal", cluster_words=WORDS)
        rows.append({"design": design, "no_minimum": unrestricted, "minimum": restricted})
        print(f"| {' | '.join(map(str, design))} | {_cell(unrestricted)} | {_cell(restricted)} | {restricted['intervals']} "
              f"| {unrestricted['outside']} / {restricted['outside']} |", flush=True)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "vote_coverage.json").write_text(json.dumps({"reps": reps, "rows": rows, "seconds": time.time() - started}, indent=1))
    print(f"{reps} jobs a design, {time.time() - started:.0f} s")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
