"""Fragility of a leaderboard's order against brute force on small leaderboards.

Brute force here is independent of the module's search: every subset of the ratings (or votes) is
removed in turn and the leaderboard's own statistic recomputed from what is left (plain means,
means of instance means, `bradley_terry.fit`).
"""
import csv
import io
import itertools

import numpy as np
import pandas as pd
import pytest

from evaluation.stats import bradley_terry, fragility, report


def _brute_force(units, reversed_without):
    for k in range(len(units) + 1):
        for removed in itertools.combinations(range(len(units)), k):
            if reversed_without(set(removed)):
                return k
    return None


# --- means -------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(40))
def test_mean_pair_is_the_least_removal(seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(1, 6, size=rng.integers(1, 7)).astype(float)
    b = rng.integers(1, 6, size=rng.integers(1, 7)).astype(float)
    if a.mean() <= b.mean():
        a, b = b, a
    units = [("a", v) for v in a] + [("b", v) for v in b]

    def reversed_without(removed):
        left_a = [v for k, (side, v) in enumerate(units) if side == "a" and k not in removed]
        left_b = [v for k, (side, v) in enumerate(units) if side == "b" and k not in removed]
        return bool(left_a and left_b and np.mean(left_b) >= np.mean(left_a))

    assert fragility.mean_pair_count(a, b) == _brute_force(units, reversed_without)


def test_a_pair_that_no_removal_reverses_has_no_count():
    assert fragility.mean_pair_count([5.0, 5.0], [1.0, 1.0, 1.0]) is None


def test_mean_leaderboard_marks_the_pair_held_by_few():
    values = {"A": [5.0] * 51 + [1.0] * 49, "B": [3.0] * 100, "C": [1.0] * 100}
    board = fragility.mean_leaderboard(values, ["A", "B", "C"], mark_share=0.05)
    first, second = board["pairs"]
    assert (first["above"], first["below"], first["count"], first["share"]) == ("A", "B", 2, 2 / 300)  # (304 - 5k) / (100 - k) <= 3 from k = 2
    assert first["marked"] and not second["marked"]
    assert board["top"]["below"] == "B" and board["top"]["count"] == 2 and board["top"]["method"] == "exact"


def test_an_order_a_handful_of_ratings_reverse_is_fragile_however_small_the_campaign():
    """One rating in 20 is 5%, far above the 1% share; an order that one rating holds is marked all
    the same (`MARK_COUNT`), and one that needs more than the handful and 1% is not."""
    small = {"A": [4.0] * 9 + [5.0], "B": [4.0] * 10}  # removing A's 5 levels them: one rating
    board = fragility.mean_leaderboard(small, ["A", "B"], mark_share=0.01)
    (pair,) = board["pairs"]
    assert (pair["count"], pair["share"], pair["marked"]) == (1, 1 / 20, True)
    assert board["mark_count"] == fragility.MARK_COUNT == 3
    held = {"A": [5.0] * 10, "B": [4.0] * 10}  # no removal levels them
    assert not fragility.mean_leaderboard(held, ["A", "B"])["pairs"][0]["marked"]
    wide = {"A": [5.0] * 5 + [4.0] * 5, "B": [4.0] * 10}  # five removals, a quarter of the ratings
    (pair,) = fragility.mean_leaderboard(wide, ["A", "B"])["pairs"]
    assert pair["count"] == 5 and not pair["marked"]
    assert fragility.mark_text(board) == "fewer than 1% of them, or 3 or fewer,"
    assert fragility.mark_text({"mark_share": 0.05}) == "fewer than 5% of them"  # a board stored before the count


# --- the ratings leaderboard (instance means, Eq. 1 of an unweighted system) ----------------------


def _small_ratings(rng, n_instances=2, raters=(1, 2)):
    rows = []
    for system, shift in (("A", 0.6), ("B", 0.0)):
        for question in ("q1", "q2"):
            for instance in range(n_instances):
                for r in range(rng.choice(raters)):
                    value = int(np.clip(np.round(3 + shift + rng.normal(0, 1.2)), 1, 5))
                    rows.append({"system": system, "question": question, "instance": instance, "rater": f"r{r}", "value": value})
    return pd.DataFrame(rows)


def _leaderboard_score(frame, system):
    """The report's final score of an unweighted system: mean over questions of the mean of instance means."""
    mine = frame[frame["system"] == system]
    per_question = [g.groupby("instance")["value"].mean().mean() for _, g in mine.groupby("question")]
    return np.mean(per_question) if len(per_question) == 2 else None


def _plain_score(rows, system):
    """The same statistic on plain tuples (system, question, instance, value), for brute force."""
    cells: dict = {}
    for r in rows:
        if r[0] == system:
            cells.setdefault(r[1], {}).setdefault(r[2], []).append(r[3])
    if len(cells) < 2:
        return None
    return sum(sum(sum(v) / len(v) for v in by.values()) / len(by) for by in cells.values()) / len(cells)


def _cells_of(frame):
    built = report.build_report(frame, [False] * 2, [report.SystemSpec("A"), report.SystemSpec("B")], questions=("q1", "q2"), bootstrap=1000)
    return built


def test_ratings_leaderboard_fragility_matches_brute_force():
    compared = 0
    for seed in range(30):
        rng = np.random.default_rng(seed)
        frame = _small_ratings(rng)
        if _leaderboard_score(frame, "A") <= _leaderboard_score(frame, "B"):
            frame["system"] = frame["system"].map({"A": "B", "B": "A"})
        pair = _cells_of(frame)["fragility"]["pairs"][0]
        assert (pair["above"], pair["below"], pair["total"]) == ("A", "B", len(frame))
        if pair["method"] != "exact":
            assert pair["count"] is None  # no removal found, and every subset is too many to try
            continue

        rows = list(frame[["system", "question", "instance", "value"]].itertuples(index=False))

        def reversed_without(removed, rows=rows):
            left = [r for k, r in enumerate(rows) if k not in removed]
            a, b = _plain_score(left, "A"), _plain_score(left, "B")
            return a is not None and b is not None and b >= a - 1e-12

        assert pair["count"] == _brute_force(rows, reversed_without), seed
        compared += 1
    assert compared >= 20


@pytest.mark.parametrize("seed", range(12))
def test_the_greedy_bound_is_achieved_and_never_below_the_least(seed, monkeypatch):
    rng = np.random.default_rng(100 + seed)
    frame = _small_ratings(rng)
    if _leaderboard_score(frame, "A") <= _leaderboard_score(frame, "B"):
        frame["system"] = frame["system"].map({"A": "B", "B": "A"})
    exact = _cells_of(frame)["fragility"]["pairs"][0]["count"]
    monkeypatch.setattr(fragility, "EXACT_SEARCH_LIMIT", 0)
    bound = _cells_of(frame)["fragility"]["pairs"][0]
    assert bound["method"] == "greedy bound"
    if exact is None:
        assert bound["count"] is None
    else:
        assert bound["count"] >= exact


def test_greedy_removals_really_reverse_the_order():
    rng = np.random.default_rng(7)
    rows = []
    for system, mean in (("A", 3.4), ("B", 3.2)):
        for question in ("q1", "q2"):
            for instance in range(60):
                for r in range(3):
                    rows.append({"system": system, "question": question, "instance": instance, "rater": f"r{r}",
                                 "value": int(np.clip(np.round(rng.normal(mean, 1)), 1, 5))})
    frame = pd.DataFrame(rows)
    cells = fragility.report_cells(frame, ["A", "B"], ["q1", "q2"], 60, np.ones((2, 2, 60)), np.full((2, 2), 120.0), [False, False])
    a, b = cells["A"], cells["B"]
    assert a.score() == pytest.approx(_leaderboard_score(frame, "A"))
    count, method = fragility.cell_pair(a, b)
    assert method == "greedy bound" and count is not None and count > 0
    # replay the greedy's removals one by one: each keeps the scores what the statistic says
    a2, b2 = a.copy(), b.copy()
    for _ in range(count):
        down, up = a2.moves(), -b2.moves()
        if np.nanmin(down) <= np.nanmin(up):
            a2.remove(*np.unravel_index(np.nanargmin(down), a2.counts.shape))
        else:
            b2.remove(*np.unravel_index(np.nanargmin(up), b2.counts.shape))
    assert b2.score() >= a2.score()
    assert a.size() + b.size() - (a2.size() + b2.size()) == count


# --- Bradley-Terry -------------------------------------------------------------------------------


def _bt_order(comparisons):
    fit = bradley_terry.fit(comparisons)
    return [row.system for row in sorted(fit.per_system, key=lambda r: -r.log_strength)], fit


@pytest.mark.parametrize("seed", range(10))
def test_bradley_terry_fragility_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    strengths = {"A": 0.8, "B": 0.3, "C": 0.0}
    comparisons = []
    for _ in range(9):
        a, b = rng.choice(list(strengths), size=2, replace=False)
        p = 1 / (1 + np.exp(-(strengths[a] - strengths[b])))
        u = rng.random()
        comparisons.append((a, b, "tie" if u > 0.9 else ("a" if u < 0.9 * p else "b")))
    order, _ = _bt_order(comparisons)
    board = fragility.bt_leaderboard(comparisons, order)

    for pair in board["pairs"]:
        def reversed_without(removed, pair=pair):
            left = [c for k, c in enumerate(comparisons) if k not in removed]
            if {s for c in left for s in c[:2]} != set(order):
                return False  # a removal keeps every system on the board
            try:
                by = bradley_terry.fit(left).by_system()
            except ValueError:  # the comparisons left no longer connect the systems
                return False
            return by[pair["below"]].log_strength >= by[pair["above"]].log_strength - 1e-9

        expected = _brute_force(comparisons, reversed_without)
        assert pair["method"] == "exact"
        assert pair["count"] == expected, pair


def test_the_fragility_setting_is_checked():
    with pytest.raises(ValueError, match="between 0 and 1"):
        fragility.mean_leaderboard({"A": [1.0], "B": [0.0]}, ["A", "B"], mark_share=2)


@pytest.mark.parametrize("seed", range(8))
def test_the_bradley_terry_greedy_bound_is_never_below_the_least(seed, monkeypatch):
    rng = np.random.default_rng(50 + seed)
    strengths = {"A": 0.9, "B": 0.4, "C": 0.0, "D": -0.2}
    comparisons = []
    for _ in range(14):
        a, b = rng.choice(list(strengths), size=2, replace=False)
        comparisons.append((a, b, "a" if rng.random() < 1 / (1 + np.exp(-(strengths[a] - strengths[b]))) else "b"))
    order, _ = _bt_order(comparisons)
    exact = fragility.bt_leaderboard(comparisons, order)
    monkeypatch.setattr(fragility, "EXACT_SEARCH_LIMIT", 0)
    bound = fragility.bt_leaderboard(comparisons, order)
    for least, greedy in zip(exact["pairs"], bound["pairs"], strict=True):
        assert greedy["method"] == "greedy bound" or greedy["count"] == 0  # nothing to search below 0
        if least["method"] == "exact" and least["count"] is not None:
            assert greedy["count"] is None or greedy["count"] >= least["count"]
        if greedy["count"] is not None:  # the bound is reached: some removal of that many reverses the order
            assert least["count"] is not None and least["count"] <= greedy["count"]


# --- no count: why ------------------------------------------------------------------------------


def _weighted_cells(values_a, values_b, per_instance=1):
    """Two Eq. 1-weighted systems (one question), `per_instance` ratings of each instance's value."""
    rows = [{"system": s, "question": "q", "instance": i, "rater": f"r{r}", "value": v}
            for s, values in (("A", values_a), ("B", values_b)) for i, v in enumerate(values) for r in range(per_instance)]
    n = max(len(values_a), len(values_b))
    weight = np.ones((2, 1, n))
    denominator = np.array([[2.0 * n], [2.0 * n]])
    return fragility.report_cells(pd.DataFrame(rows), ["A", "B"], ["q"], n, weight, denominator, [True, True])


def test_a_weighted_row_with_one_rating_per_instance_is_not_measured_not_robust():
    """Eq. 1 keeps an instance's last rating, so with one rating per instance no removal can be
    tried: the count is None, and it must not read "none reverses it" (a gap this small is one
    rating from reversing), nor be marked robust, on the page, in the Markdown or the CSV."""
    cells = _weighted_cells([4, 4, 4, 5, 4, 4], [4, 4, 4, 4, 4, 4])
    board = fragility.cell_leaderboard(cells, ["A", "B"])
    (pair,) = board["pairs"]
    assert pair["count"] is None and pair["reason"] == fragility.EQ1_RULE and pair["one_per_instance"]
    assert not pair["marked"] and board["top"]["reason"] == fragility.EQ1_RULE
    words = "not measurable: one rating per instance, and removing an instance's last rating would change Eq. 1's weighting"
    rows = fragility.display_rows(board)
    assert all(row["count_text"] == words and row["measured"] is False for row in rows)
    markdown = "\n".join(fragility.markdown(board, "ratings"))
    assert words in markdown and "none reverses it" not in markdown and "(not measured)" in markdown
    from evaluation.campaigns import leaderboard

    written = leaderboard.fragility_csv({"fragility": board})
    assert words in written and "count_text" in written.splitlines()[0]
    from django.template.loader import render_to_string

    page = render_to_string("evaluation/_fragility.html", {"fragility": rows, "units": "ratings", "mark": fragility.mark_text(board)})
    assert page.count(words.replace("'", "&#x27;")) == 1 and "none reverses it" not in page and page.count("not measured</td>") == 1  # one pair, rank 1 and adjacent


def test_a_weighted_row_with_ratings_to_spare_that_still_holds_is_not_called_robust():
    """Two ratings per instance: removals down to one are tried, and when they do not reverse the
    order the last ratings, never tried, might: not measured, in other words."""
    cells = _weighted_cells([5, 5, 5], [1, 1, 1], per_instance=2)
    (pair,) = fragility.cell_leaderboard(cells, ["A", "B"])["pairs"]
    assert pair["count"] is None and pair["reason"] == fragility.EQ1_RULE and not pair["one_per_instance"]
    assert fragility.count_text(pair).startswith("not measurable: the removals that keep each instance's last rating")


def test_an_unweighted_pair_no_removal_reverses_still_says_so():
    cells = fragility.report_cells(
        pd.DataFrame([{"system": s, "question": "q", "instance": i, "rater": "r", "value": v} for s, v in (("A", 5), ("B", 1)) for i in range(2)]),
        ["A", "B"], ["q"], 2, np.ones((2, 1, 2)), np.full((2, 1), 4.0), [False, False],
    )
    (row,) = [r for r in fragility.display_rows(fragility.cell_leaderboard(cells, ["A", "B"])) if "adjacent" in r["place"]]
    assert row["count"] is None and row["reason"] == fragility.NONE and row["count_text"] == "none reverses it" and row["measured"]


def test_a_share_reads_to_two_significant_figures():
    # "30.000%" of a large share, and three decimals that say nothing of a tiny one, read as noise.
    assert [fragility.share_text(x) for x in (0.3, 0.024, 0.00037, None)] == ["30%", "2.4%", "0.037%", ""]
    rows = fragility.display_rows({"top": None, "pairs": [{"share": 0.3, "count": 3, "total": 10}]})
    assert rows[0]["share_text"] == "30%"


def test_two_systems_already_level_read_as_level_not_fragile():
    """Equal scores need no removal to be level: the row said '0', '0%' and 'fragile', which reads as an
    order about to flip rather than no order at all. It is 'level' on the page and in the Markdown, never
    marked, and a board stored before (marked) is read the same way."""
    level = {"A": [4.0, 5.0], "B": [5.0, 4.0], "C": [1.0, 1.0]}
    board = fragility.mean_leaderboard(level, ["A", "B", "C"])
    first = board["pairs"][0]
    assert (first["count"], first["marked"]) == (0, False)
    (row,) = [r for r in fragility.display_rows(board) if "adjacent" in r["place"] and r["below"] == "B"]
    assert row["level"] and row["count_text"] == "0: already level (the two score the same), no order to reverse"
    markdown = "\n".join(fragility.markdown(board, "dialogs"))
    assert "| rank 1, adjacent | A | B | 0: already level (the two score the same), no order to reverse | 0% (level) | exact |" in markdown
    stored_before = {**board, "pairs": [{**first, "marked": True}, *board["pairs"][1:]]}
    assert not fragility.display_rows(stored_before)[0]["marked"]


def _listed_pairs(rows):
    return [(row["above"], row["below"]) for row in rows]


def test_a_pair_that_is_rank_1_and_adjacent_is_listed_once_with_both_places_in_every_format():
    """B is the first's nearest challenger and its neighbour: the table listed A over B twice, as
    "rank 1" and as "adjacent". One row names both places, on the page, in the Markdown and the CSV;
    a nearest challenger further down (C) keeps a row of its own."""
    from django.template.loader import render_to_string

    from evaluation.campaigns import leaderboard

    nearest_is_second = fragility.mean_leaderboard({"A": [5.0, 5.0, 5.0, 4.0], "B": [4.0] * 4, "C": [1.0] * 4}, ["A", "B", "C"])
    assert (nearest_is_second["top"]["above"], nearest_is_second["top"]["below"]) == ("A", "B")
    rows = fragility.display_rows(nearest_is_second)
    assert [(row["place"], row["above"], row["below"]) for row in rows] == [("rank 1, adjacent", "A", "B"), ("adjacent", "B", "C")]
    markdown = fragility.markdown(nearest_is_second, "dialogs")
    assert [line.split(" | ")[1:3] for line in markdown if line.startswith("| rank 1") or line.startswith("| adjacent")] == [["A", "B"], ["B", "C"]]
    assert markdown[-2].startswith("| rank 1, adjacent | A | B | 3 |")  # three of A's 5s
    written = csv.DictReader(io.StringIO(leaderboard.fragility_csv({"fragility": nearest_is_second})))
    assert [(row["place"], row["above"], row["below"]) for row in written] == [("rank 1, adjacent", "A", "B"), ("adjacent", "B", "C")]
    page = render_to_string("evaluation/_fragility.html", {"fragility": rows, "units": "dialogs", "mark": fragility.mark_text(nearest_is_second)})
    assert page.count("<td>A</td><td>B</td>") == 1 and "<td>rank 1, adjacent</td>" in page

    nearest_is_third = fragility.mean_leaderboard({"A": [5.0] * 4, "B": [4.9] * 4, "C": [5.0, 5.0, 5.0, 1.0]}, ["A", "B", "C"])
    assert [(row["place"], row["above"], row["below"]) for row in fragility.display_rows(nearest_is_third)] == [
        ("rank 1", "A", "C"), ("adjacent", "A", "B"), ("adjacent", "B", "C")]


def test_a_merged_pair_says_when_its_count_is_exact_for_the_pair_but_a_bound_for_rank_1():
    """Bradley-Terry's rank 1 is always a bound (a removal moves every strength): the merged row keeps
    the pair's own method and says what it is for rank 1."""
    board = {"top": {"above": "A", "below": "B", "count": 2, "share": 0.2, "total": 10, "method": "greedy bound", "marked": True},
             "pairs": [{"above": "A", "below": "B", "count": 2, "share": 0.2, "total": 10, "method": "exact", "marked": True}]}
    (row,) = fragility.display_rows(board)
    assert row["place"] == "rank 1, adjacent" and row["method"] == "exact (as rank 1: greedy bound)"
