"""Style and position controls for comparisons and ratings. Pure: numpy, scipy; no Django.

**Style-controlled Bradley-Terry** (as Chatbot Arena's "style control" does it): the probability
that a's response is chosen over b's is

    P(a > b) = expit(theta_a - theta_b + gamma . z_ab)

with z_ab the style differences of the two responses: for each feature f (length in words, and the
counts of Markdown headers, list items and bold spans when any response has them) the normalised
difference (f_a - f_b) / (f_a + f_b) (0 when both are 0), divided by its standard deviation over
the comparisons, so gamma is per standard deviation. A tie counts as half a win each side (a
fractional outcome, as the raw ranking does). theta is fitted by maximum likelihood (Newton on the
logistic log-likelihood; the first system's theta is 0, then the thetas are centred to mean 0);
intervals are Wald intervals from the observed information, for the centred thetas and each gamma.
The fit is checked against statsmodels' logistic regression on the same design and by a
simulation in which length alone drives the choices (tests/evaluation/test_style.py).

**Position bias**: among the comparisons that were decided (not a tie), the share in which the
output shown on the left was chosen; its exact (Clopper-Pearson) interval and the two-sided exact
binomial test of 1/2 (`scipy.stats.binomtest`).

**Length and score** (rating campaigns): per system, Spearman's rho between a response's length in
words and the mean rating it got, with its p-value; a positive rho says longer responses of that
system were rated higher (an association, not a cause).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
from scipy import stats
from scipy.special import expit

from evaluation.stats import bradley_terry
from evaluation.stats.scoring import MIN_CORRELATION_POINTS, holm, holm_rank_groups

FEATURES = ("length", "headers", "list_items", "bold")
FEATURE_LABELS = {"length": "length (words)", "headers": "Markdown headers", "list_items": "list items", "bold": "bold spans"}
MAX_NEWTON_STEPS = 100
MIN_DECIDED = 1

_HEADER = re.compile(r"^\s{0,3}#{1,6}\s", re.MULTILINE)
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s", re.MULTILINE)
_BOLD = re.compile(r"\*\*[^*\n]+\*\*|__[^_\n]+__")


def features(text: str) -> dict:
    """A response's style: its length in words and its Markdown formatting counts."""
    text = text or ""
    return {
        "length": len(text.split()),
        "headers": len(_HEADER.findall(text)),
        "list_items": len(_LIST_ITEM.findall(text)),
        "bold": len(_BOLD.findall(text)),
    }


@dataclass(frozen=True)
class StyledComparison:
    system_a: str
    system_b: str
    outcome: str  # "a", "b" or "tie"
    style_a: dict  # features(text of a)
    style_b: dict


def _normalised_difference(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    total = x + y
    return np.where(total > 0, (x - y) / np.where(total > 0, total, 1), 0.0)


def design(comparisons: list[StyledComparison]):
    """(systems, X [n, S-1] system columns with the first system as the reference, Z [n, F] style
    columns, the features used, their standard deviations, y [n] a's share of the win)."""
    if not comparisons:
        raise ValueError("no comparisons: a style-controlled fit needs some")
    systems: dict = {}
    for c in comparisons:
        if c.outcome not in ("a", "b", "tie"):
            raise ValueError(f"unknown outcome {c.outcome!r}; use 'a', 'b' or 'tie'")
        if c.system_a == c.system_b:
            raise ValueError(f"system {c.system_a!r} is compared with itself")
        systems.setdefault(c.system_a, len(systems))
        systems.setdefault(c.system_b, len(systems))
    n, S = len(comparisons), len(systems)
    X = np.zeros((n, S))
    for k, c in enumerate(comparisons):
        X[k, systems[c.system_a]] += 1.0
        X[k, systems[c.system_b]] -= 1.0
    used, columns, scales = [], [], []
    for name in FEATURES:
        a = np.array([float(c.style_a.get(name, 0)) for c in comparisons])
        b = np.array([float(c.style_b.get(name, 0)) for c in comparisons])
        z = _normalised_difference(a, b)
        sd = z.std()
        if name != "length" and not (a.any() or b.any()):
            continue  # no response has this formatting
        if sd <= 0:
            continue  # no variation: nothing to control for
        used.append(name)
        columns.append(z / sd)
        scales.append(float(sd))
    Z = np.column_stack(columns) if columns else np.zeros((n, 0))
    y = np.array([{"a": 1.0, "b": 0.0, "tie": 0.5}[c.outcome] for c in comparisons])
    return list(systems), X[:, 1:], Z, used, scales, y


def _newton_logistic(D: np.ndarray, y: np.ndarray):
    """Maximum likelihood of y ~ expit(D beta) (y may be fractional); (beta, information)."""
    beta = np.zeros(D.shape[1])
    for _ in range(MAX_NEWTON_STEPS):
        p = expit(D @ beta)
        gradient = D.T @ (y - p)
        information = D.T @ (D * (p * (1 - p))[:, None])
        try:
            step = np.linalg.solve(information, gradient)
        except np.linalg.LinAlgError:
            raise ValueError("the comparisons do not identify every system's strength (are they connected?)") from None
        beta = beta + step
        if np.max(np.abs(step)) < 1e-10:
            break
    if np.max(np.abs(beta)) > 30:
        raise ValueError("no finite fit: a system won or lost every comparison (or a style feature separates the choices)")
    p = expit(D @ beta)
    return beta, D.T @ (D * (p * (1 - p))[:, None])


def fit(comparisons: list[StyledComparison], level: float = 0.95) -> dict:
    """The style-controlled strengths and the style coefficients, with Wald intervals (module docstring)."""
    if not 0 < level < 1:
        raise ValueError(f"level must lie strictly between 0 and 1; got {level!r}")
    systems, X, Z, used, scales, y = design(comparisons)
    # The plain fit's checks first: a disconnected comparison graph, or a system that won or lost
    # every comparison, has no finite maximum-likelihood fit with or without covariates.
    try:
        bradley_terry.fit([(c.system_a, c.system_b, c.outcome) for c in comparisons], l2_penalty=0)
    except ValueError as exc:
        raise ValueError(f"no finite style-controlled fit: {str(exc).split('; use l2_penalty')[0]}") from None
    D = np.hstack([X, Z])
    beta, information = _newton_logistic(D, y)
    covariance = np.linalg.inv(information)
    S = len(systems)
    # theta with the first system at 0, then centred: theta_c = C theta_ref, C = I - 1/S.
    embed = np.zeros((S, D.shape[1]))
    embed[1:, : S - 1] = np.eye(S - 1)
    centre = np.eye(S) - 1.0 / S
    transform = centre @ embed
    theta = transform @ beta
    theta_covariance = transform @ covariance @ transform.T
    theta_se = np.sqrt(np.maximum(np.diag(theta_covariance), 0))
    z = stats.norm.ppf(0.5 + level / 2)
    order = sorted(range(S), key=lambda k: -theta[k])
    groups = _wald_rank_groups(theta, theta_covariance, order, level)
    strengths = [
        {"system": systems[k], "log_strength": float(theta[k]), "ci_low": float(theta[k] - z * theta_se[k]),
         "ci_high": float(theta[k] + z * theta_se[k]), "se": float(theta_se[k]),
         "rank": groups.rank[x], "rank_low": groups.rank_low[x], "rank_high": groups.rank_high[x]}
        for x, k in enumerate(order)
    ]
    gamma = beta[S - 1:]
    gamma_se = np.sqrt(np.maximum(np.diag(covariance)[S - 1:], 0))
    coefficients = [
        {"feature": name, "label": FEATURE_LABELS[name], "coefficient": float(g), "ci_low": float(g - z * se), "ci_high": float(g + z * se),
         "se": float(se), "p": float(2 * stats.norm.sf(abs(g / se))) if se > 0 else None, "scale": scale}
        for name, g, se, scale in zip(used, gamma, gamma_se, scales, strict=True)
    ]
    return {
        "systems": strengths,
        "coefficients": coefficients,
        "level": level,
        "n_comparisons": len(comparisons),
        "method": (
            "Bradley-Terry with style covariates: P(a chosen) = expit(theta_a - theta_b + gamma . z), z the normalised "
            "differences (f_a - f_b)/(f_a + f_b) of " + (", ".join(FEATURE_LABELS[n] for n in used) or "no feature") +
            f" per standard deviation; maximum likelihood, ties half a win; {level:.0%} Wald intervals; thetas centred to mean 0; "
            f"tie groups and rank ranges from Wald tests of every pair's difference, Holm-adjusted (family-wise {level:.0%}), "
            "as the raw ranking reads its own"
        ),
    }


def _wald_rank_groups(theta: np.ndarray, theta_covariance: np.ndarray, order: list[int], level: float):
    """Tie groups and rank ranges of the style-controlled strengths, read as the raw ranking reads
    its own (`scoring.holm_rank_groups`): every pair's difference theta_i - theta_j with its Wald
    standard error from the full covariance (the thetas are correlated), a two-sided normal p, Holm
    over the table. A place is only claimed where the table separates the systems; the order of
    the point estimates alone is not a rank."""
    rows = []
    for x, i in enumerate(order):
        for j in order[x + 1:]:
            difference = float(theta[i] - theta[j])
            variance = float(theta_covariance[i, i] + theta_covariance[j, j] - 2 * theta_covariance[i, j])
            p = float(2 * stats.norm.sf(abs(difference) / math.sqrt(variance))) if variance > 0 else 1.0
            rows.append({"a": i, "b": j, "difference": difference, "p": p})
    for row, adjusted in zip(rows, holm([row["p"] for row in rows]) if rows else [], strict=True):
        row["significant_holm"] = bool(adjusted < 1 - level)
    return holm_rank_groups(order, rows)


def beside_raw(controlled: dict, raw_rows: list[dict]) -> list[dict]:
    """The style-controlled rows with the raw ranking's rank and log-strength beside (raw rows as
    `bradley_terry.export_rows` gives them)."""
    raw = {row["system"]: row for row in raw_rows}
    return [
        {**row, "raw_rank": raw.get(row["system"], {}).get("rank"), "raw_rank_low": raw.get(row["system"], {}).get("rank_low"),
         "raw_rank_high": raw.get(row["system"], {}).get("rank_high"), "raw_log_strength": raw.get(row["system"], {}).get("log_strength")}
        for row in controlled["systems"]
    ]


def position_bias(records, level: float = 0.95) -> dict:
    """`records`: (winner, left) pairs, winner "a" | "b" | "tie", left "a" | "b" (module docstring)."""
    decided = [(w, left) for w, left in records if w in ("a", "b") and left in ("a", "b")]
    ties = sum(1 for w, _ in records if w == "tie")
    n = len(decided)
    if n < MIN_DECIDED:
        return {"decided": 0, "ties": ties, "left_chosen": 0, "share": None, "ci_low": None, "ci_high": None, "p": None, "level": level}
    k = sum(1 for w, left in decided if w == left)
    test = stats.binomtest(k, n, 0.5)
    interval = test.proportion_ci(confidence_level=level, method="exact")
    return {"decided": n, "ties": ties, "left_chosen": k, "share": k / n, "ci_low": float(interval.low), "ci_high": float(interval.high),
            "p": float(test.pvalue), "level": level,
            "method": f"share of decided comparisons won by the output shown on the left; {level:.0%} Clopper-Pearson interval; two-sided exact binomial test of 1/2"}


def length_rows(labels, responses, instance_scores) -> list[tuple]:
    """(system, length in words, score) per rated instance with a response: `responses[s]` the
    system's response texts by instance (None: not known), `instance_scores` [S, Q, N] the mean
    rating per question and instance (NaN: not rated), averaged over the questions rated."""
    scores = np.asarray(instance_scores, dtype=float)
    rated = ~np.isnan(scores)
    counts = rated.sum(axis=1)
    means = np.where(counts > 0, np.where(rated, scores, 0.0).sum(axis=1) / np.maximum(counts, 1), np.nan)  # [S, N]
    rows = []
    for s, (label, texts) in enumerate(zip(labels, responses, strict=True)):
        if texts is None:
            continue
        for i, text in enumerate(texts[: means.shape[1]]):
            if isinstance(text, str) and text.strip() and not np.isnan(means[s, i]):
                rows.append((label, features(text)["length"], float(means[s, i])))
    return rows


def length_association(rows) -> list[dict]:
    """`rows`: (system, length in words, mean rating) per rated response; per system Spearman's rho,
    with a p-value only from MIN_CORRELATION_POINTS responses on, the rule of the objective metrics'
    correlations (fewer: `too_few`, p None; with 3 responses scipy's t approximation gives p 0 for a
    rho of 1, where the exact two-sided p is 2/3! = 0.33)."""
    by_system: dict = {}
    for system, length, score in rows:
        if score is None or (isinstance(score, float) and math.isnan(score)):
            continue
        by_system.setdefault(system, ([], []))
        by_system[system][0].append(float(length))
        by_system[system][1].append(float(score))
    out = []
    for system in sorted(by_system):
        lengths, scores = by_system[system]
        n = len(lengths)
        too_few = n < MIN_CORRELATION_POINTS
        if n < 3 or len(set(lengths)) < 2 or len(set(scores)) < 2:
            out.append({"system": system, "n": n, "rho": None, "p": None, "too_few": too_few, "mean_length": float(np.mean(lengths)) if n else None})
            continue
        result = stats.spearmanr(lengths, scores)
        out.append({"system": system, "n": n, "rho": float(result.statistic), "p": None if too_few else float(result.pvalue), "too_few": too_few,
                    "mean_length": float(np.mean(lengths))})
    return out
