"""The planner's promise kept by the report (issue 20, item 2): campaigns of the size `power`
plans, scored by the report's own comparison (`scoring`: Eq. 1 columns, the two-way paired
bootstrap with the rater term scaled to what raters repeating adds, the pairwise table), separate
the planned pair as often as planned. Seeded simulations with known truth: fresh crowd raters, one
and three per instance."""
import numpy as np
import pandas as pd
import pytest

from evaluation.stats import power, scoring

COMPONENTS = power.Components(instance=0.3, system_instance=0.15, rater=0.2, residual=0.6)
DELTA, PLANNED, CAMPAIGNS = 0.3, 0.8, 200


def _campaign(rng, n, m, start):
    """Two systems DELTA apart on n instances, m fresh raters per rating (rater ids never repeat)."""
    c = COMPONENTS
    instance = rng.normal(0, np.sqrt(c.instance), n)
    frames = []
    for s, mean in enumerate((3.5 + DELTA, 3.5)):
        item = mean + instance + rng.normal(0, np.sqrt(c.system_instance), n)
        values = item[:, None] + rng.normal(0, np.sqrt(c.rater), (n, m)) + rng.normal(0, np.sqrt(c.residual), (n, m))
        raters = start + s * n * m + np.arange(n * m)
        frames.append(pd.DataFrame({
            "system": f"s{s}", "question": "q", "instance": np.repeat(np.arange(n), m), "rater": raters.astype(str), "value": values.ravel(),
        }))
    return pd.concat(frames, ignore_index=True)


def _report_separates(ratings, n, seed):
    """Whether the report's pairwise table calls s0 significantly better than s1 (the true order)."""
    systems, questions = ["s0", "s1"], ["q"]
    scores, counts = scoring.instance_score_matrix(ratings, systems, questions, n)
    cols = scoring.eq1_columns(scores, np.ones(n, dtype=bool), [None, None])
    point = scoring.system_scores(cols)
    _, final = scoring.paired_uncertainty(ratings, cols, counts, point, systems, questions, seed=seed)
    row = scoring.pairwise_differences(point["final"], final, systems)[0]
    return row["significant"] and row["difference"] > 0


@pytest.mark.parametrize("m", [1, 3])
def test_a_campaign_of_the_planned_size_reaches_the_planned_power(m):
    n, planned = power.instances_needed(DELTA, COMPONENTS, m, power=PLANNED)
    assert n is not None and planned >= PLANNED
    rng = np.random.default_rng(100 + m)
    achieved = np.mean([_report_separates(_campaign(rng, n, m, k * 10**7), n, seed=k) for k in range(CAMPAIGNS)])
    # Measured: 1 rater, n = 171 planned at 0.81, achieved 0.82; 3 raters, n = 77 planned at 0.82, achieved 0.86.
    assert abs(achieved - planned) <= 0.05, (n, planned, achieved)
