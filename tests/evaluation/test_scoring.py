"""Scoring of the DSTC9 Track 1 human evaluation: Eq. 1, Eq. 2, finalists, intervals, tests."""
import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from evaluation.stats import scoring
from evaluation.stats.report import SystemSpec, build_report


def ratings_frame(rows):
    return pd.DataFrame(rows, columns=["system", "question", "instance", "rater", "value"])


def test_eq1_hand_example():
    # 6 instances. Truth f  = 1 1 1 1 0 0 (sum f  = 4)
    #              Entry f~ = 1 1 0 0 1 0 (sum f~ = 3)
    # Rated (f*f~ = 1): instance 0 with 5,4,4 -> s = 13/3; instance 1 with 3,3,3 -> s = 3.
    # sum s*f*f~ = 13/3 + 3 = 22/3
    # S_p = (22/3)/3 = 22/9 = 2.444..., S_r = (22/3)/4 = 11/6 = 1.833...
    # S_f = 2*S_p*S_r/(S_p+S_r) = 2*(22/9)*(11/6) / (22/9 + 11/6) = (484/54) / (77/18) = 44/21 = 2.0952...
    truth = np.array([1, 1, 1, 1, 0, 0], dtype=bool)
    predicted = np.array([1, 1, 0, 0, 1, 0], dtype=bool)
    ratings = ratings_frame(
        [("e", "accuracy", 0, r, v) for r, v in zip("abc", (5, 4, 4), strict=False)] + [("e", "accuracy", 1, r, 3) for r in "abc"]
    )
    scores, counts = scoring.instance_score_matrix(ratings, ["e"], ["accuracy"], 6)
    assert scores[0, 0, 0] == pytest.approx(13 / 3) and counts[0, 0, 0] == 3
    result = scoring.system_scores(scoring.eq1_columns(scores, truth, [predicted]))
    assert result["precision"][0, 0] == pytest.approx(22 / 9)
    assert result["recall"][0, 0] == pytest.approx(11 / 6)
    assert result["score"][0, 0] == pytest.approx(44 / 21)


def test_plain_mean_without_detection_predictions():
    truth = np.array([1, 1, 0], dtype=bool)
    ratings = ratings_frame([("gt", "accuracy", 0, "a", 5), ("gt", "accuracy", 1, "a", 2)])
    scores, _ = scoring.instance_score_matrix(ratings, ["gt"], ["accuracy"], 3)
    cols = scoring.eq1_columns(scores, truth, [None])
    assert scoring.system_scores(cols)["score"][0, 0] == pytest.approx(3.5)
    assert not cols.weighted[0]


def test_eq1_reports_unrated_and_ignored_instances():
    truth = np.array([1, 1, 0], dtype=bool)
    predicted = np.array([1, 1, 1], dtype=bool)
    ratings = ratings_frame([("e", "accuracy", 0, "a", 4), ("e", "accuracy", 2, "a", 5)])
    scores, _ = scoring.instance_score_matrix(ratings, ["e"], ["accuracy"], 3)
    cols = scoring.eq1_columns(scores, truth, [predicted])
    assert cols.unrated_detected[0, 0] == 1  # instance 1 is a detected target without ratings
    assert cols.ignored_ratings[0, 0] == 1  # instance 2 is not a true target: Eq. 1 leaves it out


def test_eq2_hand_example_with_ties():
    # metric A: 0.9 0.8 0.8 0.7 -> competition ranks 1 2 2 4
    # metric B:  10  30  20  20 -> ranks 4 1 2 2
    # S = mean(1/rank): e1 (1 + 1/4)/2 = 0.625, e2 (1/2 + 1)/2 = 0.75, e3 (1/2 + 1/2)/2 = 0.5, e4 (1/4 + 1/2)/2 = 0.375
    table = pd.DataFrame({"A": [0.9, 0.8, 0.8, 0.7], "B": [10, 30, 20, 20]}, index=["e1", "e2", "e3", "e4"])
    assert list(scoring.competition_ranks(table["A"])) == [1, 2, 2, 4]
    overall = scoring.mrr_overall(table, ["A", "B"])
    assert overall.to_dict() == pytest.approx({"e1": 0.625, "e2": 0.75, "e3": 0.5, "e4": 0.375})
    # lower-is-better flips the ranks of B: 10 -> 1, 20 -> 2, 20 -> 2, 30 -> 4
    flipped = scoring.mrr_overall(table, ["A", "B"], lower_is_better={"B"})
    assert flipped["e1"] == pytest.approx(1.0) and flipped["e2"] == pytest.approx((0.5 + 0.25) / 2)


def test_eq2_errors_name_the_problem():
    table = pd.DataFrame({"A": [0.9, None]}, index=["e1", "e2"])
    with pytest.raises(ValueError, match="metric 'A' has no value for entry 'e2'"):
        scoring.mrr_overall(table, ["A"])
    with pytest.raises(ValueError, match="unknown metric"):
        scoring.mrr_overall(table, ["nope"])


def test_finalists_take_the_best_entry_of_each_top_team():
    entries = pd.DataFrame(
        [("t1", "e0", 0.5), ("t1", "e1", 0.9), ("t2", "e0", 0.7), ("t3", "e0", 0.6), ("t3", "e1", 0.8), ("t4", "e0", 0.6)],
        columns=["team_id", "entry_id", "overall"],
    )
    chosen = scoring.select_finalists(entries, 2)
    assert list(zip(chosen.team_id, chosen.entry_id, strict=False)) == [("t1", "e1"), ("t3", "e1")]
    assert list(chosen["rank"]) == [1, 2] and not chosen["tied_at_cutoff"].any()
    # t3's best is 0.8 and t2's 0.7; with three places, t2 is in; the 4th place (t4, 0.6) is not tied with it
    assert list(scoring.select_finalists(entries, 3).team_id) == ["t1", "t3", "t2"]
    assert scoring.select_finalists(entries.replace({0.7: 0.6}), 3)["tied_at_cutoff"].all()


def test_holm_hand_example():
    # sorted: 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 = 0.04 -> monotone 0.06
    assert list(scoring.holm([0.01, 0.04, 0.03, 0.005])) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    # 0.5*2 = 1.0 caps at 1; then 0.9*1 = 0.9 is raised to 1.0 to stay monotone
    assert list(scoring.holm([0.5, 0.9])) == pytest.approx([1.0, 1.0])


def _one_system_cols(values):
    scores = np.asarray(values, dtype=float)[None, None, :]
    return scoring.eq1_columns(scores, np.ones(len(values), dtype=bool), [None])


def test_bootstrap_ci_covers_true_mean_about_95_percent_and_is_seeded():
    true_mean, covered = 3.5, 0
    for sim in range(100):
        rng = np.random.default_rng(1000 + sim)
        values = rng.choice([2, 3, 4, 5], size=300, p=[0.15, 0.35, 0.3, 0.2])  # mean 3.55
        values = values - 0.05  # shift so the population mean is exactly 3.5
        boot, _ = scoring.bootstrap_scores(_one_system_cols(values), 1000, seed=sim)
        low, high = scoring.percentile_interval(boot)
        covered += low[0, 0] <= true_mean <= high[0, 0]
    assert 88 <= covered <= 99
    cols = _one_system_cols(np.arange(50) % 5 + 1)
    a, _ = scoring.bootstrap_scores(cols, 1000, seed=4)
    b, _ = scoring.bootstrap_scores(cols, 1000, seed=4)
    c, _ = scoring.bootstrap_scores(cols, 1000, seed=5)
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    with pytest.raises(ValueError, match="at least 1000"):
        scoring.bootstrap_scores(cols, 10)


def test_rank_ranges():
    finals = np.array([[3.0, 2.0, 1.0], [2.0, 3.0, 1.0], [3.0, 2.0, 1.0], [3.0, 3.0, 1.0]] * 10)
    low, high = scoring.bootstrap_rank_ranges(finals)
    assert list(low) == [1, 1, 3] and list(high) == [2, 2, 3]


def test_eq2_sums_reciprocal_ranks_exactly():
    # Rank vectors (1,1,1,3) and (3,1,1,1): the same multiset of ranks, so exactly the same score.
    # In floating point 1 + 1 + 1 + 1/3 and 1/3 + 1 + 1 + 1 differ in the last bit.
    ranks = pd.DataFrame({"m1": [1, 3], "m2": [1, 1], "m3": [1, 1], "m4": [3, 1]}, index=["x", "y"])
    values = -ranks  # higher is better: rank 1 is the largest value
    filler = pd.DataFrame({m: [-2] for m in ranks.columns}, index=["z"])  # a third entry so rank 3 exists
    overall = scoring.mrr_overall(pd.concat([values, filler]), list(ranks.columns))
    assert overall["x"] == overall["y"]
    assert list(scoring.competition_ranks(overall[["x", "y"]])) == [1, 1]


def test_eq2_leaves_out_an_entry_missing_a_metric():
    table = pd.DataFrame({"A": [0.9, None, 0.5], "B": [1, 2, 3]}, index=["e1", "e2", "e3"])
    complete, left_out = scoring.complete_rows(table, ["A", "B"])
    assert list(complete.index) == ["e1", "e3"] and left_out == ["e2"]


def test_sampled_campaign_is_not_deflated():
    # 1000 knowledge-seeking instances, 50 sampled and all rated 4.4, perfect detection: 4.4, not 0.22.
    n = 1000
    truth = np.ones(n, dtype=bool)
    sample = np.arange(0, n, 20)
    ratings = ratings_frame([("e", "accuracy", int(i), f"{r}{i}", v) for i in sample for r, v in zip("abc", (4, 5, 4), strict=False)] +
                            [("e", "accuracy", int(i), f"d{i}", 5) for i in sample[:20]] + [("e", "accuracy", int(i), f"d{i}", 4) for i in sample[20:]])
    report = build_report(ratings, truth, [SystemSpec("e", "entry", truth)], questions=["accuracy"], evaluated=sample)
    row = report["systems"][0]
    assert row["final"] == pytest.approx(ratings.groupby("instance")["value"].mean().mean())
    assert row["questions"]["accuracy"]["precision"] == pytest.approx(row["final"])
    assert row["final_ci_low"] < row["final"] < row["final_ci_high"] and row["final_ci_high"] - row["final_ci_low"] < 0.2


def test_unfinished_campaign_with_imperfect_detection_is_not_deflated():
    # Half the knowledge-seeking turns detected; a rating arrives for only half of those. The turns
    # the entry missed need no rating, so they must not stand in for the detected ones still waiting.
    rng = np.random.default_rng(3)
    n = 400
    truth = np.ones(n, dtype=bool)
    predicted = rng.random(n) < 0.5
    detected = np.flatnonzero(predicted)
    complete = ratings_frame([("e", "accuracy", int(i), "a", 4) for i in detected])
    waiting = rng.random(len(detected)) < 0.5
    unfinished = complete[~waiting]
    specs = [SystemSpec("e", "entry", predicted)]
    full = build_report(complete, truth, specs, questions=["accuracy"])["systems"][0]
    partial = build_report(unfinished, truth, specs, questions=["accuracy"])["systems"][0]
    assert partial["unrated"] == waiting.sum() > 0
    assert partial["final"] == pytest.approx(full["final"])  # 0.72 of it when kept turns were scaled as one block
    assert full["final"] < 4.0  # the missed half still costs recall


def test_unrated_instances_are_left_out_and_counted_and_unrated_rows_say_so():
    truth = np.array([1, 1, 1, 1, 0, 0], dtype=bool)
    ratings = ratings_frame([("e", "accuracy", i, r, 4) for i in (0, 1) for r in "ab"] + [("f", "accuracy", i, r, 3) for i in (0, 1, 2, 3) for r in "ab"])
    systems = [SystemSpec("e", "entry", truth), SystemSpec("f", "entry", truth), SystemSpec("gt", "ground_truth", truth)]
    report = build_report(ratings, truth, systems, questions=["accuracy"])
    rows = {row["system"]: row for row in report["systems"]}
    assert rows["e"]["final"] == pytest.approx(4.0) and rows["e"]["unrated"] == 2  # collection still running
    assert rows["gt"]["final"] is None and not rows["gt"]["rated"]
    assert report["systems"][-1]["system"] == "gt"  # unrated rows last
    assert report["n_unrated"] == 2  # e's two waiting instances; not the 4 of a reference row no one rates
    finished = ratings[ratings["system"] == "f"]
    done = build_report(finished, truth, [SystemSpec("f", "entry", truth), SystemSpec("gt", "ground_truth", truth)], questions=["accuracy"])
    assert done["n_unrated"] == 0  # every entry rated: the campaign is not "still unrated"
    from evaluation.campaigns import leaderboard

    table = leaderboard.to_markdown(report)
    assert "| ref |  | gt (ground truth) | not rated | not rated | 0 | 4 |" in table  # never rated: 4 instances wait


def _campaign(seed=0, n=400, means=(4.4, 4.2, 4.0, 3.6, 4.6)):
    rng = np.random.default_rng(seed)
    truth = rng.random(n) < 0.6
    labels = ["e1", "e2", "e3", "baseline", "ground-truth"]
    kinds = ["entry", "entry", "entry", "baseline", "ground_truth"]
    systems, rows = [], []
    for label, kind, mean in zip(labels, kinds, means, strict=False):
        predicted = truth if kind == "ground_truth" else (truth & (rng.random(n) < 0.95)) | (~truth & (rng.random(n) < 0.05))
        for i in np.flatnonzero(truth & predicted):
            for q in ("appropriateness", "accuracy"):
                for r in range(3):
                    rows.append((label, q, int(i), f"w{rng.integers(0, 12)}-{r}", int(np.clip(round(rng.normal(mean, 0.8)), 1, 5))))
        objective = {"bleu": {"e1": 0.3, "e2": 0.2, "e3": 0.1}.get(label, 0), "r@1": {"e1": 0.8, "e2": 0.9, "e3": 0.7}.get(label, 0)}
        systems.append(SystemSpec(label, kind, predicted, objective if kind == "entry" else {}))
    return ratings_frame(rows).drop_duplicates(["system", "question", "instance", "rater"]), truth, systems


def test_report_is_deterministic_and_ranks_entries_only():
    ratings, truth, systems = _campaign()
    first = build_report(ratings, truth, systems, bootstrap=1000, seed=3)
    second = build_report(ratings, truth, systems, bootstrap=1000, seed=3)
    assert json.dumps(first, sort_keys=True) == json.dumps(second, sort_keys=True)
    rows = {row["system"]: row for row in first["systems"]}
    assert [row["system"] for row in first["systems"]][0] == "ground-truth"  # sorted by final score
    assert rows["ground-truth"]["rank"] is None and rows["baseline"]["rank"] is None
    assert [rows[k]["rank"] for k in ("e1", "e2", "e3")] == [1, 2, 3]  # 0.2 apart on 400 instances: distinct groups
    for row in first["systems"]:
        assert row["final_ci_low"] <= row["final"] <= row["final_ci_high"]
        assert row["final"] == pytest.approx(np.mean([row["questions"][q]["score"] for q in first["questions"]]))
    assert rows["e1"]["rank_low"] <= 1 <= rows["e1"]["rank_high"]
    # Spearman: human order e1 > e2 > e3 equals the BLEU order (rho 1) and not the r@1 order
    assert first["spearman"]["bleu"]["rho"] == pytest.approx(1.0)
    assert first["spearman"]["r@1"]["rho"] == pytest.approx(stats.spearmanr([3, 2, 1], [0.8, 0.9, 0.7]).statistic)
    pairs = {(p["a"], p["b"]): p for p in first["pairwise"]}
    assert pairs[("e1", "baseline")]["significant"] and pairs[("e1", "baseline")]["better"] == "e1"
    assert all(p["p_holm"] >= p["p"] for p in first["pairwise"] if p["p"] is not None)
    for (a, b), p in pairs.items():  # the pairwise table and the ranks tell one story
        if p["better"] == a and rows[a]["rank"] is not None and rows[b]["rank"] is not None:
            assert rows[a]["rank"] < rows[b]["rank"]
        if p["significant"]:
            assert p["ci_low"] > 0 or p["ci_high"] < 0
    assert set(first["agreement"]["accuracy"]["levels"]) == {"ordinal", "interval"}
    assert sum(first["rating_distribution"]["e1"]["accuracy"].values()) == rows["e1"]["questions"]["accuracy"]["ratings"]


def test_report_refuses_unknown_systems_and_bad_instances():
    ratings, truth, systems = _campaign(n=50)
    with pytest.raises(ValueError, match="not in the campaign"):
        build_report(ratings.replace({"e1": "zz"}), truth, systems)
    bad = ratings.copy()
    bad.loc[bad.index[0], "instance"] = 50
    with pytest.raises(ValueError, match="instance indices must lie in 0..49"):
        build_report(bad, truth, systems)


@pytest.mark.django_db
def test_finalists_are_chosen_among_entries_with_outputs_and_the_others_are_named():
    from evaluation.campaigns.services.campaigns import finalist_table
    from evaluation.models import Challenge, Entry, Team, TestSet

    challenge = Challenge.objects.create(name="c")
    test_set = TestSet.objects.create(challenge=challenge, name="t", size=1, labels=[{"target": False}])
    for n, (outputs, score) in enumerate([(None, 0.9), ([{"target": False}], 0.5), ([{"target": False}], 0.4)]):
        team = Team.objects.create(challenge=challenge, team_id=f"team{n}")
        Entry.objects.create(team=team, test_set=test_set, entry_id="entry0", outputs=outputs, objective_scores={"f1": score})
    chosen = finalist_table(test_set, ["f1"], n=1)
    assert list(chosen["team_id"]) == ["team1"]
    assert chosen.attrs["without_outputs"] == ["team0/entry0"]


def test_a_bootstrap_p_is_never_zero_and_holm_then_asks_for_real_evidence():
    """35 of DSTC9's 55 pairs had no replicate beyond 0 at B = 1,000: p was 0, Holm multiplied zero,
    and pairs were called better at a family-wise 5% that 1,000 resamples cannot resolve."""
    from scipy import stats as sp

    from evaluation.stats.scoring import MIN_TAIL_REPLICATES, bootstrap_p, holm

    rng = np.random.default_rng(7)
    noise = rng.standard_normal(1000)
    noise = (noise - noise.mean()) / noise.std(ddof=1)  # SE exactly 1
    three_se = bootstrap_p(3.3 + noise, 3.3)  # too few of 1,000 replicates beyond 0 to count
    assert (3.3 + noise <= 0).sum() < MIN_TAIL_REPLICATES
    counted = 2 * (3.3 + noise <= 0).sum() / 1000
    assert three_se == pytest.approx(max(counted, 2 * sp.norm.sf(3.3))) and three_se > 0
    assert holm([three_se] * 55)[0] > 0.05  # 55 such pairs: none is better at family-wise 5%
    far = bootstrap_p(8 + noise, 8)
    assert 0 < far < 1e-14 and holm([far] * 55)[0] < 0.05  # overwhelming evidence still resolves
    # Where enough replicates lie beyond 0 the bootstrap's own share stands (p < 0.05 exactly when the
    # percentile interval leaves 0 out).
    near = 1.0 + noise
    share = 2 * min((near <= 0).mean(), (near >= 0).mean())
    assert bootstrap_p(near, 1.0) == pytest.approx(share) and (near <= 0).sum() >= MIN_TAIL_REPLICATES
    # More evidence never raises p, across the switch from counting to the normal tail.
    ps = [bootstrap_p(d + noise, d) for d in np.linspace(0, 9, 200)]
    assert all(b <= a + 1e-12 for a, b in zip(ps, ps[1:], strict=False))
    assert bootstrap_p(np.array([np.nan, np.nan]), 1.0) is None
