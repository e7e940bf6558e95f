"""Reads of automatic judges' runs."""
from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

from annotation import task_types
from annotation.models import Item
from evaluation.campaigns.selectors import pairwise_records
from evaluation.judges import verdicts_csv
from evaluation.models import JudgeRun, PairwiseJudgeRun
from quorum.lazy_modules import lazy

if TYPE_CHECKING:
    from evaluation.stats import ranksets
else:
    ranksets = lazy("evaluation.stats.ranksets")


def judge_runs(campaign):
    """The campaign's automatic judges with their stored reports, each marked stale when the
    campaign's inputs changed since the report was computed (`judge_report` recomputes it)."""
    runs = list(JudgeRun.objects.filter(campaign=campaign))
    for run in runs:
        run.stale = bool(run.report) and run.inputs_version != campaign.inputs_version
    return runs


def pairwise_judge_rank_sets(job, alpha=0.05, records: list[dict] | None = None) -> list[dict]:
    """Per automatic judge of a pairwise job: prediction-powered rank sets of the systems' win rates
    from the human votes on the pairs it judged and its verdicts on all of them, beside the
    human-only sets on the same voted pairs (`stats.ranksets.pairwise_rank_sets`; a pair's human
    outcome is the mean of its counted votes; `records`: `pairwise_records(job)` when the caller
    has read them). Computed with the job's stored ranking report (`services.pairwise.build_report`):
    {name, created_at, judged, voted, voted_not_judged, and result (with `rows` sorted by the
    prediction-powered estimate) or skipped (why)}."""
    runs = list(PairwiseJudgeRun.objects.filter(job=job))
    if not runs:
        return []
    kind = task_types.capability(task_types.get(job.task_type), task_types.ComparesSystems)
    if kind is None:
        return []
    votes: dict[int, list[float]] = defaultdict(list)
    for record in pairwise_records(job) if records is None else records:
        votes[record["item"]].append(ranksets.OUTCOME_SHARE[record["outcome"]])
    pairs = {item: kind.systems(payload) for item, payload in Item.objects.filter(job=job, gold__isnull=True).values_list("id", "payload")}
    out = []
    for run in runs:
        verdicts = {item: verdicts_csv.share_of_a(preferred, probability) for item, preferred, probability in
                    run.verdicts.values_list("item_id", "preferred", "probability")}
        labelled = [item for item in verdicts if item in votes]
        unlabelled = [item for item in verdicts if item not in votes]
        entry = {"name": run.name, "created_at": run.created_at.isoformat(), "judged": len(verdicts), "voted": len(labelled),
                 "voted_not_judged": len(set(votes) - set(verdicts))}
        systems = sorted({system for item in verdicts for system in pairs[item]})
        try:
            result = ranksets.pairwise_rank_sets(
                systems,
                [(*pairs[item], sum(votes[item]) / len(votes[item])) for item in labelled],
                [(*pairs[item], verdicts[item]) for item in labelled],
                [(*pairs[item], verdicts[item]) for item in unlabelled],
                alpha=alpha,
            )
        except ValueError as exc:
            entry["skipped"] = str(exc)
        else:
            human = {row["system"]: row for row in result["human_only"]}
            result["rows"] = [{"system": row["system"], "ppi": row, "human_only": human[row["system"]]}
                              for row in sorted(result["ppi"], key=lambda row: (-row["estimate"], row["system"]))]
            entry["result"] = result
        out.append(entry)
    return out
