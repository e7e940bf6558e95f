"""Dawid-Skene (1979) by EM, crowd-kit 1.4.2's `DawidSkene.fit` step for step, in numpy. Pure.

crowd-kit writes each E and M step and the evidence lower bound as pandas joins and group-bys:
about 0.1 s a step on a job of 6,000 answers, most of a reliability fit. Here the same steps are
bincounts over integer codes: the same start (majority-vote shares, gold tasks set to their label),
the same clipping at 1e-10, the same stopping rule (the lower bound per answer gaining less than
`tol`), so the same fixed point; tests/quality/test_reliability.py checks it against crowd-kit.
One difference: a gold label nobody gave is a label of the model here, where crowd-kit leaves NaN
in the tasks' probabilities and priors.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from quorum.lazy_modules import lazy

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
else:
    np = lazy("numpy")
    pd = lazy("pandas")

_EPS = 1e-10  # crowd-kit's floor on error rates, priors and (after the bound) probabilities


@dataclass
class DawidSkeneFit:
    labels: list  # sorted: the order of every column below
    tasks: pd.Index  # in order of first appearance, as crowd-kit's probas_
    workers: pd.Index  # in order of first appearance
    probas: np.ndarray  # [task, true label]
    priors: np.ndarray  # [label]
    confusion: np.ndarray  # [worker, true label, answer]: P(answer | true label); 0 for answers never given
    iterations: int


def fit(data: pd.DataFrame, gold: pd.Series | None = None, n_iter: int = 100, tol: float = 1e-5) -> DawidSkeneFit:
    """EM over `data` (task, worker, label), the tasks of `gold` (task -> label) held at their label."""
    task_codes, tasks = pd.factorize(data["task"])
    worker_codes, workers = pd.factorize(data["worker"])
    labels = sorted(set(data["label"]) | (set(gold) if gold is not None else set()))
    answer = np.searchsorted(np.array(labels, dtype=object), data["label"].to_numpy(dtype=object))
    n_tasks, n_workers, k = len(tasks), len(workers), len(labels)
    pair = worker_codes * k + answer  # the (worker, answer) cell of each judgement
    present = np.bincount(pair, minlength=n_workers * k) > 0

    golden = np.full(n_tasks, -1)
    if gold is not None and len(gold):
        where = tasks.get_indexer(gold.index)
        golden[where[where >= 0]] = np.searchsorted(np.array(labels, dtype=object), gold.to_numpy(dtype=object)[where >= 0])

    def hold_gold(probas):
        held = golden >= 0
        probas[held] = 0.0
        probas[held, golden[held]] = 1.0
        return probas

    def per_task(values):  # [judgement, k] -> [task, k]
        return np.stack([np.bincount(task_codes, weights=values[:, c], minlength=n_tasks) for c in range(k)], axis=1)

    def m_step(probas):  # errors[worker * k + answer, true]: present pairs clipped, each true column normalised
        errors = np.stack([np.bincount(pair, weights=probas[task_codes, c], minlength=n_workers * k) for c in range(k)], axis=1)
        errors = np.where(present[:, None], np.maximum(errors, _EPS), 0.0)
        return errors / errors.reshape(n_workers, k, k).sum(axis=1).repeat(k, axis=0)

    counts = np.bincount(task_codes * k + answer, minlength=n_tasks * k).reshape(n_tasks, k).astype(float)
    probas = hold_gold(counts / counts.sum(axis=1, keepdims=True))
    priors = probas.mean(axis=0)
    errors = m_step(probas)
    loss, iterations = -np.inf, 0
    with np.errstate(divide="ignore"):  # log of an absent pair's 0: never read
        for _ in range(n_iter):
            log_likelihood = np.log2(np.maximum(priors, _EPS)) + per_task(np.log2(errors)[pair])
            scaled = np.exp2(log_likelihood - log_likelihood.max(axis=1, keepdims=True))
            probas = hold_gold(scaled / scaled.sum(axis=1, keepdims=True))
            priors = probas.mean(axis=0)
            errors = m_step(probas)
            joint = (probas[task_codes] * (np.log(errors)[pair] + np.log(np.maximum(priors, _EPS)))).sum()
            probas = np.maximum(probas, _EPS)  # crowd-kit clips them in place for the entropy and keeps them so
            new_loss = (joint - (np.log(probas) * probas).sum()) / len(data)
            iterations += 1
            if new_loss - loss < tol:
                break
            loss = new_loss
    # errors[worker, answer, true] -> [worker, true, answer]
    return DawidSkeneFit(labels, tasks, workers, probas, priors, errors.reshape(n_workers, k, k).transpose(0, 2, 1), iterations)
