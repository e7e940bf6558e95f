"""Interactive results per system (PROTOCOLS.md section 3), with intervals and tie groups. Pure: no Django.

Each dialog is {system, goal_id, answers (the chat response's cleaned answers), goal, database}.
Success as judged by the worker, success with grounding (the worker said success and the offered
entity is a database record satisfying the goal: `goals.grounded_success`), and their average as
the final score that ranks the systems (DSTC9 Track 2); the two ratings' means; failed turns.

Uncertainty follows the evaluation pages (`scoring`): one set of B paired resamples shared by all
systems, here over user goals (every system gets the same goals, so resampling goals pairs the
systems as resampling test instances does there; scaled by sqrt(G/(G-1)), the bootstrap's bias over
G goals, which are tens here rather than thousands). Each statistic's interval is a Wilson score
interval on its scale (0-1, or 1-5 rescaled) with the effective number of dialogs the bootstrap
variance implies and t_df for z (`_intervals`: a success rate over tens of goals is a proportion,
and the percentile interval covered 92-93% at nominal 95%); pairwise differences of final scores
on the same resamples with bootstrap p and Holm (percentile, widened by t_df/z as `scoring` does); tie groups and rank ranges from the Holm-adjusted table
(`scoring.holm_rank_groups`): the range is what a system's own rows of the pairwise table allow,
so it starts after its group's rank when a system of its group is significantly better. Workers are resampled
too when the dialogs name them (`worker`), as raters are on the evaluation pages: a worker judges
the success of many dialogs, of every system, so a lenient or strict worker moves them together;
their resamples (an own stream, scaled by sqrt(W/(W-1)) and by the share of their spread that
comes from workers repeating, `_repeated_share`, so a crowd with a new worker per dialog is not
counted twice) add to the goal resamples; the intervals' degrees of freedom are those of two-way
clustering, the fewer of goals and workers less one. A pairwise difference takes its own worker
share (`_pair_share`, as the ratings leaderboard's `scoring._pair_repeated_share`): a worker who
judges both systems pulls both alike and the pull cancels in the difference; its workers are those
of either system.
"""
from __future__ import annotations

import csv
import io
import warnings
from collections import defaultdict
from datetime import datetime

import numpy as np
from scipy import stats

from evaluation.interactive.goals import grounded_success
from evaluation.stats import fragility, scoring
from evaluation.stats.report_format import RANK_COLUMNS_WORDS, RANK_RANGE, TIE_GROUP
from quorum import numbers
from quorum.csv_safety import formatted_cell

STATISTICS = ("success", "grounded_success", "final", "understanding", "appropriateness")
#: What each statistic can be: an interval is clipped to it (t-widening can reach past a bound).
BOUNDS = {"success": (0, 1), "grounded_success": (0, 1), "final": (0, 1), "understanding": (1, 5), "appropriateness": (1, 5)}
LABELS = {
    "success": "Success", "grounded_success": "Success with grounding", "final": "Final",
    "understanding": "Understanding", "appropriateness": "Appropriateness",
}


def _dialog_values(d) -> dict:
    answers = d["answers"]
    ok = answers.get("outcome") == "success"
    offers = [t["offered"] for t in answers.get("transcript") or [] if t.get("offered")]
    success = 1.0 if ok else 0.0
    grounded = 1.0 if ok and grounded_success(d["goal"], offers, d.get("database") or {}) else 0.0
    values = {"success": success, "grounded_success": grounded, "final": (success + grounded) / 2}
    for name in ("understanding", "appropriateness"):
        values[name] = float(answers[name]) if isinstance(answers.get(name), int) else np.nan
    return values


def _value_rows(dialogs) -> list:
    """Each dialog's statistics in STATISTICS order (NaN where it has none), computed once."""
    return [np.array([values[name] for name in STATISTICS]) for values in map(_dialog_values, dialogs)]


def _sums(dialogs, rows, systems, clusters, cluster_of):
    """[S, C, K] sums of each statistic and [S, C, K] counts of dialogs that have it, per cluster
    (`cluster_of(d)`: its goal, or its worker); `rows` are the dialogs' `_value_rows`."""
    s_index = {s: k for k, s in enumerate(systems)}
    c_index = {c: k for k, c in enumerate(clusters)}
    total = np.zeros((len(systems), len(clusters), len(STATISTICS)))
    count = np.zeros_like(total)
    pairs = list(zip(dialogs, rows, strict=False))
    if not pairs:
        return total, count
    s_of = np.array([s_index[d["system"]] for d, _ in pairs])
    c_of = np.array([c_index[cluster_of(d)] for d, _ in pairs])
    values = np.array([row for _, row in pairs], dtype=float).reshape(len(pairs), len(STATISTICS))
    have = ~np.isnan(values)
    # Unbuffered: each cell adds its dialogs in their order, as one at a time did.
    np.add.at(total, (s_of, c_of), np.where(have, values, 0.0))
    np.add.at(count, (s_of, c_of), have.astype(float))
    return total, count


def _resampled(total, count, replicates, rng):
    """[B, S, K] the statistics over `replicates` multinomial resamples of the clusters."""
    n = total.shape[1]
    weights = rng.multinomial(n, np.full(n, 1 / n), size=replicates) if n else np.zeros((replicates, 0))
    S, _, K = total.shape

    def resampled(sums):  # [S, G, K] -> [B, S, K], one matrix product
        return (weights @ sums.transpose(1, 0, 2).reshape(n, S * K)).reshape(replicates, S, K)

    return _ratio(resampled(total), resampled(count))


def _worker_deviations(dialogs, rows, systems, point, replicates, seed):
    """([B, S, K] worker-resample deviations, [S] workers per system the resamples drew from, the
    pairs' part); zeros unless every dialog names its worker and there are at least two
    (`workers_resampled`). The workers a row reports are `_workers_named`, whether or not they were
    resampled. The pairs' part ([B, S] final deviations before a system's own share, [1, S, S] each
    pair's share, [S, S] the workers of either system; None without workers) is what a difference
    takes its worker part from (`_pair_share`)."""
    workers = sorted({d.get("worker") for d in dialogs}, key=str)
    if len(workers) < 2 or None in workers:
        return np.zeros((replicates, *point.shape)), np.zeros(len(systems), int), None
    total, count = _sums(dialogs, rows, systems, workers, lambda d: d["worker"])
    rng = np.random.default_rng(np.random.SeedSequence([seed, 1]).generate_state(1)[0])
    share, per_dialog = _repeated_share(total, count, dialogs, rows, systems, point, len(workers))
    raw = scoring.small_pool_factor(len(workers)) * (_resampled(total, count, replicates, rng) - point[None])
    f = STATISTICS.index("final")
    judged = (count[:, :, f] > 0).astype(int)  # [S, W]
    pairs = (raw[:, :, f], _pair_share(total[:, :, f], count[:, :, f], per_dialog[:, f], len(workers)),
             judged.sum(1)[:, None] + judged.sum(1)[None, :] - judged @ judged.T)
    return share[None] * raw, judged.sum(1), pairs


def _pair_share(total, count, per_dialog, n_workers: int) -> np.ndarray:
    """[1, S, S]: `_repeated_share` of each pair's difference of final scores, as
    `scoring._pair_repeated_share` has it for raters (`total`, `count` [S, W] per worker,
    `per_dialog` [S]). A worker who judges both systems pulls both rates the same way and the pull
    cancels in the difference, so a difference's worker part is what is left of the pulls'
    difference beyond the dialogs' own noise; with each system's own share (near 1 for a pool of 5)
    the differences covered 99.1% and a null pair was called different 0.7% of the time at 5%."""
    shrink = (n_workers - 1) / n_workers
    level = _ratio(total.sum(1), count.sum(1))[:, None]  # a rate's level is the rate itself (g = 1)
    return scoring._pair_repeated_share(total[:, None, :], count[:, None, :], level, shrink * per_dialog[:, None], level)


def _repeated_share(total, count, dialogs, rows, systems, point, n_workers: int) -> tuple[np.ndarray, np.ndarray]:
    """([S, K], and [S, K] the per-dialog sum V_1 it is computed from): the share of the worker resamples' spread that comes from a worker's dialogs moving
    together, as `scoring._repeated_share` has it for raters. The goal resamples already count each
    dialog's worker as its own noise; what they miss is the cross terms of one worker's dialogs. So
    the worker deviations (already scaled by W / (W - 1), the bias of a spread about an estimated
    level) are scaled by sqrt(1 - V_1 (W - 1) / (W V_W)), with V_W = sum_w (T_w - L C_w)^2 over
    workers and V_1 the same with every dialog its own worker, so their variance is the moment
    estimate of the cross terms, W V_W / (W - 1) - V_1: 0 when each dialog has a new worker
    (counting it twice made the intervals cover 98-99%), near 1 for a few workers judging everything."""
    per_worker = ((total - point[:, None, :] * count) ** 2).sum(axis=1)  # [S, K]
    s_index = {s: k for k, s in enumerate(systems)}
    of_system = np.array([s_index[d["system"]] for d in dialogs])
    values = np.array(rows).reshape(len(rows), len(STATISTICS))
    squares = np.where(np.isnan(values), 0.0, (np.nan_to_num(values) - np.nan_to_num(point)[of_system]) ** 2)  # [D, K]
    per_dialog = np.zeros_like(point)
    np.add.at(per_dialog, of_system, squares)
    with np.errstate(invalid="ignore", divide="ignore"):
        shrink = (n_workers - 1) / n_workers
        ratio = np.where(per_worker > 0, 1 - shrink * per_dialog / np.where(per_worker > 0, per_worker, 1), 0.0)
    return np.sqrt(np.clip(np.nan_to_num(ratio), 0.0, 1.0)), per_dialog


def workers_resampled(dialogs) -> bool:
    """Whether the intervals resample workers: every dialog names its worker, and there are at least two."""
    workers = {d.get("worker") for d in dialogs}
    return None not in workers and len(workers) >= 2


def _workers_named(dialogs, system) -> int:
    """The distinct workers named by a system's dialogs (what a job's page counts as its workers)."""
    return len({d["worker"] for d in dialogs if d["system"] == system and d.get("worker") is not None})


def _failed_calls(d) -> int:
    """The dialog's calls to its system that failed: `failed_calls` as the conversation's record
    gives it (Quorum's own "not available" replies after a pause are no call); without a record,
    its transcript's failed turns."""
    if d.get("failed_calls") is not None:
        return int(d["failed_calls"])
    return sum(1 for t in d["answers"].get("transcript") or [] if t.get("failed"))


def _goal_of(d) -> str:
    return str(d.get("goal_id") or d.get("goal_text") or "")


def _ratio(total, count):
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.where(count > 0, count, 1), np.nan)


def system_results(dialogs: list[dict], *, bootstrap=scoring.DEFAULT_BOOTSTRAP, seed=scoring.DEFAULT_SEED, ci=0.95,
                   fragility_mark=fragility.DEFAULT_MARK_SHARE) -> dict:
    """{"systems": rows best first, "pairwise": rows, "n_goals", "method", "fragility"}. A row: system, dialogs,
    each statistic with `_ci_low`/`_ci_high`, rank (tie group), rank_low/rank_high, failed_calls (calls
    to the system that failed in the counted dialogs, `_failed_calls`; "Failed calls" on the page).
    "fragility": the dialogs whose removal reverses each adjacent order and rank 1 (exact: the final
    score is a mean over dialogs; `fragility.mean_leaderboard`)."""
    if bootstrap < 1:
        raise ValueError("bootstrap must be at least 1 resample")
    method = {
        "bootstrap": int(bootstrap), "seed": int(seed), "ci": ci,
        "ci_method": (
            f"{ci:.0%} Wilson score interval on the scale, its effective number of dialogs from the variance of the bootstrap over user goals "
            "and, when every dialog names its worker, over workers (the same resamples for every system; the two added), with t_df "
            "in place of z (df = the fewer of goals and workers, less 1)"
        ),
        "rank": scoring.tie_group_rule(ci),
        "rank_range": scoring.rank_range_rule(ci),
        "dialogs": (
            "Dialogs: the submitted dialogs that count, each with its worker's verdict (a dialog ended because the system was "
            "paused counts, as a failure); a dialog the offensive-word filter flagged counts once kept, and one a worker left "
            "counts nowhere but in the run's failed calls"
        ),
        "failed_calls": (
            "Failed calls: in the dialogs that count, the calls to the system that failed (timed out, an error, a reply that broke "
            "the contract); Quorum's own replies while the system was paused or busy are not counted, since the system was not "
            "called. Calls that failed in the job's dialogs that do not count (left by their worker, with Skip or by letting "
            "the claim expire; unfinished; not kept at review) are not in this column: the run's state names them per system"
        ),
        "pairwise": (
            f"difference of final scores on the same goal resamples, {ci:.0%} interval, the pair's own two-sided bootstrap p (unadjusted) "
            f"and its Holm-adjusted p over the table (significant: Holm p < {1 - ci:.2g}, the decision the tie groups read); a final score "
            f"lies in [{BOUNDS['final'][0]}, {BOUNDS['final'][1]}], so an interval is clipped to the difference two such scores allow "
            f"(marked 'clipped'), and a pair where either system was tried on fewer than {scoring.MIN_PAIR_INSTANCES} goals gets that whole "
            "range and no p (too few to compare)"
        ),
    }
    if dialogs and not workers_resampled(dialogs):
        method["ci_method"] += (
            "; workers were not resampled here: that needs every dialog to name its worker and at least 2 workers, so these "
            "intervals count the goals alone"
        )
    method["workers_resampled"] = bool(dialogs) and workers_resampled(dialogs)
    if not dialogs:
        return {"systems": [], "pairwise": [], "n_goals": 0, "method": method, "fragility": None}
    systems = sorted({d["system"] for d in dialogs})
    goals = sorted({_goal_of(d) for d in dialogs})
    values = _value_rows(dialogs)
    total, count = _sums(dialogs, values, systems, goals, _goal_of)  # [S, G, K]
    point = _ratio(total.sum(1), count.sum(1))  # [S, K]
    # sqrt(G / (G - 1)): the bootstrap's small-sample bias of a variance over G goals (tens, here).
    deviation = scoring.small_pool_factor(len(goals)) * (_resampled(total, count, bootstrap, np.random.default_rng(seed)) - point[None])  # [B, S, K]
    n_goals = (count[:, :, STATISTICS.index("final")] > 0).sum(1)  # goals each system was tried on
    worker_dev, n_workers, pairs = _worker_deviations(dialogs, values, systems, point, bootstrap, seed)
    low, high = _intervals(point, deviation, worker_dev, n_goals, n_workers, ci)

    f = STATISTICS.index("final")
    final = point[:, f]
    order = sorted(range(len(systems)), key=lambda k: (-final[k], systems[k]))
    unc = scoring.Uncertainty(deviation[:, order, f], worker_dev[:, order, f], n_goals[order], n_workers[order])
    if pairs is not None:  # a difference takes its own worker share (`_pair_share`), not each system's
        raw, pair_share, pair_workers = pairs
        unc = scoring.Uncertainty(unc.instance, unc.rater, unc.n_instances, unc.n_raters, raw[:, order, None],
                                  pair_share[:, order][:, :, order], pair_workers[order][:, order])
    labels = [systems[k] for k in order]
    # Each final score lies in BOUNDS["final"], so a difference lies within [low - high, high - low]: the
    # interval is clipped there, and a pair tried on fewer than MIN_PAIR_INSTANCES shared goals gets that
    # whole range and no p (`too_few`), as on the ratings leaderboard.
    possible = (np.full(len(order), BOUNDS["final"][0], float), np.full(len(order), BOUNDS["final"][1], float))
    pairwise = scoring.pairwise_differences(final[order], unc, labels, ci, bounds=possible)
    groups = scoring.holm_rank_groups(labels, pairwise)
    failed: defaultdict[str, int] = defaultdict(int)
    n_dialogs: defaultdict[str, int] = defaultdict(int)
    for d in dialogs:
        n_dialogs[d["system"]] += 1
        failed[d["system"]] += _failed_calls(d)

    rows = []
    for j, k in enumerate(order):
        row = {"rank": groups.rank[j], "rank_low": groups.rank_low[j], "rank_high": groups.rank_high[j], "system": systems[k],
               "dialogs": n_dialogs[systems[k]], "goals": int(n_goals[k]), "workers": _workers_named(dialogs, systems[k])}
        for q, name in enumerate(STATISTICS):
            row[name] = _num(point[k, q])
            row[f"{name}_ci_low"] = _num(low[k, q])
            row[f"{name}_ci_high"] = _num(high[k, q])
        row["failed_calls"] = failed[systems[k]]
        rows.append(row)
    finals: defaultdict[str, list] = defaultdict(list)
    for d, row in zip(dialogs, values, strict=True):
        finals[d["system"]].append(row[f])
    return {
        "systems": rows,
        "pairwise": pairwise,
        "n_goals": len(goals),
        "method": method,
        "fragility": fragility.mean_leaderboard(finals, labels, fragility_mark),
    }


def _intervals(point, deviation, worker_dev, n_goals, n_workers, ci):
    """([S, K] low, [S, K] high): each statistic's interval on its scale (BOUNDS).

    A Wilson score interval with an effective sample size (Kott & Carr 1997; Korn & Graubard 1998
    for the degrees of freedom), on every statistic rescaled to 0-1: the bootstrap gives the
    variance V of the rescaled statistic p (goals and workers, as `scoring.interval` adds them),
    n_eff = p (1 - p) / V its effective size (the design effect of goals and repeating workers),
    and the score interval of a proportion p over n_eff trials with t_df in place of z (df by
    Welch-Satterthwaite from the goal and worker parts, `scoring.widening`). Why not the
    percentile interval: over tens of goals a success rate's bootstrap distribution is lumpy and
    symmetric about p, and it covered 92-93% at nominal 95%; the score interval is asymmetric
    toward the middle as a proportion's is, and never leaves the scale."""
    floor, ceiling = np.array([BOUNDS[n][0] for n in STATISTICS]), np.array([BOUNDS[n][1] for n in STATISTICS])
    span = ceiling - floor
    # Two-way clustered (goals, workers): df = min(G, W) - 1 (Cameron, Gelbach & Miller 2011), not
    # Welch-Satterthwaite, which takes a few workers who happen to agree for a known small part.
    goals, workers = n_goals[:, None].astype(float), n_workers[:, None].astype(float)
    df = np.maximum(np.where(workers > 1, np.minimum(goals, workers), goals) - 1, 1)
    quantile = np.broadcast_to(stats.t.ppf(0.5 + ci / 2, df), point.shape)
    with warnings.catch_warnings():  # a statistic no dialog has: NaN throughout, quietly
        warnings.simplefilter("ignore", RuntimeWarning)
        variance = np.nanvar(deviation + worker_dev, axis=0) / span**2
    p = (point - floor) / span
    with np.errstate(invalid="ignore", divide="ignore"):
        # No spread (every dialog the same, e.g. all succeeded): the goals tried are the trials. The
        # goal is what the bootstrap resamples and what df counts; several dialogs on one goal are
        # not independent trials (one goal is easy or hard for every dialog on it), so counting
        # dialogs would narrow the interval on evidence the design does not have.
        n_eff = np.where(variance > 0, p * (1 - p) / np.where(variance > 0, variance, 1), n_goals[:, None])
        n_eff = np.where((n_eff > 0) & np.isfinite(n_eff), n_eff, np.maximum(n_goals[:, None], 1))
        q2 = quantile**2 / n_eff
        centre = (p + q2 / 2) / (1 + q2)
        half = quantile * np.sqrt(p * (1 - p) / n_eff + q2 / (4 * n_eff)) / (1 + q2)
    low = np.clip(centre - half, 0.0, 1.0) * span + floor
    high = np.clip(centre + half, 0.0, 1.0) * span + floor
    return low, high


def _num(x):
    """The full value (None for none): rounded only where it is written for people (`quorum.numbers`),
    so the page, the Markdown and the CSV agree as on the ratings leaderboard."""
    return None if x is None or (isinstance(x, float) and np.isnan(x)) or (isinstance(x, np.floating) and np.isnan(x)) else float(x)


def _cell(value):
    return formatted_cell(value)  # a float as its full value; a system's name may start like a formula


# ---------------------------------------------------------------------------------------------
# What people read: one writer per format over the board (`selectors.interactive_board`: the
# result of `system_results` with the run's "status", "screening" counts and "unscored" systems).
# The page shows the same sentences and cells.


def status_lines(board: dict) -> list[str]:
    """The run's state, first on the page and in every download: dialogs collected of those planned,
    each paused system with its reason, and whether the job still collects."""
    status = board.get("status")
    if not status:
        return []
    systems = status["systems"]
    done, planned = sum(r["done"] for r in systems), sum(r["planned"] for r in systems)
    provisional = status["job_live"] or done < planned or any(r["paused_at"] for r in systems)
    lines = [f"{done} of {planned} dialogs collected; the job is {status['job_state'].lower()}"
             + (": these numbers are provisional." if provisional else ".")]
    for r in systems:
        if r["paused_at"]:
            lines.append(f"{r['system']} paused since {_when(r['paused_at'])} ({r['paused_reason'] or 'no reason recorded'}): "
                         f"{r['done']} of {r['planned']} of its dialogs collected.")
        elif r["done"] < r["planned"]:
            lines.append(f"{r['system']}: {r['done']} of {r['planned']} dialogs collected.")
    lines += [f"{_uncounted_failures(r)}; not in its Failed calls." for r in systems if r.get("failed_calls_not_counted")]
    return lines


def _uncounted_failures(row: dict) -> str:
    """The calls a system failed in dialogs that do not count ("weak: 2 failed calls in 1 dialog that ..."),
    which the leaderboard's Failed calls leave out."""
    calls, dialogs = row["failed_calls_not_counted"], row["dialogs_not_counted"]
    return (f"{row['system']}: {calls} failed call{'' if calls == 1 else 's'} in {dialogs} dialog{'' if dialogs == 1 else 's'} that "
            f"{'does' if dialogs == 1 else 'do'} not count (left by its worker, unfinished, or not kept at review)")


def _when(moment: str) -> str:
    """An ISO time (as `run_status` gives it) to the minute: 2025-06-01 05:44 UTC."""
    when = datetime.fromisoformat(moment)
    return when.strftime("%Y-%m-%d %H:%M") + (f" {when.tzname()}" if when.tzname() else "")


def screening_note(board: dict) -> str:
    """What the offensive-word filter leaves out ("" when nothing is)."""
    counts = board.get("screening") or {}
    dropped, pending = counts.get("dropped", 0), counts.get("pending", 0)
    parts = []
    if dropped:
        parts.append(f"{dropped} dropped dialog{'' if dropped == 1 else 's'} {'is' if dropped == 1 else 'are'} left out of this leaderboard and its downloads")
    if pending:
        parts.append(f"{pending} flagged dialog{'' if pending == 1 else 's'} {'waits' if pending == 1 else 'wait'} for review and "
                     f"{'does' if pending == 1 else 'do'} not count until kept")
    return f"Offensive-word filter: {'; '.join(parts)}." if parts else ""


def _left_out(row: dict) -> str:
    """An unscored system's dialogs that do not count ("1 dropped, 2 waiting for review"), "" when none was collected."""
    return ", ".join(f"{row[k]} {label}" for k, label in (("dropped", "dropped"), ("pending", "waiting for review")) if row.get(k))


def unscored_reason(row: dict) -> str:
    """Why a system of the job has no score: its dialogs were dropped or wait for review, or none was collected."""
    parts = _left_out(row)
    return f"no dialogs count: {parts}" if parts else "no dialog collected yet"


def nothing_to_rank(board: dict) -> str:
    """Why there is no leaderboard, per system of the job ("" when one system or more has a score): the
    page and every download say it, so a run whose every dialog was dropped still answers."""
    if board["systems"]:
        return ""
    why = "; ".join(f"{row['system']}: {_left_out(row) or 'no dialog collected yet'}" for row in board.get("unscored", []))
    return "No dialogs count yet, so nothing is ranked" + (f" ({why})." if why else ".")


def pair_interval(row: dict) -> str:
    """A pairwise row's interval as the page and the Markdown show it, marked as the ratings leaderboard marks it."""
    return numbers.interval(row["ci_low"], row["ci_high"]) + (" too few to compare" if row["too_few"] else " clipped" if row["ci_clipped"] else "")


def verdict(board: dict) -> str:
    """One sentence on whether the order is significant (Holm over the pairwise table)."""
    rows = board["systems"]
    if len(rows) < 2:
        return ""
    better = [p for p in board["pairwise"] if p["significant_holm"]]
    too_few = [p for p in board["pairwise"] if p["too_few"]]
    if not better:
        text = "No system is shown better than another (Holm-adjusted pairwise comparisons): the order is not significant"
    else:
        text = "Shown better (Holm): " + "; ".join(f"{p['better']} over {p['b'] if p['better'] == p['a'] else p['a']}" for p in better)
    if too_few:
        text += f"; {len(too_few)} pair{'' if len(too_few) == 1 else 's'} too few to compare (fewer than {scoring.MIN_PAIR_INSTANCES} goals)"
    return text + "."


def to_json_dict(board: dict) -> dict:
    """The JSON download and the API: the board with the sentences the page and the Markdown show.
    Each system's `failed_turns` repeats `failed_calls` for clients written before the rename."""
    return {**board, "status_lines": status_lines(board), "screening_note": screening_note(board), "verdict": verdict(board),
            "nothing_to_rank": nothing_to_rank(board), "rank_columns": RANK_COLUMNS_WORDS,
            "systems": [{**row, "failed_turns": row["failed_calls"]} for row in board["systems"]],
            "unscored": [{**row, "reason": unscored_reason(row)} for row in board.get("unscored", [])]}


CSV_FIELDS = ["rank", "rank_low", "rank_high", "system", "dialogs", "goals", "workers",
              *(f"{name}{suffix}" for name in STATISTICS for suffix in ("", "_ci_low", "_ci_high")), "failed_calls", "note", "run"]


def _system_status(board: dict, system: str) -> str:
    row = next((r for r in (board.get("status") or {}).get("systems", []) if r["system"] == system), None)
    if row is None:
        return ""
    text = f"{row['done']} of {row['planned']} dialogs collected"
    if row["paused_at"]:
        text += f"; paused since {_when(row['paused_at'])} ({row['paused_reason'] or 'no reason recorded'})"
    if row.get("failed_calls_not_counted"):
        text += "; " + _uncounted_failures(row).split(": ", 1)[1]
    return text


def _run_notes(board: dict) -> list[str]:
    """What the downloads say of the run before any figure: its state, the screening, why nothing is ranked."""
    return status_lines(board) + [note for note in (screening_note(board), nothing_to_rank(board)) if note]


def to_csv(board: dict) -> str:
    """The leaderboard, a row per system of the job (one with no score says why in `note`). `note`
    also carries the system's run state (dialogs collected of those planned, paused), and `run` on
    every row the job's (`status_lines`, `screening_note`): a row read alone still says it is provisional."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_FIELDS, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    run = _cell(" ".join(_run_notes(board)))
    for row in board["systems"]:
        writer.writerow({**{k: _cell(row[k]) for k in CSV_FIELDS if k in row}, "note": _cell(_system_status(board, row["system"])), "run": run})
    for row in board.get("unscored", []):
        note = "; ".join(filter(None, [unscored_reason(row), _system_status(board, row["system"])]))
        writer.writerow({"system": _cell(row["system"]), "dialogs": 0, "note": _cell(note), "run": run})
    return buffer.getvalue()


PAIRWISE_FIELDS = ["a", "b", "difference", "ci_low", "ci_high", "p", "p_holm", "significant_holm", "better", "ci_clipped", "too_few"]


def pairwise_csv(board: dict) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=PAIRWISE_FIELDS, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    for row in board["pairwise"]:
        writer.writerow({k: _cell(row[k]) for k in PAIRWISE_FIELDS})
    return buffer.getvalue()


def _with_interval(row, name):
    if row[name] is None:
        return "—"
    if row[f"{name}_ci_low"] is None:
        return numbers.decimals(row[name])
    return f"{numbers.decimals(row[name])} {numbers.interval(row[f'{name}_ci_low'], row[f'{name}_ci_high'])}"


#: The count of a system's failed calls in its counted dialogs: "Failed calls" on the page and in the
#: Markdown, `failed_calls` in the CSV, the JSON and the API (which also keep `failed_turns`, its name before).
FAILED_CALLS = "Failed calls"
TABLE_HEADER = [TIE_GROUP, RANK_RANGE, "System", "Dialogs", *(f"{LABELS[n]} [95% CI]" for n in STATISTICS), FAILED_CALLS]
PAIRWISE_HEADER = ["A", "B", "A − B [95% CI]", "p (unadjusted)", "Holm p", "Significant (Holm)"]


def pairwise_cells(row: dict) -> list[str]:
    return [row["a"], row["b"], f"{numbers.decimals(row['difference'])} {pair_interval(row)}", numbers.p_value(row["p"]),
            numbers.p_value(row["p_holm"]), "yes" if row["significant_holm"] else "no"]


def to_markdown(board: dict, *, job_name: str = "") -> str:
    lines = [f"## {job_name}", ""] if job_name else []
    notes = _run_notes(board)
    if notes:
        lines += ["> " + " ".join(notes), ""]
    if verdict(board):
        lines += [verdict(board), ""]
    lines += ["| " + " | ".join(TABLE_HEADER) + " |", "|" + "|".join(["---"] * len(TABLE_HEADER)) + "|"]
    for row in board["systems"]:
        cells = [str(row["rank"]), f"{row['rank_low']}-{row['rank_high']}", row["system"], str(row["dialogs"])]
        cells += [_with_interval(row, name) for name in STATISTICS] + [str(row["failed_calls"])]
        lines.append("| " + " | ".join(cells) + " |")
    for row in board.get("unscored", []):
        cells = ["—", "—", row["system"], "0", unscored_reason(row), *(["—"] * len(STATISTICS))]
        lines.append("| " + " | ".join(cells) + " |")
    if board["pairwise"]:
        lines += ["", "### Pairwise differences of the final score", "",
                  "| " + " | ".join(PAIRWISE_HEADER) + " |", "|" + "|".join(["---"] * len(PAIRWISE_HEADER)) + "|"]
        lines += ["| " + " | ".join(pairwise_cells(p)) + " |" for p in board["pairwise"]]
    method = board["method"]
    lines += [
        "",
        f"DSTC9 Track 2: success as judged by the worker, success with grounding, and their average (Final), which ranks "
        f"the systems; ratings are 1-5 means. Intervals: {method['ci_method']} ({method['bootstrap']} resamples, seed "
        f"{method['seed']}). {method['dialogs']}. {TIE_GROUP}: {method['rank']}. {RANK_RANGE}: {method['rank_range']}. "
        f"{RANK_COLUMNS_WORDS}. {method['failed_calls']}."
        + (f" Pairwise: {method['pairwise']}." if method.get("pairwise") else ""),
    ]
    lines += fragility.markdown(board.get("fragility"), "dialogs")
    return "\n".join(lines) + "\n"
