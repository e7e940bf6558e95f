"""Simulated voting crowds with known truth, to compare the published rule with the model. Pure.

A crowd is honest voters of varying accuracy plus unreliable ones: always-yes voters, random
spammers and a colluding pair (who give the same arbitrary answer to an item). Items are
responses, usable or not. Both rules see the same crowd and the same items:

- majority (published): three votes, re-collect on two against;
- model: the confusion matrices fitted on a warm-up period (as the flag sweep stores them), then
  per item votes one at a time from `start_votes`, deciding once the posterior is `sure` either
  way, otherwise asking one more voter up to `max_votes`.

Used by tests/quality/test_reliability.py (seeded) and `python -m perf reliability`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from . import reliability

FOR, AGAINST = "for", "against"  # the vote type's values, spelled here because this module is pure
LABELS = [AGAINST, FOR]  # sorted, as the fit orders them


@dataclass(frozen=True)
class Crowd:
    kinds: list  # per worker: "honest", "always_yes", "random", "colluder"
    accuracy: np.ndarray  # honest workers' accuracy (others: nan)

    @property
    def bad(self) -> np.ndarray:
        return np.array([k != "honest" for k in self.kinds])


def make_crowd(rng: np.random.Generator, workers: int = 40, unreliable_share: float = 0.3) -> Crowd:
    bad = round(workers * unreliable_share)
    colluders = 2
    always_yes = (bad - colluders + 1) // 2
    random_ = bad - colluders - always_yes
    kinds = ["honest"] * (workers - bad) + ["always_yes"] * always_yes + ["random"] * random_ + ["colluder"] * colluders
    accuracy = np.where(np.array(kinds) == "honest", rng.uniform(0.7, 0.95, workers), np.nan)
    return Crowd(kinds, accuracy)


def vote(crowd: Crowd, worker: int, truth_unusable: bool, item: int, rng: np.random.Generator, collusion: np.ndarray) -> str:
    kind = crowd.kinds[worker]
    if kind == "always_yes":
        return FOR
    if kind == "random":
        return AGAINST if rng.random() < 0.5 else FOR
    if kind == "colluder":
        return AGAINST if collusion[item] else FOR
    right = rng.random() < crowd.accuracy[worker]
    return AGAINST if truth_unusable == right else FOR


def _voters(rng: np.random.Generator, workers: int, n: int) -> np.ndarray:
    return rng.choice(workers, size=n, replace=False)


@dataclass
class Outcome:
    correct: int
    wasted: int  # usable items re-collected
    missed: int  # unusable items passed
    votes: int


def simulate(seed: int = 0, items: int = 600, warmup: int = 600, workers: int = 40, unreliable_share: float = 0.3,
             unusable_share: float = 0.3, start_votes: int = 2, max_votes: int = 5, sure: float = 0.85) -> dict:
    rng = np.random.default_rng(seed)
    crowd = make_crowd(rng, workers, unreliable_share)
    total = warmup + items
    truth = rng.random(total) < unusable_share
    collusion = rng.random(total) < 0.5
    pools = [_voters(rng, workers, max_votes) for _ in range(total)]
    answers = [[vote(crowd, int(w), bool(truth[i]), i, rng, collusion) for w in pools[i]] for i in range(total)]

    # Warm-up: three votes per item, as the published rule collects them; the sweep fits on them.
    rows = [(i, int(w), answers[i][j]) for i in range(warmup) for j, w in enumerate(pools[i][:3])]
    fitted = reliability.fit(pd.DataFrame(rows, columns=reliability.JUDGEMENT_COLUMNS), seed=seed)
    confusions = {w: r.confusion for w, r in fitted.workers.items()}
    against = fitted.labels.index(AGAINST)

    majority = Outcome(0, 0, 0, 0)
    model = Outcome(0, 0, 0, 0)
    model_rows = []
    for i in range(warmup, total):
        down = sum(a == AGAINST for a in answers[i][:3]) >= 2
        _score(majority, down, bool(truth[i]), 3)
        n = start_votes
        while True:
            given = [(int(w), fitted.labels.index(a)) for w, a in zip(pools[i][:n], answers[i][:n], strict=True)]
            p = reliability.posterior(given, confusions, fitted.priors)[against]
            call = reliability.decide(float(p), n, sure=sure, max_votes=max_votes)
            if call != reliability.ASK_MORE:
                break
            n += 1
        _score(model, call == reliability.RECOLLECT, bool(truth[i]), n)
        model_rows += [(i, int(w), a) for w, a in zip(pools[i][:n], answers[i][:n], strict=True)]

    # The next sweep fits every vote collected so far; its flags are what a reviewer sees.
    swept = reliability.fit(pd.DataFrame(rows + model_rows, columns=reliability.JUDGEMENT_COLUMNS), seed=seed)
    flagged = {w for w, r in swept.workers.items() if reliability.unreliable_flag(r, swept.labels, "votes")}
    bad = crowd.bad
    spammers = {w for w in range(workers) if crowd.kinds[w] in ("always_yes", "random")}
    honest = {w for w in range(workers) if not bad[w]}
    return {
        "items": items, "workers": workers, "unreliable_share": unreliable_share,
        "majority": vars(majority), "model": vars(model),
        "spammer_recall": len(flagged & spammers) / len(spammers) if spammers else 1.0,
        "honest_flagged_share": len(flagged & honest) / len(honest) if honest else 0.0,
        "colluders_flagged": len(flagged & {w for w in range(workers) if crowd.kinds[w] == "colluder"}),
        "bad_recall": len(flagged & {w for w in range(workers) if bad[w]}) / max(1, int(bad.sum())),
    }


def _score(outcome: Outcome, recollected: bool, unusable: bool, votes: int) -> None:
    outcome.votes += votes
    if recollected == unusable:
        outcome.correct += 1
    elif recollected:
        outcome.wasted += 1
    else:
        outcome.missed += 1
