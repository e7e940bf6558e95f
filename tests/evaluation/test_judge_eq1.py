"""The judge report's intervals are on the leaderboard's statistic (issue 20, item 1): where
detection applies, Eq. 1's S_f, a ratio, linearised (`judges.eq1_pseudo_values`); checked by a
seeded simulation with known truth in which Eq. 1 and plain means order the systems differently."""
import numpy as np
import pandas as pd
import pytest

from evaluation.stats import judges, ppi, report

N = 600
SYSTEMS = ("recall", "precise", "middle")
# Mean human score on a knowledge-seeking instance, and the share of seeking / non-seeking
# instances the system predicts as seeking. `precise` has the highest mean but finds few seeking
# turns, so Eq. 1 puts it last.
MEANS = {"recall": 3.2, "precise": 4.0, "middle": 3.6}
HIT_RATE = {"recall": 0.9, "precise": 0.4, "middle": 0.7}
FALSE_RATE = {"recall": 0.1, "precise": 0.05, "middle": 0.1}


def detection_case(seed=7, redraw=None):
    """The test set's labels and the systems' predictions. The module's model: the non-seeking
    instances (and how many are seeking) are the test set's, fixed; the seeking instances, their
    detection included, are draws from a population, so a `redraw` seed draws the predictions on
    them afresh (each campaign's test set is a fresh draw of its seeking instances)."""
    rng = np.random.default_rng(seed)
    truth = np.arange(N) < N // 2
    predicted = {s: np.where(truth, rng.random(N) < HIT_RATE[s], rng.random(N) < FALSE_RATE[s]) for s in SYSTEMS}
    if redraw is not None:
        fresh = np.random.default_rng(redraw)
        predicted = {s: np.where(truth, fresh.random(N) < HIT_RATE[s], p) for s, p in predicted.items()}
    return truth, predicted


def true_eq1(truth, predicted):
    """Eq. 1's S_f in the population: 2 E[s b] / (E[pred] + E[truth]) with the seeking instances'
    detection and scores at their population rates, the non-seeking predictions the test set's."""
    seeking = truth.sum()
    return {
        s: 2 * MEANS[s] * HIT_RATE[s] * seeking / ((predicted[s] & ~truth).sum() + HIT_RATE[s] * seeking + seeking) for s in SYSTEMS
    }


def campaign(rng, truth, predicted, share=0.3, raters=3, judge_noise=0.5, judge_bias=0.3, perfect=False, unrated=0.0, questions=("q",)):
    """One campaign: instance and system-by-instance effects, `raters` noisy ratings per question on
    each evaluated instance a system needs rated (knowledge-seeking, predicted) except a share
    `unrated` of them, left unrated at random (a campaign not finished yet), and a judge on every
    instance of every system (`perfect`: the item's true mean score)."""
    instance = rng.normal(0, 0.6, N)
    evaluated = np.flatnonzero(rng.random(N) < share)
    rating_rows, judge_rows = [], []
    for s in SYSTEMS:
        mu = MEANS[s] + instance + rng.normal(0, 0.4, N)
        need = evaluated[(truth & predicted[s])[evaluated]]
        if unrated:
            need = need[rng.random(len(need)) >= unrated]
        for question in questions:
            judged = mu if perfect else mu + judge_bias + rng.normal(0, judge_noise, N)
            judge_rows.append(pd.DataFrame({"system": s, "instance": np.arange(N), "question": question, "score": judged}))
            values = mu[need][:, None] + rng.normal(0, 0.9, (len(need), raters))
            rating_rows.append(pd.DataFrame({
                "system": s, "instance": np.repeat(need, raters), "question": question,
                "rater": np.tile([f"r{k}" for k in range(raters)], len(need)), "value": values.ravel(),
            }))
    return pd.concat(rating_rows, ignore_index=True), pd.concat(judge_rows, ignore_index=True), evaluated


def intervals(columns, system, lam):
    """The report's interval of `system` on its columns, as `judges.build` computes it."""
    rows = columns.loc[system]
    return ppi.mean_interval(*ppi.split(rows["human"].to_numpy(), rows["judge"].to_numpy()), lam=lam)


def unfinished_campaign(seed=11):
    """A sample evaluated, detection with misses and false positives, a third of the items that
    need a rating still unrated and a few items rated on one question only (1-5 scale)."""
    truth, predicted = detection_case()
    ratings, judge, evaluated = campaign(np.random.default_rng(seed), truth, predicted, unrated=0.35, questions=("q", "r"))
    half_rated = ratings[(ratings["question"] == "r")][["system", "instance"]].drop_duplicates().sample(n=6, random_state=3)
    ratings = ratings.merge(half_rated.assign(question="r"), how="left", indicator=True)
    ratings = ratings[ratings.pop("_merge") == "left_only"]
    ratings["value"] = ratings["value"].round().clip(1, 5)
    return truth, predicted, ratings, judge, evaluated


def test_eq1_and_plain_means_order_the_simulated_systems_differently():
    truth, predicted = detection_case()
    truth_eq1 = true_eq1(truth, predicted)
    assert sorted(SYSTEMS, key=lambda s: -truth_eq1[s]) == ["recall", "middle", "precise"]
    assert sorted(SYSTEMS, key=lambda s: -MEANS[s]) == ["precise", "middle", "recall"]


def test_the_human_only_centre_is_the_leaderboards_score_and_orders_the_report():
    truth, predicted = detection_case()
    ratings, judge, evaluated = campaign(np.random.default_rng(1), truth, predicted)
    ratings["value"] = ratings["value"].round().clip(1, 5)  # the leaderboard's report reads a 1-5 scale
    statistic = judges.ranked_statistic(ratings, ["q"], truth, predicted, evaluated)
    board = report.build_report(
        ratings, truth, [report.SystemSpec(s, predicted=predicted[s]) for s in SYSTEMS], questions=["q"], evaluated=evaluated,
    )
    detection = judges.Detection(truth, predicted, evaluated, ("q",))
    body = judges.build(ratings, judge, list(SYSTEMS), ranked_by=statistic, detection=detection)
    rows = {row["system"]: row for row in body["systems"]}
    for row in board["systems"]:
        assert rows[row["system"]]["human_only"]["estimate"] == pytest.approx(row["final"], abs=1e-12)
    # The order is the leaderboard's (not the plain means'), and the top row has the highest centres.
    order = [row["system"] for row in body["systems"]]
    assert order == sorted(SYSTEMS, key=lambda s: -statistic[s]) and order[-1] == "precise"
    assert ratings.groupby("system")["value"].mean().idxmax() == "precise"
    # The human-only centres are the leaderboard's scores, so they run down the table with it (the
    # PPI++ centres move with the judge's scores on the unrated instances; close rows may swap).
    centres = [row["human_only"]["estimate"] for row in body["systems"]]
    assert centres == sorted(centres, reverse=True)
    assert "Eq. 1" in body["intervals_on"]
    # Adjacent pairs are differences of the same statistic.
    first = body["pairs"][0]
    assert first["human_only"]["estimate"] == pytest.approx(rows["recall"]["human_only"]["estimate"] - rows["middle"]["human_only"]["estimate"])
    assert {row["system"] for row in body["rank_sets"]["ppi"]} == set(SYSTEMS)


def test_in_an_unfinished_campaign_the_human_only_centre_is_still_the_leaderboards_score():
    """A sample of the instances evaluated, detection with misses and false positives, a third of
    the items that need a rating still unrated and a few items rated on one question only: the
    leaderboard weights the rated detected instances up to their stratum, and the report's
    human-only centre is its score, not a re-weighting of its own."""
    truth, predicted, ratings, judge, evaluated = unfinished_campaign()
    sampled = np.isin(np.arange(N), evaluated)
    for s in SYSTEMS:
        rated = set(ratings.loc[ratings["system"] == s, "instance"])
        needed = truth & predicted[s] & sampled
        assert 0 < len(rated) < needed.sum(), s  # unfinished
        assert (truth & ~predicted[s]).any() and (~truth & predicted[s]).any(), s  # misses and false positives

    statistic = judges.ranked_statistic(ratings, ["q", "r"], truth, predicted, evaluated)
    board = report.build_report(
        ratings, truth, [report.SystemSpec(s, predicted=predicted[s]) for s in SYSTEMS], questions=["q", "r"], evaluated=evaluated,
    )
    body = judges.build(ratings, judge, list(SYSTEMS), ranked_by=statistic, detection=judges.Detection(truth, predicted, evaluated, ("q", "r")))
    rows = {row["system"]: row for row in body["systems"]}
    finals = {row["system"]: row["final"] for row in board["systems"]}
    for s in SYSTEMS:
        assert rows[s]["human_only"]["estimate"] == pytest.approx(statistic[s], abs=1e-12), s
        assert statistic[s] == pytest.approx(finals[s], abs=1e-12), s
        assert rows[s]["ppi"]["unlabelled"] > 0 and rows[s]["ppi"]["width"] < rows[s]["human_only"]["width"], s
    assert [row["system"] for row in body["systems"]] == sorted(SYSTEMS, key=lambda s: -statistic[s])
    assert {row["system"] for row in body["rank_sets"]["ppi"]} == set(SYSTEMS)


def test_in_an_unfinished_campaign_the_adjacent_pairs_are_differences_of_the_leaderboards_scores():
    """Each system is rated on its own instances (the ones it predicts as seeking, a third of them
    still unrated): the pair's human-only centre is the difference of the two leaderboard scores,
    not a difference on the instances both happen to have."""
    truth, predicted, ratings, judge, evaluated = unfinished_campaign()
    rated = {s: set(ratings.loc[ratings["system"] == s, "instance"]) for s in SYSTEMS}
    assert rated["recall"] != rated["middle"] and rated["middle"] != rated["precise"]
    statistic = judges.ranked_statistic(ratings, ["q", "r"], truth, predicted, evaluated)
    body = judges.build(ratings, judge, list(SYSTEMS), ranked_by=statistic, detection=judges.Detection(truth, predicted, evaluated, ("q", "r")))
    order = [row["system"] for row in body["systems"]]
    assert [(pair["a"], pair["b"]) for pair in body["pairs"]] == list(zip(order, order[1:], strict=False))
    for pair in body["pairs"]:
        assert pair["human_only"]["estimate"] == pytest.approx(statistic[pair["a"]] - statistic[pair["b"]], abs=1e-12), pair
        human_only, combined = pair["human_only"], pair["ppi"]
        assert human_only["low"] < human_only["estimate"] < human_only["high"]
        assert combined["unlabelled"] > 0 and combined["width"] <= human_only["width"] + 1e-12, pair


def test_in_an_unfinished_campaign_the_human_only_rank_sets_rank_the_leaderboards_scores():
    truth, predicted, ratings, judge, evaluated = unfinished_campaign()
    statistic = judges.ranked_statistic(ratings, ["q", "r"], truth, predicted, evaluated)
    body = judges.build(ratings, judge, list(SYSTEMS), ranked_by=statistic, detection=judges.Detection(truth, predicted, evaluated, ("q", "r")))
    sets = body["rank_sets"]
    assert {row["system"] for row in sets["human_only"]} == set(SYSTEMS)
    for row in sets["human_only"]:
        assert row["estimate"] == pytest.approx(statistic[row["system"]], abs=1e-12), row
    rows = {row["system"]: row for row in body["systems"]}
    for row in sets["ppi"]:  # PPI (lambda 1) where the table shows PPI++: a centre of the same statistic, inside its interval
        assert rows[row["system"]]["ppi"]["low"] < row["estimate"] < rows[row["system"]]["ppi"]["high"], row
    assert sets["labelled"] > 0 and sets["unlabelled"] > 0


@pytest.mark.parametrize("unrated", [0.0, 0.35], ids=["finished", "unfinished"])
def test_the_intervals_cover_the_true_eq1_score_at_the_nominal_level(unrated):
    """400 campaigns x 3 systems = 1,200 intervals of each kind at 95%: binomial SE
    sqrt(0.95 * 0.05 / 1200) = 0.0063, and the band 0.93..0.97 is about 3 SE either side. Detection
    is imperfect (misses and false positives); `unrated`: the share of the items that need a
    rating still without one, so the leaderboard weights the rated detected instances up."""
    truth, predicted = detection_case()
    truth_eq1 = true_eq1(truth, predicted)
    rng = np.random.default_rng(2024)
    hits = {"human_only": 0, "ppi": 0}
    total = 0
    for draw in range(400):
        truth, predicted = detection_case(redraw=1000 + draw)
        ratings, judge, evaluated = campaign(rng, truth, predicted, unrated=unrated)
        columns = judges.eq1_pseudo_values(ratings, judge, list(SYSTEMS), judges.Detection(truth, predicted, evaluated, ("q",)))
        for s in SYSTEMS:
            for kind, lam in (("human_only", 0), ("ppi", "tuned")):
                interval = intervals(columns, s, lam)
                hits[kind] += interval.low <= truth_eq1[s] <= interval.high
            total += 1
    for kind, count in hits.items():
        assert 0.93 <= count / total <= 0.97, (kind, count / total)


def test_in_an_unfinished_campaign_the_adjacent_pair_intervals_cover_the_true_difference():
    """400 campaigns x 2 adjacent pairs = 800 intervals of each kind at 95%, a third of the items
    that need a rating unrated, so each system is rated on its own instances: binomial SE
    sqrt(0.95 * 0.05 / 800) = 0.0077, the band 0.925..0.975 about 3 SE either side (the two pairs
    of a campaign share a system, so the draws are not quite independent)."""
    truth, predicted = detection_case()
    truth_eq1 = true_eq1(truth, predicted)
    order = sorted(SYSTEMS, key=lambda s: -truth_eq1[s])
    rng = np.random.default_rng(2025)
    hits = {"human_only": 0, "ppi": 0}
    total = 0
    for draw in range(400):
        truth, predicted = detection_case(redraw=3000 + draw)
        ratings, judge, evaluated = campaign(rng, truth, predicted, unrated=0.35)
        columns = judges.eq1_pseudo_values(ratings, judge, list(SYSTEMS), judges.Detection(truth, predicted, evaluated, ("q",)))
        for pair in judges.adjacent_pairs(columns, order):
            difference = truth_eq1[pair["a"]] - truth_eq1[pair["b"]]
            for kind in hits:
                hits[kind] += pair[kind]["low"] <= difference <= pair[kind]["high"]
            total += 1
    assert total == 800
    for kind, count in hits.items():
        assert 0.925 <= count / total <= 0.975, (kind, count / total)


def test_a_perfect_judge_shrinks_the_eq1_intervals():
    truth, predicted = detection_case()
    ratings, judge, evaluated = campaign(np.random.default_rng(5), truth, predicted, perfect=True)
    columns = judges.eq1_pseudo_values(ratings, judge, list(SYSTEMS), judges.Detection(truth, predicted, evaluated, ("q",)))
    for s in SYSTEMS:
        human_only, combined = intervals(columns, s, 0), intervals(columns, s, "tuned")
        assert combined.width < 0.8 * human_only.width, s


def test_without_detection_the_intervals_are_on_plain_means():
    truth, predicted = detection_case()
    ratings, judge, evaluated = campaign(np.random.default_rng(3), truth, predicted)
    plain = judges.build(ratings, judge, list(SYSTEMS))
    unlabelled = judges.build(ratings, judge, list(SYSTEMS), detection=judges.Detection(truth, dict.fromkeys(SYSTEMS), evaluated, ("q",)))
    assert plain["systems"] == unlabelled["systems"] and "plain means" in plain["intervals_on"]
    rated = ratings.groupby(["system", "instance"])["value"].mean().groupby("system").mean()
    for row in plain["systems"]:
        assert row["human_only"]["estimate"] == pytest.approx(rated[row["system"]])
