"""How many ratings or votes hold a leaderboard's order. Pure: numpy, scipy; no Django.

For each adjacent pair (A above B) and for rank 1, the smallest number of ratings (votes, dialogs)
whose removal reverses the order: after it B scores at least as high as A (a tie is no longer an
order). Shown as a count and as a share of all the leaderboard's ratings, marked fragile below the
mark's share or at `MARK_COUNT` removals or fewer; a system keeps at least one rating, since a
system without any is not on the board.

No count (None) says why (`Fragility.reason`, in words by `count_text`): no removal the rules allow
reverses the order ("none"); the search stopped at its step limit ("limit"); or a row weighted by
Eq. 1 kept its instances' last ratings and what was left did not reverse it ("eq1_rule": not
measured, since removing a last rating would change Eq. 1's weighting, so whether some removal
reverses the order is unknown; with one rating per instance no removal of that row is possible at
all). Only "none" says the order holds; none of the three is marked fragile, and a page says which.

Three leaderboards, three statistics:

- **A mean of values** (`mean_pair_count`; the interactive leaderboard's final score is the mean over
  dialogs): exact. For a fixed number k of removals from A, removing A's k highest values lowers
  its mean the most; from B, its k lowest raise B's the most; so the smallest total is the least
  k_a + k_b with mean_A(k_a) <= mean_B(k_b), found by one binary search per k_a.
- **The ratings leaderboard** (`cell_pair`): a system's score is the mean over questions of Eq. 1's
  S_f = 2 sum(w_i m_i) / (D_p + D_r) over instances i, m_i the mean of the instance's ratings (for
  a system without detection: w_i = 1 on rated instances and D_p = D_r = their number, i.e. the
  mean of instance means). Removing one rating moves m_i, or, when it was the instance's last,
  drops the instance. Greedy: remove, one at a time, the rating that narrows the gap most, until
  it closes. Every count it reports is achieved (an upper bound on the smallest). When the pair
  has few ratings the search is exhaustive instead (`EXACT_SEARCH_LIMIT` subsets), and the row
  says `exact`. For a row weighted by Eq. 1 an instance's last rating is never removed (that would
  change Eq. 1's reweighting of the knowledge-seeking turns), so its bound is one within that rule.
- **Bradley-Terry** (`bt_pair`): the strengths are refitted (the leaderboard's penalised fit)
  after each removal of one vote of a kind (i beat j, or a tie of i and j). Greedy as above: the
  kinds are ranked by the first-order effect of removing one (a Newton step from the fit) and the
  best `GREEDY_CANDIDATES` refitted, the one that narrows the gap most removed; exhaustive over
  multisets of kinds when they are few (`EXACT_SEARCH_LIMIT`). A removal that leaves the
  comparisons disconnected is not taken (every system stays tied to the others).

Rank 1: the smallest removal that puts any system level with or above the first: for the two mean
statistics a removal touches only the two systems it names, so it is the least over the first's
pairs with each other system; for Bradley-Terry that least is an upper bound (a removal moves
every strength a little). A challenger's search stops once it needs more than the nearest one so
far. Checked against brute force on small leaderboards in tests/evaluation/test_fragility.py.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import asdict, dataclass, replace

import numpy as np
import pandas as pd
from scipy.special import expit

from evaluation.stats import bradley_terry
from quorum import numbers

EXACT_SEARCH_LIMIT = 20_000  # subsets (or refits) an exhaustive search may try before the greedy bound is used
GREEDY_STEP_LIMIT = 100_000  # removals the greedy search tries before it says "more than"
GREEDY_CANDIDATES = 4  # vote kinds refitted at each greedy step (the best by first-order effect)
DEFAULT_MARK_SHARE = 0.01  # pairs held by a smaller share of the ratings are marked fragile
# ... and pairs this few ratings reverse, whatever the share: on a small campaign one rating in 50
# is 2%, yet an order one rating holds is fragile by any reading.
MARK_COUNT = 3


@dataclass(frozen=True)
class Fragility:
    above: str
    below: str
    count: int | None  # ratings whose removal reverses the order; None: `reason` says why there is none
    share: float | None  # count / total
    total: int  # the leaderboard's ratings (votes, dialogs)
    method: str  # "exact" or "greedy bound"
    marked: bool  # share below the mark, or at most MARK_COUNT removals
    reason: str | None = None  # with no count: NONE, LIMIT or EQ1_RULE (module docstring); None with a count
    one_per_instance: bool = False  # EQ1_RULE with every weighted cell holding one rating: no removal was possible

    def as_dict(self) -> dict:
        return asdict(self)


NONE, LIMIT, EQ1_RULE = "none", "limit", "eq1_rule"  # why a pair has no count (module docstring)


def _result(above, below, count, total, method, mark_share, reason=NONE, one_per_instance=False) -> Fragility:
    share = None if count is None or not total else count / total
    # Two systems already level (no removal needed) have no order to be fragile: `level` in display_rows.
    marked = share is not None and count > 0 and (share < mark_share or count <= MARK_COUNT)
    if count is not None:
        reason, one_per_instance = None, False
    return Fragility(str(above), str(below), count, share, int(total), method, bool(marked), reason, bool(one_per_instance))


def count_text(row: dict) -> str:
    """A row's count in words, the same on the page, in the Markdown and the CSV: the number, or
    why there is none. A row stored before reasons were kept says only that none was found."""
    if row.get("count") == 0:
        return "0: already level (the two score the same), no order to reverse"
    if row.get("count") is not None:
        return str(row["count"])
    reason = row.get("reason")
    if reason == NONE:
        return "none reverses it" if row.get("method") == "exact" else "none found (greedy search)"
    if reason == LIMIT:
        return f"not found within {GREEDY_STEP_LIMIT} removals (the search stopped)"
    if reason == EQ1_RULE:
        if row.get("one_per_instance"):
            return "not measurable: one rating per instance, and removing an instance's last rating would change Eq. 1's weighting"
        return ("not measurable: the removals that keep each instance's last rating do not reverse it, "
                "and removing a last rating would change Eq. 1's weighting")
    return "none found"


def measured(row: dict) -> bool:
    """Whether the row's count, or its absence, says how robust the order is (a count, or no removal reverses it)."""
    return row.get("count") is not None or row.get("reason") == NONE


def _check_mark(mark_share):
    if not 0 <= mark_share <= 1:
        raise ValueError(f"the mark share must lie between 0 and 1; got {mark_share!r}")


# ---------------------------------------------------------------------------------------------
# Means of values: exact


def _means_after_removing(values: np.ndarray, highest: bool) -> np.ndarray:
    """m[k]: the mean after removing the k highest (or lowest) values, k = 0 .. n-1."""
    ordered = np.sort(values)
    if highest:
        ordered = ordered[::-1]
    n = len(ordered)
    kept_sums = ordered.sum() - np.concatenate([[0.0], np.cumsum(ordered)[:-1]])
    return kept_sums / (n - np.arange(n))


def mean_pair_count(a_values, b_values) -> int | None:
    """The least number of values to remove so that mean(B) >= mean(A), or None when no removal
    leaving each side one value does it (exact: module docstring)."""
    a, b = np.asarray(a_values, dtype=float), np.asarray(b_values, dtype=float)
    if not len(a) or not len(b):
        raise ValueError("each system needs at least one value")
    mean_a = _means_after_removing(a, highest=True)  # non-increasing in k_a
    mean_b = _means_after_removing(b, highest=False)  # non-decreasing in k_b
    mean_b = np.maximum.accumulate(mean_b)  # guard against rounding
    best = None
    for k_a, m in enumerate(mean_a):
        if best is not None and k_a >= best:
            break
        k_b = int(np.searchsorted(mean_b, m - 1e-12 * max(1.0, abs(m)), side="left"))
        if k_b < len(mean_b) and (best is None or k_a + k_b < best):
            best = k_a + k_b
    return best


def mean_leaderboard(values_by_system: dict, order: list, mark_share=DEFAULT_MARK_SHARE) -> dict:
    """Fragility of a leaderboard ranked by the mean of each system's values, in `order` (best first)."""
    _check_mark(mark_share)
    total = sum(len(values_by_system[s]) for s in order)

    def pair(x, y, cap):
        return _result(x, y, mean_pair_count(values_by_system[x], values_by_system[y]), total, "exact", mark_share)

    return _board(order, pair, True, mark_share)


RANK_1, ADJACENT = "rank 1", "adjacent"  # a row's places: the first against its nearest challenger; two neighbours


def display_rows(board: dict | None) -> list[dict]:
    """One row per pair of the fragility table: rank 1 first (`place` "rank 1"), then each adjacent
    pair; an empty list for a report made before fragility was reported. When the nearest challenger
    is the second system, rank 1 is the first adjacent pair: one row names both places ("rank 1,
    adjacent"), so no pair is listed twice (the count is the pair's; `_board`)."""
    if not board:
        return []
    rows = [{"place": ADJACENT, **pair} for pair in board["pairs"]]
    top = board.get("top")
    if top:
        same = next((k for k, row in enumerate(rows) if (row["above"], row["below"]) == (top["above"], top["below"])), None)
        if same is None:
            rows.insert(0, {"place": RANK_1, **top})
        else:
            pair = rows.pop(same)
            rows.insert(0, {**pair, "place": f"{RANK_1}, {ADJACENT}", "method": _both_methods(pair["method"], top["method"])})
    # A level pair stored before it was told apart was marked fragile: it is read as level here too.
    return [{**row, "marked": bool(row.get("marked")) and row.get("count") != 0, "level": row.get("count") == 0,
             "share_text": share_text(row["share"]), "count_text": count_text(row), "measured": measured(row)} for row in rows]


def _both_methods(pair: str, top: str) -> str:
    """The method of a pair that is also rank 1: rank 1's may be only a bound where the pair's is
    exact (Bradley-Terry's always is, and a challenger further down may have been greedy)."""
    return pair if pair == top else f"{pair} (as {RANK_1}: {top})"


def share_text(share: float | None) -> str:
    """A share of the ratings as a percentage to two significant figures: "30%", "2.4%", "0.037%"
    (three fixed decimals read "30.000%" of a large share and lost a small one's figures)."""
    if share is None:
        return ""
    if share <= 0:
        return numbers.percent(0.0)
    places = max(0, 1 - math.floor(math.log10(share * 100)))
    return numbers.percent(share, places)


def mark_text(board: dict | None) -> str:
    """What the board marks, after "an order that ... reverse": "fewer than 1% of them, or 3 or
    fewer" (a board stored before the count rule: the share alone)."""
    board = board or {}
    share = f"{board.get('mark_share', DEFAULT_MARK_SHARE):.2%}".replace(".00%", "%")
    count = board.get("mark_count")
    return f"fewer than {share} of them" + ("" if count is None else f", or {count} or fewer,")


def markdown(board: dict | None, units: str) -> list[str]:
    """The fragility section of a Markdown leaderboard (ratings, pairwise and interactive), as lines."""
    table = display_rows(board)
    if not table:
        return []
    lines = ["", "## Fragility", "", f"The fewest {units} whose removal reverses each order (the lower one then level or ahead); "
             f"marked (!) when {mark_text(board)} reverse it; exact, or a greedy bound (that many do reverse it). "
             "Rank 1 is the first against its nearest challenger; a pair that is also adjacent is listed once, with both places.", "",
             "| Place | Above | Below | Count | Share | Method |", "|---|---|---|---|---|---|"]
    for row in table:
        count = row["count_text"]
        share = row["share_text"] + (" (!)" if row["marked"] else " (level)" if row["level"] else "" if row["measured"] else " (not measured)")
        lines.append(f"| {row['place']} | {row['above']} | {row['below']} | {count} | {share} | {row['method']} |")
    return lines


def _board(order, pair, top_exact: bool, mark_share: float) -> dict:
    """{"pairs": adjacent pairs, "top": rank 1 against the nearest challenger, "mark_share", "mark_count"} as dicts. `pair(x,
    y, cap)` may stop a search past `cap` removals (None: no cap): a challenger that needs more
    than the best so far is not the nearest."""
    pairs = [pair(x, y, None) for x, y in zip(order, order[1:], strict=False)]
    top = None
    if len(order) > 1:
        best, exact = pairs[0], pairs[0].method == "exact"
        for y in order[2:]:
            challenger = pair(order[0], y, best.count)
            exact = exact and challenger.method == "exact"
            if challenger.count is not None and (best.count is None or challenger.count < best.count):
                best = challenger
            elif challenger.count is None and best.count is None and best.reason == NONE and challenger.reason != NONE:
                best = challenger  # no count either way: rank 1 is only as measured as its least measured challenger
        top = replace(best, method="exact" if top_exact and exact else "greedy bound")
    return {"pairs": [p.as_dict() for p in pairs], "top": top.as_dict() if top else None, "mark_share": mark_share, "mark_count": MARK_COUNT}


# ---------------------------------------------------------------------------------------------
# The ratings leaderboard: instance means, Eq. 1


@dataclass
class SystemCells:
    """One system's ratings as cells (question q, instance i): how many ratings of each value of
    `domain` the cell holds, its weight w (Eq. 1's factor; 1 on a rated instance of an unweighted
    system) and, per question, D = D_p + D_r. `weighted`: Eq. 1 with detection applies, so an
    instance's last rating stays (module docstring)."""

    domain: np.ndarray  # [V] the rating values
    counts: np.ndarray  # [Q, N, V] ratings of each value per cell
    weight: np.ndarray  # [Q, N]
    denominator: np.ndarray  # [Q]
    weighted: bool

    def __post_init__(self) -> None:
        self._moves: np.ndarray | None = None  # [Q, N, V] cache of `moves()`, updated by `remove`

    def copy(self) -> SystemCells:
        return SystemCells(self.domain, self.counts.copy(), self.weight.copy(), self.denominator.copy(), self.weighted)

    def _sums(self, q=slice(None)):
        counts = self.counts[q]
        return counts @ self.domain, counts.sum(-1)

    def numerators(self) -> np.ndarray:
        t, c = self._sums()
        return (self.weight * np.where(c > 0, t / np.maximum(c, 1), 0.0)).sum(-1)

    def score(self) -> float:
        with np.errstate(invalid="ignore", divide="ignore"):
            per_question = np.where(self.denominator > 0, 2 * self.numerators() / np.where(self.denominator > 0, self.denominator, 1), np.nan)
        return float(per_question.mean())

    def size(self) -> int:
        return int(self.counts.sum())

    def allowed(self, q: int, i: int, v: int) -> bool:
        c = self.counts[q, i].sum()
        if self.counts[q, i, v] < 1:
            return False
        return bool(c > 1 or not (self.weighted or self.denominator[q] <= 2))

    def remove(self, q: int, i: int, v: int) -> None:
        self.counts[q, i, v] -= 1
        if not self.counts[q, i].any() and not self.weighted:
            self.weight[q, i] = 0.0
            self.denominator[q] -= 2.0
        if self._moves is not None:
            # A weighted system's moves depend on the cell alone; an unweighted one's removal of an
            # instance's last rating reads the question's sum, so its question is recomputed.
            if self.weighted:
                self._moves[q, i] = self._question_moves(q, i)
            else:
                self._moves[q] = self._question_moves(q)

    def moves(self) -> np.ndarray:
        """[Q, N, V]: the change of the score if one rating of value v left cell (q, i); NaN where
        that removal is not possible or not allowed."""
        if self._moves is None:
            self._moves = np.stack([self._question_moves(q) for q in range(len(self.denominator))])
        return self._moves

    def _question_moves(self, q: int, i=slice(None)) -> np.ndarray:
        t, c = self._sums((q, i))
        counts, weight, d = self.counts[q, i], self.weight[q, i], self.denominator[q]
        with np.errstate(invalid="ignore", divide="ignore"):
            moved = 2 * np.asarray(weight)[..., None] * ((np.asarray(t)[..., None] - self.domain) / (np.asarray(c)[..., None] - 1) - np.asarray(t / c)[..., None]) / d
        many = np.asarray(c)[..., None] > 1
        # Emptying a cell moves the question's sum, which a weighted system never allows: the
        # question's numerator (a pass over all its cells) is read only for an unweighted one.
        change = np.where(many, moved, np.nan if self.weighted else self._emptied(q, t, d, moved))
        change = np.where((counts > 0) & (d > 0) & (many | (d > 2)), change, np.nan)
        return change / len(self.denominator)


    def _emptied(self, q: int, t, d: float, moved: np.ndarray) -> np.ndarray:
        """The change of the score if the last rating left a cell of question q with rating sum t."""
        tq, cq = self._sums(q)
        numerator = float((self.weight[q] * np.where(cq > 0, tq / np.maximum(cq, 1), 0.0)).sum())
        if d <= 2:
            return np.full_like(moved, np.nan)
        with np.errstate(invalid="ignore", divide="ignore"):
            return 2 * (numerator - np.asarray(t)[..., None]) / (d - 2) - 2 * numerator / d


def report_cells(ratings, labels, questions, n_instances, weight, denominator, weighted) -> dict:
    """label -> SystemCells from a report's ratings frame (system, question, instance, value) and
    Eq. 1's columns: `weight` [S, Q, N] (`Eq1Columns.score_weight`), `denominator` [S, Q]
    (D_p + D_r summed over instances), `weighted` [S]."""
    domain = np.asarray(sorted(set(ratings["value"].astype(float))), dtype=float)
    s_codes, q_codes = _codes(ratings["system"], labels), _codes(ratings["question"], questions)
    v_codes = np.searchsorted(domain, ratings["value"].to_numpy(dtype=float))
    counts = np.zeros((len(labels), len(questions), n_instances, len(domain)))
    np.add.at(counts, (s_codes, q_codes, ratings["instance"].to_numpy(dtype=int), v_codes), 1)
    return {
        label: SystemCells(domain, counts[s], np.asarray(weight[s], dtype=float).copy(), np.asarray(denominator[s], dtype=float).copy(), bool(weighted[s]))
        for s, label in enumerate(labels)
    }


def _codes(column, names) -> np.ndarray:
    """The position in `names` (distinct) of each value of a ratings column; a value not among them
    is refused as list.index refuses it."""
    values = np.asarray(column, dtype=object)
    codes = pd.Index(list(names)).get_indexer(values)
    if (codes < 0).any():
        raise ValueError(f"{values[codes < 0][0]!r} is not in list")
    return codes.astype(int)


def _units(a: SystemCells, b: SystemCells):
    out = []
    for side, system in enumerate((a, b)):
        for q, i, v in zip(*np.nonzero(system.counts), strict=True):
            out += [(side, int(q), int(i), int(v))] * int(system.counts[q, i, v])
    return out


def _exhaustive_cells(a: SystemCells, b: SystemCells, below_k: int) -> int | None:
    """The least removal of fewer than below_k ratings that reverses the pair, trying every subset
    by size (the caller checks `_search_size` first); None when none does."""
    units = _units(a, b)
    for k in range(min(below_k, len(units) + 1)):
        for subset in itertools.combinations(units, k):
            if _reversed_after(a, b, subset):
                return k
    return None


def _reversed_after(a: SystemCells, b: SystemCells, removals) -> bool:
    systems = (a.copy(), b.copy())
    for side, q, i, v in removals:
        if not systems[side].allowed(q, i, v):
            return False
        systems[side].remove(q, i, v)
    return systems[1].score() >= systems[0].score() - 1e-12


def _least(moves: np.ndarray) -> int | None:
    """The flat index of the smallest move (the first of equals), None when every one is NaN: what
    np.nanargmin finds, in one pass (a move that can be made is finite)."""
    filled = np.where(np.isnan(moves), np.inf, moves)
    k = int(filled.argmin())
    return None if filled.flat[k] == np.inf else k


def _greedy_cells(a: SystemCells, b: SystemCells, cap: int = GREEDY_STEP_LIMIT) -> int | None:
    """The greedy count, or None when nothing narrows the gap or `cap` removals did not close it."""
    return _greedy_search(a, b, cap)[0]


def _greedy_search(a: SystemCells, b: SystemCells, cap: int = GREEDY_STEP_LIMIT) -> tuple[int | None, bool]:
    """(`_greedy_cells`'s count, whether the search stopped at `cap` rather than running out of removals)."""
    a, b = a.copy(), b.copy()
    gap = a.score() - b.score()
    steps = 0
    while gap > 1e-12:
        if steps >= cap:
            return None, True
        down, up = a.moves(), -b.moves()
        best_a, best_b = _least(down), _least(up)
        options = [(float(m.flat[k]), side, k) for side, m, k in ((0, down, best_a), (1, up, best_b)) if k is not None]
        if not options or min(options)[0] >= 0:
            return None, False  # nothing left narrows the gap
        change, side, k = min(options)
        system = (a, b)[side]
        q, i, v = (int(x) for x in np.unravel_index(k, system.counts.shape))
        system.remove(q, i, v)
        steps += 1
        gap = a.score() - b.score() if steps % 50 == 0 else gap + change  # re-anchored now and then against rounding
        if gap <= 1e-12:
            gap = a.score() - b.score()
    return steps, False


def cell_pair(a: SystemCells, b: SystemCells, cap: int | None = None) -> tuple[int | None, str]:
    """(count, method) for A above B (module docstring): exhaustive below the greedy count when
    that search is small, so the greedy count is then proven least; else the greedy bound. With
    `cap`, a greedy search past cap removals stops (None, "greedy bound")."""
    return _cell_pair(a, b, cap)[:2]


def _cell_pair(a: SystemCells, b: SystemCells, cap: int | None = None) -> tuple[int | None, str, str]:
    """`cell_pair` with the reason for no count: EQ1_RULE when a row is weighted (its instances'
    last ratings were never removed, so no count says nothing of those removals), else LIMIT when
    the greedy search stopped at its cap, else NONE."""
    greedy, stopped = _greedy_search(a, b, GREEDY_STEP_LIMIT if cap is None else cap)
    bound = greedy if greedy is not None else a.size() + b.size() + 1
    if _search_size(a.size() + b.size(), bound) <= EXACT_SEARCH_LIMIT:
        found = _exhaustive_cells(a, b, bound)
        count, method, stopped = (found if found is not None else greedy), "exact", False
    else:
        count, method = greedy, "greedy bound"
    return count, method, EQ1_RULE if a.weighted or b.weighted else LIMIT if stopped else NONE


def _one_per_instance(*systems: SystemCells) -> bool:
    """Every rated cell of the weighted systems among `systems` holds one rating: no removal from them is allowed."""
    cells = [s.counts.sum(-1) for s in systems if s.weighted]
    return bool(cells) and all(bool((c <= 1).all()) for c in cells)


def _search_size(n: int, below_k: int) -> int:
    """Subsets of fewer than below_k of n units (counted until past the limit)."""
    total = 0
    for k in range(min(below_k, n + 1)):
        total += math.comb(n, k)
        if total > EXACT_SEARCH_LIMIT:
            break
    return total


def report_fragility(ratings, labels, questions, n_instances, cols, order, mark_share=DEFAULT_MARK_SHARE) -> dict:
    """The ratings leaderboard's fragility from what `report.build_report` has: the ratings frame,
    the system labels, questions, Eq. 1's columns (`scoring.Eq1Columns`) and the ranked labels in
    order; shares are of all the campaign's ratings."""
    denominator = cols.precision_denominator.sum(-1) + cols.recall_denominator.sum(-1)
    cells = report_cells(ratings, list(labels), list(questions), n_instances, cols.score_weight, denominator, cols.weighted)
    return cell_leaderboard(cells, list(order), mark_share, total=len(ratings))


def cell_leaderboard(systems: dict, order: list, mark_share=DEFAULT_MARK_SHARE, total: int | None = None) -> dict:
    """Fragility of the ratings leaderboard; `systems`: label -> SystemCells; `order` best first;
    `total`: the leaderboard's ratings (default: those of the ranked systems)."""
    _check_mark(mark_share)
    total = total if total is not None else sum(systems[s].size() for s in order)

    def pair(x, y, cap):
        count, method, reason = _cell_pair(systems[x], systems[y], cap)
        return _result(x, y, count, total, method, mark_share, reason, _one_per_instance(systems[x], systems[y]))

    return _board(order, pair, True, mark_share)


# ---------------------------------------------------------------------------------------------
# Bradley-Terry


def _win_table(comparisons):
    coded = bradley_terry._coded(comparisons)
    S = len(coded.systems)
    wins = np.zeros((S, S))
    np.add.at(wins, (coded.a, coded.b), coded.score_a)
    np.add.at(wins, (coded.b, coded.a), 1.0 - coded.score_a)
    kinds, counts = {}, {}
    for a, b, s in zip(coded.a.tolist(), coded.b.tolist(), coded.score_a.tolist(), strict=True):
        if s == 0.5:
            key = ("tie", min(a, b), max(a, b))
        else:
            key = ("win", a, b) if s == 1.0 else ("win", b, a)
        counts[key] = counts.get(key, 0) + 1
    for key in counts:
        change = np.zeros((S, S))
        if key[0] == "tie":
            change[key[1], key[2]] = change[key[2], key[1]] = 0.5
        else:
            change[key[1], key[2]] = 1.0
        kinds[key] = change
    return coded.systems, wins, kinds, counts


def _refits(wins_batch: np.ndarray, i: int, j: int, l2_penalty: float):
    """(log-strengths [B, S], log s_i - log s_j [B]) refitted on each table; the gap is +inf where
    the comparisons left no longer connect every system (a removal keeps every system on the
    board, its strength tied to the others)."""
    log_strength, _ = bradley_terry._newton(wins_batch, l2_penalty)
    connected = bradley_terry._reachable((wins_batch + wins_batch.transpose(0, 2, 1)) > 1e-9).all(axis=(1, 2))
    return log_strength, np.where(connected, log_strength[:, i] - log_strength[:, j], np.inf)


def _gaps(wins_batch: np.ndarray, i: int, j: int, l2_penalty: float) -> np.ndarray:
    return _refits(wins_batch, i, j, l2_penalty)[1]


def _predicted_gap_changes(log_strength, wins, changes, i, j, l2_penalty) -> np.ndarray:
    """[K] first-order change of log s_i - log s_j when the votes of `changes` [K, S, S] are removed:
    one Newton step from the fit, -(e_i - e_j)' H^-1 g_K, g_K the removed votes' score."""
    S = len(log_strength)
    games = wins + wins.T
    _, information = bradley_terry._gradient_and_information(log_strength[None], wins[None], games[None], l2_penalty)
    v = np.linalg.solve(information[0] + 1.0 / S, np.eye(S)[i] - np.eye(S)[j])
    p = expit(log_strength[:, None] - log_strength[None, :])
    moved = (1.0 - p) * (v[:, None] - v[None, :])  # [a, b]: what one vote a-over-b adds to v' g
    return -(changes * moved).sum(axis=(1, 2))


def _greedy_bt(wins, kinds, counts, i, j, l2_penalty, cap=GREEDY_STEP_LIMIT) -> int | None:
    """Remove one vote at a time, the one that narrows the gap most: the kinds are ranked by their
    first-order effect and the best `GREEDY_CANDIDATES` refitted; None when nothing narrows it or
    `cap` removals did not close it."""
    keys = list(kinds)
    changes = np.stack([kinds[k] for k in keys])
    left = np.array([counts[k] for k in keys], dtype=float)
    wins = wins.copy()
    fitted, gap = _refits(wins[None], i, j, l2_penalty)
    log_strength, gap = fitted[0], float(gap[0])
    steps = 0
    while gap > 1e-9:
        if steps >= cap or not left.any():
            return None
        predicted = np.where(left > 0, _predicted_gap_changes(log_strength, wins, changes, i, j, l2_penalty), np.inf)
        top = [int(k) for k in np.argsort(predicted)[:GREEDY_CANDIDATES] if left[k] > 0]
        fitted, gaps = _refits(np.stack([wins - changes[k] for k in top]), i, j, l2_penalty)
        best = int(np.argmin(gaps))
        if gaps[best] >= gap:
            return None  # nothing left narrows the gap
        k = top[best]
        wins -= changes[k]
        left[k] -= 1
        log_strength, gap = fitted[best], float(gaps[best])
        steps += 1
    return steps


def _multisets(keys, counts, k):
    for combo in itertools.combinations_with_replacement(keys, k):
        if all(combo.count(key) <= counts[key] for key in set(combo)):
            yield combo


def _exhaustive_bt(wins, kinds, counts, i, j, below_k, l2_penalty) -> int | None:
    """The least number (< below_k) of votes whose removal reverses the pair, trying every multiset
    of vote kinds by size; None when none does."""
    keys = [k for k, n in counts.items() if n > 0]
    for k in range(below_k):
        batch = [wins - sum((kinds[key] for key in combo), np.zeros_like(wins)) for combo in _multisets(keys, counts, k)]
        if batch and (_gaps(np.stack(batch), i, j, l2_penalty) <= 1e-9).any():
            return k
    return None


def bt_pair(comparisons, above, below, l2_penalty=bradley_terry.DEFAULT_L2_PENALTY, cap: int | None = None, table=None) -> tuple[int | None, str]:
    """(count, method): the votes whose removal puts `below` level with or above `above` in the
    refitted strengths (`cap` as for `cell_pair`; `table`: `_win_table(comparisons)`, if made)."""
    systems, wins, kinds, counts = table or _win_table(comparisons)
    i, j = systems.index(above), systems.index(below)
    greedy = _greedy_bt(wins, kinds, counts, i, j, l2_penalty, GREEDY_STEP_LIMIT if cap is None else cap)
    bound = greedy if greedy is not None else sum(counts.values()) + 1
    n_kinds = sum(1 for n in counts.values() if n > 0)
    if _search_size(n_kinds + bound, bound) <= EXACT_SEARCH_LIMIT:  # bounds the multisets of fewer than `bound` of n_kinds
        found = _exhaustive_bt(wins, kinds, counts, i, j, bound, l2_penalty)
        return (found if found is not None else greedy), "exact"
    return greedy, "greedy bound"


def bt_leaderboard(comparisons, order: list, mark_share=DEFAULT_MARK_SHARE, l2_penalty=bradley_terry.DEFAULT_L2_PENALTY) -> dict:
    """Fragility of a Bradley-Terry ranking; `order`: the systems by fitted strength, best first."""
    _check_mark(mark_share)
    comparisons = list(comparisons)
    total = len(comparisons)
    table = _win_table(comparisons)

    def pair(x, y, cap):
        count, method = bt_pair(comparisons, x, y, l2_penalty, cap, table)
        return _result(x, y, count, total, method, mark_share)

    return _board(order, pair, False, mark_share)
