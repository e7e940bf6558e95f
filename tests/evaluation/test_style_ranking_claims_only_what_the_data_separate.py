"""The style-controlled ranking on a pairwise job's page numbered its systems 1, 2, 3 by their point
estimates alone, beside a raw ranking that tied the top two and Wald intervals that overlapped almost
entirely: an organizer read "team03 first, team19 second once length is controlled" where the data
separate nothing. It now gives tie groups and rank ranges as the raw ranking does: Wald tests of every
pair's difference (with the thetas' covariance), Holm-adjusted, read by `scoring.holm_rank_groups`.
The page, the Markdown and the API say the same."""
import math
import re

import numpy as np
import pytest
from django.urls import reverse
from scipy import stats

from evaluation.stats import style
from evaluation.stats.scoring import holm

from .test_pairwise_report import computed, pairwise_job, vote


def _comparisons():
    """A and B about even (A a little ahead), both clearly better than C; lengths vary."""
    out = []
    for k in range(60):
        out.append(style.StyledComparison("A", "B", ("a", "b", "a", "tie", "b")[k % 5], {"length": 5 + k % 7}, {"length": 6 + k % 3}))
    for k in range(40):
        for better in ("A", "B"):
            outcome = "a" if k % 8 else "b"
            out.append(style.StyledComparison(better, "C", outcome, {"length": 4 + k % 5}, {"length": 5 + k % 4}))
    return out


def test_overlapping_systems_share_a_tie_group_and_a_range_separated_ones_do_not():
    fitted = style.fit(_comparisons())
    rows = {row["system"]: row for row in fitted["systems"]}
    assert rows["A"]["log_strength"] > rows["B"]["log_strength"]  # an order of point estimates ...
    assert (rows["A"]["rank"], rows["A"]["rank_low"], rows["A"]["rank_high"]) == (1, 1, 2)  # ... that is not a rank
    assert (rows["B"]["rank"], rows["B"]["rank_low"], rows["B"]["rank_high"]) == (1, 1, 2)
    assert (rows["C"]["rank"], rows["C"]["rank_low"], rows["C"]["rank_high"]) == (3, 3, 3)
    assert "Holm-adjusted" in fitted["method"]


def test_the_ranges_read_the_holm_adjusted_wald_tests_of_the_differences():
    """Recomputed apart: each pair's Wald z from the fit's standard errors of the difference, which
    a refit with that pair's difference as a parameter gives (the systems re-based on the lower one)."""
    comparisons = _comparisons()
    fitted = style.fit(comparisons)
    systems, X, Z, _used, _scales, y = style.design(comparisons)
    D = np.hstack([X, Z])
    beta, information = style._newton_logistic(D, y)
    covariance = np.linalg.inv(information)
    S = len(systems)
    theta_ref = np.concatenate([[0.0], beta[: S - 1]])
    cov_ref = np.zeros((S, S))
    cov_ref[1:, 1:] = covariance[: S - 1, : S - 1]
    pairs, ps = [], []
    for i in range(S):
        for j in range(i + 1, S):
            difference = theta_ref[i] - theta_ref[j]
            se = math.sqrt(cov_ref[i, i] + cov_ref[j, j] - 2 * cov_ref[i, j])
            pairs.append((systems[i], systems[j], difference))
            ps.append(2 * stats.norm.sf(abs(difference) / se))
    better = {name: 0 for name in systems}
    worse = {name: 0 for name in systems}
    for (a, b, difference), adjusted in zip(pairs, holm(ps), strict=True):
        if adjusted < 0.05:
            winner, loser = (a, b) if difference > 0 else (b, a)
            better[loser] += 1
            worse[winner] += 1
    for row in fitted["systems"]:
        assert (row["rank_low"], row["rank_high"]) == (1 + better[row["system"]], S - worse[row["system"]])


@pytest.mark.django_db
def test_the_page_the_markdown_and_the_api_show_the_style_controlled_ranges(make_annotator, organizer, client, organizer_api):
    job = pairwise_job(4)
    vote(job, make_annotator("ann")[1], 12)
    report = computed(job)
    styled = {row["system"]: row for row in report.report["controls"]["style"]["rows"]}
    client.force_login(organizer)
    page = client.get(reverse("evaluation:pairwise-ranking", args=[job.pk])).content.decode()
    table = re.sub(r' data-label="[^"]*"', "", page.split('id="style-ranking"')[1].split("</table>")[0])
    assert "Tie-group rank" in table and "Rank range" in table and "[95% CI]" in table
    markdown = client.get(reverse("evaluation:pairwise-ranking-file", args=[job.pk, "md"])).content.decode()
    style_md = markdown.split("## Style-controlled ranking")[1].split("## Position bias")[0]
    assert "| Tie-group rank | Rank range | System | Log-strength [95% CI] |" in style_md
    answer = organizer_api.get(reverse("evaluation-api:pairwise-ranking", args=[job.pk])).json()
    for row in answer["controls"]["style"]["rows"]:
        stored = styled[row["system"]]
        assert (row["rank"], row["rank_low"], row["rank_high"]) == (stored["rank"], stored["rank_low"], stored["rank_high"])
        span = f"{stored['rank_low']}-{stored['rank_high']}"
        assert f"<td>{stored['rank']}</td><td>{span}</td><td>{row['system']}</td>" in table
        assert f"| {stored['rank']} | {span} | {row['system']} |" in style_md
