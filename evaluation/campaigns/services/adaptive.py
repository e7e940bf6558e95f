"""Adaptive crowd campaigns: rate in rounds, look after each, add the next round only for the
systems whose order is still uncertain, stop when it is resolved or the budget is spent.

Rounds add items; no slot is ever held back. At creation (`crowd.plan_rounds`, called by
`crowd.create_crowd_job`) the rated instances get one seeded order shared by every system and the
looks a grid fixed in advance (every `adaptive_round_size` instances of that order, then all), with
the group-sequential critical value of those looks (`allocation.boundary`). The crowd job starts
with the first round for every entry (reference rows included, rated in the first round only).
When a round's ratings are all in (`round_is_complete`: no slot of the job open or claimed, no
response waiting for confirmation, a vote or a reviewer), `run_look` reads the ratings, applies the
allocation rule of `allocation.live_look` (the replay's rule: paired intervals with the sequential
critical value, futility ties, successive elimination on the top-k goal), records a `CampaignLook`
and either adds the next round's items for the systems in open pairs, through
`annotation.services.payload_jobs.add_payload_items`, or stops. It counts the slots a round would
add before adding it and never passes the ratings budget; on a crowd job the round's postings are
reserved in the same transaction (`hits.services.postings.reserve_postings`: the job's money
budget, the same idempotent intent rows as a launch), and hits posts them after commit.

Race safety: `run_look` works under a row lock on the campaign, and a look is unique per (campaign,
number); a second run, concurrent or repeated, finds the round incomplete (the added slots are open)
or the campaign stopped, and does nothing.
"""
from __future__ import annotations

import math
import random
from typing import TYPE_CHECKING

from django.db import transaction

from annotation.models import Job, Response, Slot
from annotation.services.jobs import finish_job
from evaluation.campaigns.services import rating_rounds
from evaluation.campaigns.services.crowd import build_rows
from evaluation.models import Campaign, CampaignJob, CampaignLook, Rating
from quorum.background import after_commit
from quorum.lazy_modules import lazy

if TYPE_CHECKING:
    import numpy as np

    from evaluation.stats import allocation
else:
    np = lazy("numpy")
    allocation = lazy("evaluation.stats.allocation")

PENDING = (Response.Status.AWAITING_CONFIRMATION, Response.Status.AWAITING_REVIEW, Response.Status.HELD)


def round_is_complete(job: Job) -> bool:
    """Every slot of the job is submitted and no response can still start or stop counting soon."""
    if Slot.objects.filter(job=job).exclude(state=Slot.State.SUBMITTED).exists():
        return False
    return not Response.objects.filter(item__job=job, status__in=PENDING).exists()


def _still_collecting(campaign_id: int) -> bool:
    """A slot of the campaign's crowd job is not submitted yet: one statement, read before the lock.
    Safe unlocked: an incomplete round leads `run_look` to None in any case, and the task that runs
    after the round's last submission commits sees every slot submitted."""
    return Slot.objects.filter(job__evaluation_campaign__campaign_id=campaign_id).exclude(state=Slot.State.SUBMITTED).exists()


def _pool(campaign: Campaign, crowd: CampaignJob, entries: list):
    """The allocation pool of the campaign's ratings: rows are the entries, columns the rated instances."""
    column = {instance: j for j, instance in enumerate(crowd.instances)}
    row = {e.pk: s for s, e in enumerate(entries)}
    questions = list(campaign.questions)
    sums = np.zeros((len(entries), len(questions), len(column)))
    counts = np.zeros_like(sums)
    ratings = Rating.objects.filter(campaign=campaign).values_list("entry_id", "question", "instance", "value")
    for entry_id, question, instance, value in ratings.iterator(chunk_size=20000):
        if entry_id in row and instance in column and question in questions:
            s, q, j = row[entry_id], questions.index(question), column[instance]
            sums[s, q, j] += value
            counts[s, q, j] += 1
    truth = [bool(label.get("target")) for label in campaign.test_set.labels]
    predicted = [None if e.outputs is None else [bool(o.get("target")) for o in e.outputs] for e in entries]
    factor = [allocation.eq1_factor(truth, p) for p in predicted]
    detection = _detection(campaign, crowd, entries)
    return allocation.pool_from_arrays(
        [e.label for e in entries], [allocation.instance_scores(sums[s], counts[s]) for s in range(len(entries))],
        counts.sum(axis=1), factor, kinds=[e.kind for e in entries], detection=detection,
    )


def _detection(campaign: Campaign, crowd: CampaignJob, entries: list) -> allocation.Detection:
    """Detection on the rated instances, for the leaderboard's significance line (the leaderboard
    redraws detection with the ratings)."""
    truth = np.array([bool(label.get("target")) for label in campaign.test_set.labels])
    rated = list(crowd.instances)
    predicted = [None if e.outputs is None else np.array([bool(o.get("target")) for o in e.outputs])[rated] for e in entries]
    return allocation.detection_from(truth[rated], predicted)


def _stop(campaign: Campaign, job: Job) -> None:
    """A stopped campaign takes no more ratings: its job is finished and the campaign closed."""
    if job.state in (Job.State.LIVE, Job.State.PAUSED):
        finish_job(job)
    Campaign.objects.filter(pk=campaign.pk).update(state=Campaign.State.CLOSED)


def run_look(campaign_id: int) -> CampaignLook | None:
    """Look at an adaptive campaign whose current round is complete and decide; None when there is
    nothing to do (not adaptive, no live crowd job, stopped, or the round still collecting)."""
    if _still_collecting(campaign_id):
        return None  # most calls (one per rating): no lock, no campaign, test set or look read
    with transaction.atomic():
        campaign = Campaign.objects.select_for_update().select_related("test_set").filter(pk=campaign_id, adaptive=True).first()
        if campaign is None:
            return None
        crowd = CampaignJob.objects.select_related("job").filter(campaign=campaign).first()
        if crowd is None or not crowd.round_order or crowd.job.state not in (Job.State.LIVE, Job.State.PAUSED):
            return None
        last = CampaignLook.objects.filter(campaign=campaign).order_by("-number").first()
        if last is not None and last.decision != CampaignLook.Decision.CONTINUE:
            return None
        if not round_is_complete(crowd.job):
            return None
        return _look(campaign, crowd, last)


def _add_next_round(campaign: Campaign, crowd: CampaignJob, entries: list, active: list, prefixes: dict, next_n: int, spent: int, *, look_number: int) -> tuple:
    """Add the round that rates the active entries up to `next_n` instances, within the ratings
    and money budgets; (decision, ratings added). `prefixes` moves on for the active entries."""
    if rating_rounds.uses_rating_units(campaign):
        new, extra = rating_rounds.next_round(campaign, crowd, entries, active, prefixes, next_n)
        added = sum(n for *_row, n in new) + sum(extra.values())
        if campaign.adaptive_budget is not None and spent + added > campaign.adaptive_budget:
            return CampaignLook.Decision.BUDGET, 0
        if added and not rating_rounds.add_round(crowd, new, extra, look_number):
            return CampaignLook.Decision.CROWD_BUDGET, 0
        prefixes.update({label: next_n for label in active})
        return CampaignLook.Decision.CONTINUE, added
    rows = _next_rows(campaign, crowd, entries, active, prefixes, next_n)
    added = len(rows) * crowd.job.redundancy
    if campaign.adaptive_budget is not None and spent + added > campaign.adaptive_budget:
        return CampaignLook.Decision.BUDGET, 0
    if rows and not _add_round(crowd, rows, look_number=look_number):
        return CampaignLook.Decision.CROWD_BUDGET, 0
    prefixes.update({label: next_n for label in active})
    return CampaignLook.Decision.CONTINUE, added


def _live_look(campaign: Campaign, crowd: CampaignJob, entries: list, labels: list, prefixes: dict, critical: float) -> dict:
    """The replay's rule on the ratings so far (`allocation.live_look`): each pair on the longest
    prefix both entries were rated on, resolved, tied by futility or open."""
    if rating_rounds.uses_rating_units(campaign):  # units are the round order's own positions
        pool = rating_rounds.pool(campaign, crowd, entries, _detection(campaign, crowd, entries))
        order = list(range(len(crowd.round_order)))
    else:
        pool = _pool(campaign, crowd, entries)
        column = {instance: j for j, instance in enumerate(crowd.instances)}
        order = [column[i] for i in crowd.round_order]
    alpha = 1 - campaign.adaptive_confidence
    futility = allocation.futility_boundary(crowd.round_sizes, len(crowd.instances))
    return allocation.live_look(pool, order, [prefixes.get(label, 0) for label in labels], critical, alpha, campaign.adaptive_top_k, futility_critical=futility)


def _scores_json(scores: dict, labels: list) -> dict:
    return {labels[s]: (None if math.isnan(v) else v) for s, v in scores.items()}


def _look(campaign: Campaign, crowd: CampaignJob, last: CampaignLook | None) -> CampaignLook:
    job = crowd.job
    entries = list(campaign.entries.select_related("team").order_by("team__team_id", "entry_id"))
    labels = [e.label for e in entries]
    sizes, n_all = crowd.round_sizes, len(crowd.round_order)  # instances, or rating units
    rated_now = last.next_instances if last is not None else sizes[0]
    critical = crowd.critical_value
    if rated_now is None or critical is None:  # run_look looks only after a continuing look of an adaptive job
        raise ValueError(f"campaign {campaign.name!r}: no adaptive round to look at")
    prefixes = dict(last.prefixes) if last is not None else {label: sizes[0] for label in labels}
    seen = _live_look(campaign, crowd, entries, labels, prefixes, critical)
    spent = Slot.objects.filter(job=job).count()
    active = [labels[s] for s in seen["active"]]

    if rated_now >= n_all:
        decision, added, next_n = CampaignLook.Decision.COMPLETE, 0, None
    elif not active:
        decision, added, next_n = CampaignLook.Decision.RESOLVED, 0, None
    else:
        next_n = next(size for size in sizes if size > rated_now)
        decision, added = _add_next_round(campaign, crowd, entries, active, prefixes, next_n, spent, look_number=(last.number + 1 if last else 1))
        if decision != CampaignLook.Decision.CONTINUE:
            next_n = None

    look = CampaignLook.objects.create(
        campaign=campaign, number=(last.number + 1 if last else 1), instances=rated_now, ratings_spent=spent,
        critical_value=critical, pairs=_pairs_json(seen["pairs"], labels), scores=_scores_json(seen["scores"], labels),
        prefixes=prefixes, active=active if decision == CampaignLook.Decision.CONTINUE else [],
        decision=decision, added_ratings=added, next_instances=next_n,
    )
    if decision != CampaignLook.Decision.CONTINUE:
        _stop(campaign, job)
    return look


def _next_rows(campaign, crowd, entries, active, prefixes, next_n) -> list:
    """(entry, instance, payload) of the next round: each active entry on the instances of the order
    from where it stopped up to `next_n` (an entry that left and came back catches up)."""
    by_label = {e.label: e for e in entries}
    wanted = {(label, i) for label in active for i in crowd.round_order[prefixes.get(label, 0) : next_n]}
    instances = sorted({i for _label, i in wanted})
    rows, _skipped = build_rows(campaign, instances)
    return [row for row in rows if (row[0].label, row[1]) in wanted and row[0].label in by_label]


def _add_round(crowd: CampaignJob, rows: list, look_number: int) -> bool:
    """Add the round's items (shuffled, seeded) and, on a crowd job, reserve their postings within
    the job's money budget; False (and nothing added) when that budget cannot carry them."""
    random.Random(f"{crowd.order_seed}-round-{look_number}").shuffle(rows)
    return rating_rounds.added_with_postings(crowd, lambda: rating_rounds.new_items(crowd, rows))


def _pairs_json(pairs: dict, labels: list[str]) -> list[dict]:
    out = []
    for (a, b), pair in pairs.items():
        better = None
        if pair["state"] == allocation.RESOLVED:
            better = labels[a] if pair["difference"] > 0 else labels[b]
        out.append({"a": labels[a], "b": labels[b], **{k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in pair.items()}, "better": better})
    return out


def campaigns_to_look_at() -> list[int]:
    """Adaptive campaigns whose crowd job is live and that have not stopped: the beat sweep's list."""
    stopped = CampaignLook.objects.exclude(decision=CampaignLook.Decision.CONTINUE).values("campaign_id")
    return list(
        Campaign.objects.filter(adaptive=True, crowd_job__job__state__in=[Job.State.LIVE, Job.State.PAUSED])
        .exclude(pk__in=stopped)
        .values_list("pk", flat=True)
    )


def request_look(campaign_id: int) -> None:
    """Queue a look at the campaign (`run_look`, as a task) once the current transaction commits."""
    after_commit("evaluation.tasks.run_adaptive_look", campaign_id)


def look_after_rating(campaign: Campaign) -> None:
    """A rating of `campaign` was recorded: if it is adaptive, its round may be complete. The task
    decides under the campaign's lock, so many requests for one round add it once."""
    if campaign.adaptive:
        request_look(campaign.pk)
