"""Who to believe: worker reliability from categorical judgements (issue 22). Pure: no Django.

The input is one table of judgements (`JUDGEMENT_COLUMNS`): `task` (what is judged: a voted part
of a response, a pairwise pair, one question of a questionnaire item), `worker`, `label` (the
answer given), and optionally a `gold` table (task -> known label) of answers known to be right.

`fit` estimates Dawid-Skene (1979) confusion matrices by EM (`dawid_skene`: crowd-kit's steps in
numpy, checked against crowd-kit in the tests). From the fit come:

- per task: the posterior outcome, its probability (confidence) and the majority beside it;
- per worker: the accuracy (the share of answers that are right) and a *spammer score* (Raykar &
  Yu 2012 in spirit): how much more often the worker gives a label when it is true than when it
  is not. 0 means the answers do not depend on the item (a random spammer and an always-yes voter
  alike, whatever their raw accuracy); 1 means perfect; below 0, worse than chance (down to
  -1/(k-1): -1 for two labels, where it is sensitivity + specificity - 1).

Each figure and its interval come from one model. The true label of a judged task is inferred,
not known: `sampled_counts` draws every task's label from the Bayesian Dawid-Skene posterior
(Gibbs sampling started at the EM's answer), so a worker is never scored against a truth taken as
certain that their own answer helped make. Each draw gives hard counts with their Jeffreys
posterior; the figure and its interval are the mixture's over the draws. Accuracy: Beta(right +
1/2, wrong + 1/2), its mean the figure, its 2.5% and 97.5% quantiles the interval; a record with
nothing wrong (or nothing right) in every draw takes the end of the scale as that end of the
interval, as the Jeffreys interval does (Brown, Cai & DasGupta 2001), so a worker who could be
perfect is not ruled out. Spammer score: each confusion row Dirichlet(counts + 1/2), the score of
the posterior mean (the score is linear in the rows, so this is the posterior mean of the score)
and the quantiles of the score over `DRAWS` draws. So the figure always lies inside its interval
and both lie on the score's scale. Gold tasks keep their label in every draw; with every task's
truth known this is one Jeffreys posterior. Coverage on simulated workers of known reliability,
with truth known and without: tests/quality/test_reliability.py.

`posterior` and `decide` turn stored confusion matrices into a decision for one voted item with no
fit at all, so voting by the model costs no model fit in the request.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from quorum.lazy_modules import lazy

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
else:
    np = lazy("numpy")
    pd = lazy("pandas")

JUDGEMENT_COLUMNS = ["task", "worker", "label"]

#: Answers a worker needs before a reliability flag may be raised: below this the interval is too
#: wide to tell a careless worker from an unlucky one.
MIN_ANSWERS = 20
#: Flag as unreliable when the upper end of the spammer score's interval is below this: the worker
#: is then confidently worse than an honest voter who is right 70% of the time on either label
#: (whose score is 0.4).
SPAMMER_UPPER = 0.4
#: The confusion matrix assumed for a voter the model has not seen: right 75% of the time on either
#: label. Deliberately modest, so one unknown voter cannot settle an item alone.
DEFAULT_ACCURACY = 0.75
INTERVAL = 0.95
#: Dirichlet draws per worker for the spammer score's interval (the 2.5% quantile of 200 draws
#: rests on 5 of them; of 4000, on 100).
DRAWS = 4000
#: Draws of the judged tasks' true labels from their posterior (`sampled_counts`): the spammer
#: score's `DRAWS` are shared among them (80 each).
IMPUTATIONS = 50
#: Workers whose Dirichlet draws are made at once (`spammer_estimate`): about 16,000 numbers each.
WORKERS_PER_CHUNK = 256
#: Gibbs sweeps dropped before the first kept draw (the chain starts at the EM's answer, already
#: near the posterior's mode), and sweeps between kept draws.
GIBBS_BURN_IN = 50
GIBBS_THIN = 5
#: The sampler's prior on each confusion row, Dirichlet(1, ..., 1): it draws only the tasks' labels,
#: which Jeffreys' pull towards 0 and 1 makes look surer than they are (3 answers a task: 92.5%
#: coverage of the spammer score with 1/2, 93.2% with 1; docs/measurements.md).
GIBBS_PRIOR = 1.0
#: The Jeffreys prior's pseudo-count per cell (Beta(1/2, 1/2), Dirichlet(1/2, ..., 1/2)).
PRIOR = 0.5


@dataclass
class WorkerReliability:
    worker: object
    answers: int
    accuracy: float  # share of answers that are right: the posterior mean of `accuracy_interval`'s model
    accuracy_interval: tuple[float, float]
    spammer_score: float  # 0: answers unrelated to the item; 1: perfect; <0 worse than chance
    spammer_interval: tuple[float, float]
    confusion: list[list[float]]  # [true label][answer]: P(answer | true label), the EM's (voting uses it)
    label_counts: dict = field(default_factory=dict)  # answer -> how many times given

    def as_json(self) -> dict:
        return {
            "answers": int(self.answers), "accuracy": round(float(self.accuracy), 4),
            "accuracy_interval": [round(float(x), 4) for x in self.accuracy_interval],
            "spammer_score": round(float(self.spammer_score), 4),
            "spammer_interval": [round(float(x), 4) for x in self.spammer_interval],
            "confusion": [[round(float(p), 4) for p in row] for row in self.confusion],
            "label_counts": {str(k): int(v) for k, v in self.label_counts.items()},
        }


@dataclass
class ReliabilityFit:
    labels: list  # the label values, in the order of every matrix row and column
    priors: list[float]
    #: task -> {"outcome", "confidence", "majority", "majority_share", "answers"}
    tasks: dict = field(default_factory=dict)
    workers: dict = field(default_factory=dict)  # worker -> WorkerReliability
    iterations: int = 0

    def as_json(self) -> dict:
        return {
            "labels": [str(x) for x in self.labels], "priors": [round(float(p), 4) for p in self.priors],
            "tasks": {str(t): v for t, v in self.tasks.items()},
            "workers": {str(w): r.as_json() for w, r in self.workers.items()},
            "iterations": int(self.iterations),
        }


def majority(judgements: pd.DataFrame) -> pd.DataFrame:
    """Per task the most given label (ties: the first label in sorted order) and its share."""
    counts = judgements.groupby(["task", "label"]).size().unstack(fill_value=0)
    return pd.DataFrame({"majority": counts.idxmax(axis=1), "share": counts.max(axis=1) / counts.sum(axis=1), "answers": counts.sum(axis=1)})


def fit(judgements: pd.DataFrame, gold: Mapping | None = None, *, n_iter: int = 100, seed: int = 0) -> ReliabilityFit:
    """Dawid-Skene over the judgements, gold answers held as known truth."""
    from . import dawid_skene

    data = judgements[JUDGEMENT_COLUMNS].astype({"label": str})
    if data.empty:
        return ReliabilityFit(labels=[], priors=[])
    true_labels = None
    if gold:
        judged = set(data["task"])
        known = {t: str(v) for t, v in gold.items() if t in judged}
        true_labels = pd.Series(known, dtype=object) if known else None
    model = dawid_skene.fit(data, true_labels, n_iter=n_iter)
    labels = model.labels
    result = ReliabilityFit(labels=labels, priors=model.priors.tolist(), iterations=model.iterations)
    result.tasks = _task_outcomes(data, pd.DataFrame(model.probas, index=model.tasks, columns=labels), labels)
    result.workers = _worker_reliability(data, model.probas, model.confusion, labels, seed=seed)
    return result


def _task_outcomes(data: pd.DataFrame, probas: pd.DataFrame, labels: list) -> dict:
    major = majority(data)
    values = probas.to_numpy()
    best = values.argmax(axis=1)
    out = {}
    for task, b, p, m, s, n in zip(probas.index.tolist(), best.tolist(), values.max(axis=1).tolist(),
                                   major["majority"].reindex(probas.index).tolist(),
                                   major["share"].reindex(probas.index).tolist(),
                                   major["answers"].reindex(probas.index).tolist(), strict=True):
        out[task] = {"outcome": labels[b], "confidence": round(float(p), 4), "majority": m,
                     "majority_share": round(float(s), 4), "answers": int(n)}
    return out


def worker_reliability(data: pd.DataFrame, probas: pd.DataFrame, errors: pd.DataFrame, labels: list,
                       seed: int = 0) -> dict:
    """Per worker: accuracy and spammer score, each the posterior mean with its equal-tailed
    interval, from tasks' posteriors (`probas`, task x label) and confusion matrices in crowd-kit's
    form (`errors`: rows worker and answer, columns true label); `_worker_reliability` says how."""
    k = len(labels)
    workers = pd.factorize(data["worker"])[1]
    confusion = np.stack([_confusion_of(errors, w, labels) for w in workers]) if len(workers) else np.zeros((0, k, k))
    post = probas.reindex(pd.factorize(data["task"])[1]).to_numpy()
    return _worker_reliability(data, post, confusion, labels, seed=seed)


def _worker_reliability(data: pd.DataFrame, post: np.ndarray, confusion: np.ndarray, labels: list, seed: int = 0) -> dict:
    """Per worker: accuracy and spammer score, each the posterior mean with its equal-tailed
    interval. `post` [task, label] and `confusion` [worker, true, answer] are in the order tasks
    and workers first appear in `data`. The true label of each judged task is not known but
    inferred: every task's label is drawn `IMPUTATIONS` times from the Bayesian Dawid-Skene
    posterior (`sampled_counts`); each draw gives hard counts with their Jeffreys posterior (`share_estimate`, `spammer_estimate`), and the
    figure and its interval are those of the mixture. With known truth (gold) every draw is the same
    and this is one Jeffreys posterior."""
    k = len(labels)
    label_index = {v: i for i, v in enumerate(labels)}
    answer = data["label"].map(label_index).to_numpy()
    worker_codes, workers = pd.factorize(data["worker"])
    n_workers = len(workers)
    task_codes, _tasks = pd.factorize(data["task"])
    counts = sampled_counts(post, task_codes, worker_codes, answer, n_workers, seed=seed)  # [draw, worker, true, answer]
    right = np.einsum("mwkk->mw", counts)
    accuracy, low, high = share_estimate(right, counts.sum(axis=(2, 3))[0])
    score, s_low, s_high = spammer_estimate(counts, seed)
    given = np.zeros((n_workers, k), dtype=int)
    np.add.at(given, (worker_codes, answer), 1)
    out = {}
    for i, w in enumerate(workers.tolist()):
        out[w] = WorkerReliability(
            worker=w, answers=int(given[i].sum()), accuracy=float(accuracy[i]),
            accuracy_interval=(float(low[i]), float(high[i])), spammer_score=float(score[i]),
            spammer_interval=(float(s_low[i]), float(s_high[i])), confusion=confusion[i].tolist(),
            label_counts={labels[a]: int(given[i, a]) for a in range(k)},
        )
    return out


def sampled_counts(post: np.ndarray, task_codes: np.ndarray, worker_codes: np.ndarray, answer: np.ndarray,
                   n_workers: int, seed: int = 0) -> np.ndarray:
    """[IMPUTATIONS, W, k, k] counts ([true][answer]) per worker under draws of every task's true
    label from the Bayesian Dawid-Skene posterior, by Gibbs sampling from the EM's answer: each
    sweep draws every worker's confusion rows (Dirichlet(counts + 1/2)) and the label shares, then
    every task's label given them and its answers. The EM's own posteriors (`post`, [T, k]) hold the
    workers' matrices at their estimates, which pulls each task towards the answers of whoever
    seems good and credits them with agreeing with themselves: the intervals built on them covered
    about 87% with 5 answers a task and 74% with 3. A task whose label is certain (gold) keeps it."""
    n_tasks, k = post.shape
    if n_workers == 0 or k == 0:
        return np.zeros((IMPUTATIONS, n_workers, k, k))
    rng = np.random.default_rng(seed)
    fixed = post.max(axis=1) >= 1 - 1e-12
    labels = post.argmax(axis=1)
    kept = []
    cell_of_answer = worker_codes * k * k + answer  # + true * k: the flat cell of a judgement
    for sweep in range(GIBBS_BURN_IN + IMPUTATIONS * GIBBS_THIN):
        counts = np.bincount(cell_of_answer + labels[task_codes] * k,
                             minlength=n_workers * k * k).reshape(n_workers, k, k).astype(float)
        if sweep >= GIBBS_BURN_IN and (sweep - GIBBS_BURN_IN) % GIBBS_THIN == 0:
            kept.append(counts)
        rows = rng.gamma(counts + GIBBS_PRIOR)
        log_confusion = np.log(rows / rows.sum(axis=-1, keepdims=True)).ravel()
        shares = rng.gamma(np.bincount(labels, minlength=k) + PRIOR)
        log_share = np.log(shares / shares.sum())
        # [label, task]: a row per label, as numpy reduces over an axis of 2 or 3 far slower.
        log_post = np.stack([log_share[c] + np.bincount(task_codes, weights=log_confusion[cell_of_answer + c * k],
                                                        minlength=n_tasks) for c in range(k)])
        # A draw from softmax(log_post) by its inverse CDF (half the cost of Gumbel-max's argmax).
        top = log_post[0].copy()
        for c in range(1, k):
            np.maximum(top, log_post[c], out=top)
        cumulative = np.exp(log_post - top)
        for c in range(1, k):
            cumulative[c] += cumulative[c - 1]
        point = rng.random(n_tasks) * cumulative[-1]
        drawn = np.zeros(n_tasks, dtype=labels.dtype)
        for c in range(k):
            drawn += point >= cumulative[c]
        labels = np.where(fixed, labels, drawn)
    return np.stack(kept)


def share_estimate(successes, trials, level: float = INTERVAL) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(mean, low, high) of a share from (soft) counts: the Jeffreys posterior Beta(x + 1/2,
    n - x + 1/2), its mean and equal-tailed quantiles; the lower end is 0 when nothing succeeded
    and the upper end 1 when nothing failed (Brown, Cai & DasGupta 2001), so a perfect record
    keeps 1 in its interval. No trials: 0 with the interval [0, 1] (nothing is known).
    `successes` [D, W] (draws of the counts, as `sampled_counts` gives) makes it the mixture of
    the draws' posteriors: their mean, and the quantiles of the Beta with the mixture's mean and
    variance (exact for one posterior, and the mixtures of near neighbours here are near a Beta;
    scipy has no mixture quantile, and bisecting the mixture's CDF cost seconds on a large job);
    an end at 0 or 1 only where every draw has it."""
    from scipy import stats  # here: web workers that never fit a model skip scipy

    n = np.atleast_1d(np.asarray(trials, dtype=float))
    x = np.asarray(successes, dtype=float)
    x = np.clip(x.reshape(-1, n.shape[0]) if x.ndim > 1 else np.atleast_1d(x)[None, :], 0.0, n)
    a, b = x + PRIOR, n - x + PRIOR
    means = a / (a + b)
    mean = means.mean(axis=0)
    # The mixture's variance: the draws' own variances plus the spread of their means.
    variance = (a * b / ((a + b) ** 2 * (a + b + 1)) + means ** 2).mean(axis=0) - mean ** 2
    size = mean * (1 - mean) / np.maximum(variance, 1e-15) - 1
    tail = (1 - level) / 2
    low, high = stats.beta.ppf(tail, mean * size, (1 - mean) * size), stats.beta.ppf(1 - tail, mean * size, (1 - mean) * size)
    eps = 1e-9 * np.maximum(n, 1)
    low = np.where((x <= eps).all(axis=0), 0.0, low)
    high = np.where((n - x <= eps).all(axis=0), 1.0, high)
    none = n <= 0
    return np.where(none, 0.0, mean), np.where(none, 0.0, np.minimum(low, mean)), np.where(none, 1.0, np.maximum(high, mean))


def spammer_estimate(counts: np.ndarray, seed: int = 0, level: float = INTERVAL) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(score, low, high) per worker of [W, k, k] counts ([true][answer]), or [D, W, k, k] draws of
    them (`sampled_counts`): each confusion row Dirichlet(counts + 1/2), `DRAWS` draws shared
    equally among the count draws; the score of the posterior mean confusion (the score is linear
    in each row, so this is the posterior mean of the score), averaged over the count draws, and
    the equal-tailed quantiles of the draws. A label the worker never met (an empty row) is the
    prior's, as it should be: no evidence. Drawn for `WORKERS_PER_CHUNK` workers at a time, so a
    job with thousands of workers needs tens of megabytes, not gigabytes."""
    counts = np.asarray(counts, dtype=float)
    if counts.ndim == 3:
        counts = counts[None, ...]
    if counts.shape[1] == 0:
        return np.zeros(0), np.zeros(0), np.zeros(0)
    posterior = counts + PRIOR
    score = spammer_score(posterior / posterior.sum(axis=-1, keepdims=True)).mean(axis=0)
    rng = np.random.default_rng(seed)
    per_draw = max(DRAWS // counts.shape[0], 1)
    tail = (1 - level) / 2
    low, high = np.empty(counts.shape[1]), np.empty(counts.shape[1])
    for start in range(0, counts.shape[1], WORKERS_PER_CHUNK):
        part = posterior[:, start:start + WORKERS_PER_CHUNK]
        draws = rng.gamma(np.broadcast_to(part[:, None, ...], (part.shape[0], per_draw, *part.shape[1:])))
        draws /= _last_axis_sum(draws)[..., None]
        scores = spammer_score(draws).reshape(-1, part.shape[1])
        low[start:start + part.shape[1]], high[start:start + part.shape[1]] = np.quantile(scores, [tail, 1 - tail], axis=0)
    k = counts.shape[-1]
    diagonal = np.einsum("dwkk->dw", counts)
    total = counts.sum(axis=(2, 3))
    eps = 1e-9 * np.maximum(total, 1)
    high = np.where((total - diagonal <= eps).all(axis=0), 1.0, high)
    low = np.where((diagonal <= eps).all(axis=0), -1.0 / max(k - 1, 1), low)
    # The mean of a skewed posterior can pass a quantile only by a draw's noise; keep it inside.
    return score, np.minimum(low, score), np.maximum(high, score)


def _confusion_of(errors: pd.DataFrame, worker, labels: list) -> np.ndarray:
    """crowd-kit's errors_ (rows: worker and answer; columns: true label) as [true][answer]."""
    block = errors.loc[worker].reindex(index=labels, fill_value=0.0).to_numpy().T
    sums = block.sum(axis=1, keepdims=True)
    return np.divide(block, sums, out=np.full_like(block, 1 / len(labels)), where=sums > 0)


def spammer_score(confusion: np.ndarray) -> np.ndarray:
    """How much more often each [..., k, k] confusion matrix ([true][answer]) gives a label when it
    is true than when it is not, averaged over labels: (1/k) sum_c (C[c, c] - mean_{t != c} C[t, c]).
    0 when every row is the same distribution (answers unrelated to the item, whatever the bias),
    1 when perfect, negative when worse than chance. For two labels: sensitivity + specificity - 1."""
    confusion = np.asarray(confusion, dtype=float)
    k = confusion.shape[-1]
    if k < 2:
        return np.zeros(confusion.shape[:-2])
    # sum_c C[c, c] - sum_{t != c} C[t, c] / (k - 1), a cell at a time: numpy's reductions over
    # an axis of 2 or 3 cost far more than these additions on the millions of draws given here.
    total = np.zeros(confusion.shape[:-2])
    for t in range(k):
        for c in range(k):
            if t == c:
                total += confusion[..., t, c]
            else:
                total -= confusion[..., t, c] / (k - 1)
    return total / k


def _last_axis_sum(x: np.ndarray) -> np.ndarray:
    """x.sum(axis=-1) over a short last axis, a slice at a time (see `spammer_score`)."""
    total = x[..., 0].copy()
    for c in range(1, x.shape[-1]):
        total += x[..., c]
    return total


# --- Flags ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReliabilityFlag:
    code: str
    message: str
    value: float
    count: int


def unreliable_flag(r: WorkerReliability, labels: Sequence, what: str = "answers") -> ReliabilityFlag | None:
    """"unreliable": enough answers and a spammer score whose interval lies low, with the evidence."""
    if r.answers < MIN_ANSWERS or r.spammer_interval[1] >= SPAMMER_UPPER:
        return None
    return ReliabilityFlag("unreliable", _evidence(r, list(labels), what), r.spammer_score, r.answers)


def follows_the_item(r: WorkerReliability) -> bool:
    """Enough answers, and a spammer score at least an honest 70%-accurate worker's: the answers
    depend on the item, whatever their mix."""
    return r.answers >= MIN_ANSWERS and r.spammer_score >= SPAMMER_UPPER


def _evidence(r: WorkerReliability, labels: list, what: str) -> str:
    most = max(r.label_counts, key=lambda v: r.label_counts[v]) if r.label_counts else None
    parts = []
    if most is not None:
        n = r.label_counts[most]
        parts.append(f'answered "{most}" to {n} of {r.answers} {what} ({n / r.answers:.0%})')
        a = labels.index(most)
        others = [(r.confusion[t][a], labels[t]) for t in range(len(labels)) if t != a]
        if others:
            p, other = max(others)
            parts.append(f'estimated to answer "{most}" to {p:.0%} of {what} the model judges "{other}"')
    score, lo, hi = (two_places(x) for x in (r.spammer_score, *r.spammer_interval))
    parts.append(f"spammer score {score} [{lo}, {hi}] (0 = answers unrelated to the item, 1 = perfect)")
    parts.append(f"expected accuracy {r.accuracy:.0%} [{r.accuracy_interval[0]:.0%}, {r.accuracy_interval[1]:.0%}]")
    return "; ".join(parts)


def two_places(x: float) -> str:
    """x to two decimals, with no "-0.00" for a draw a hair below zero."""
    return f"{round(x, 2) + 0.0:.2f}"


def voted_down_flag(worker_down: int, worker_voted: int, job_down: int, job_voted: int,
                    min_voted: int = 10, ratio: float = 2.0, floor: float = 0.3) -> ReliabilityFlag | None:
    """"work voted down": a writer whose responses were voted down at a rate well above the job's
    (at least `ratio` times it and at least `floor`), over at least `min_voted` voted responses."""
    if worker_voted < min_voted or job_voted == 0:
        return None
    rate, job_rate = worker_down / worker_voted, job_down / job_voted
    if rate < floor or rate < ratio * job_rate:
        return None
    return ReliabilityFlag(
        "voted_down",
        f"{worker_down} of {worker_voted} responses voted down ({rate:.0%}); the job's rate is {job_rate:.0%}"
        f" ({job_down} of {job_voted})", rate, worker_voted)


# --- Deciding one voted item from stored matrices ------------------------------------------------


def default_confusion(k: int, accuracy: float = DEFAULT_ACCURACY) -> list[list[float]]:
    off = (1 - accuracy) / (k - 1)
    return [[accuracy if a == t else off for a in range(k)] for t in range(k)]


def posterior(answers: Sequence[tuple[object, int]], confusions: Mapping, priors: Sequence[float],
              fallback: Sequence[Sequence[float]] | None = None) -> np.ndarray:
    """P(true label) for one task from its answers [(worker, answer index)], each worker's stored
    confusion matrix ([true][answer]; `fallback` for workers without one) and the label priors."""
    k = len(priors)
    fallback = default_confusion(k) if fallback is None else fallback
    log_p = np.log(np.clip(np.asarray(priors, dtype=float), 1e-9, None))
    for worker, a in answers:
        matrix = np.asarray(confusions.get(worker, fallback), dtype=float)
        log_p = log_p + np.log(np.clip(matrix[:, a], 1e-6, None))
    p = np.exp(log_p - log_p.max())
    return p / p.sum()


PASS, RECOLLECT, ASK_MORE = "pass", "recollect", "ask_more"


def decide(p_unusable: float, votes: int, *, sure: float, max_votes: int, threshold: float = 0.5) -> str:
    """The model's call on one part: re-collect or pass once the posterior is at least `sure` either
    way; below that ask one more voter, until `max_votes`, where `threshold` decides."""
    if p_unusable >= sure:
        return RECOLLECT
    if 1 - p_unusable >= sure:
        return PASS
    if votes < max_votes:
        return ASK_MORE
    return RECOLLECT if p_unusable >= threshold else PASS
