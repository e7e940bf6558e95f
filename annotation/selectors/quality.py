"""Reads for quality control: voting summaries, per-item review histories, the hard subset.

Agreement here calls `krippendorff.alpha` directly (nominal for votes): `evaluation.agreement`
is a higher app, which annotation must not import (DESIGN.md, "Apps").
"""
from collections import defaultdict
from dataclasses import dataclass, field

import krippendorff
import numpy as np

from ..models import Item, Job, QualityPolicy, Response, ReviewRound
from ..task_types.hard_score import DEFAULT_THRESHOLD, item_mean
from ..task_types.vote import AGAINST, FOR


@dataclass(frozen=True)
class VotingSummary:
    voting_enabled: bool
    responses_reviewed: int  # responses put to the vote
    voting: int  # rounds still waiting for votes
    passed: int
    voted_down: int  # recollected + exhausted
    recollected: int  # voted down and reopened for a new response
    flagged: int  # items voted down at the last round: the builder decides
    items_reviewed: int
    items_recollected: int  # items re-collected at least once
    recollection_rate: float | None  # items_recollected / items_reviewed
    votes: int
    vote_alpha: float | None  # Krippendorff's alpha, nominal, over vote items
    vote_alpha_note: str = ""

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def vote_alpha(job: Job) -> tuple[float | None, str, int]:
    """(alpha, note, votes counted): nominal Krippendorff's alpha of the votes on `job`'s responses.

    Units are the vote items; late votes (stored but ignored) are left out, as they were not part
    of any decision.
    """
    rows = Response.objects.counted().filter(item__job__reviews=job, item__job__task_type="vote", item__subject_response__isnull=False)
    counts = defaultdict(lambda: [0, 0])
    total = 0
    for item_id, answers, checks in rows.values_list("item_id", "answers", "checks").iterator():
        if (checks or {}).get("ignored"):
            continue
        value = answers.get("vote")
        if value in (FOR, AGAINST):
            counts[item_id][0 if value == FOR else 1] += 1
            total += 1
    matrix = np.array([c for c in counts.values() if sum(c) >= 2], dtype=float)
    if matrix.size == 0:
        return None, "n/a (no response has two votes yet)", total
    if (matrix[:, 0].sum() == 0) or (matrix[:, 1].sum() == 0):
        return None, "n/a (every vote is the same: no variation)", total
    value = float(krippendorff.alpha(value_counts=matrix, level_of_measurement="nominal"))
    return value, "", total


def voting_summary(job: Job) -> VotingSummary:
    """Per job: rewrites voted down, re-collected, flagged, the re-collection rate and the vote alpha."""
    policy = QualityPolicy.objects.filter(job=job).first()
    rounds = list(ReviewRound.objects.filter(item__job=job).values_list("item_id", "state"))
    by_state = defaultdict(int)
    items, recollected_items = set(), set()
    for item_id, state in rounds:
        by_state[state] += 1
        items.add(item_id)
        if state == ReviewRound.State.RECOLLECTED:
            recollected_items.add(item_id)
    alpha, note, votes = vote_alpha(job)
    return VotingSummary(
        voting_enabled=bool(policy and policy.voting_enabled),
        responses_reviewed=len(rounds),
        voting=by_state[ReviewRound.State.VOTING],
        passed=by_state[ReviewRound.State.PASSED],
        voted_down=by_state[ReviewRound.State.RECOLLECTED] + by_state[ReviewRound.State.EXHAUSTED],
        recollected=by_state[ReviewRound.State.RECOLLECTED],
        flagged=by_state[ReviewRound.State.EXHAUSTED],
        items_reviewed=len(items),
        items_recollected=len(recollected_items),
        recollection_rate=(len(recollected_items) / len(items)) if items else None,
        votes=votes,
        vote_alpha=alpha,
        vote_alpha_note=note,
    )


@dataclass
class RoundRow:
    round: int
    response_id: int
    author: str
    state: str
    votes_for: int
    votes_against: int
    reasons: list[str] = field(default_factory=list)


@dataclass
class ItemReview:
    item_id: int
    position: int
    utterance: str
    rounds: list[RoundRow]
    final_state: str  # "passed", "voting", "re-collecting", "flagged", "cancelled"


def item_reviews(job: Job, *, flagged_only: bool = False) -> list[ItemReview]:
    """Per reviewed item of `job`: its rounds, their votes and reasons, and where the item stands."""
    rounds = ReviewRound.objects.filter(item__job=job).select_related("item", "response__worker").order_by("item__position", "round", "pk")
    reasons = defaultdict(list)
    for subject_id, answers in Response.objects.counted().filter(item__job__reviews=job, item__subject_response__isnull=False).values_list(
        "item__subject_response_id", "answers"
    ):
        if answers.get("reason"):
            reasons[subject_id].append(f"{answers.get('vote')}: {answers['reason']}")
    grouped: dict[int, ItemReview] = {}
    for r in rounds:
        review = grouped.setdefault(
            r.item_id, ItemReview(r.item_id, r.item.position, r.item.payload.get("utterance", ""), [], "")
        )
        review.rounds.append(
            RoundRow(r.round, r.response_id, str(r.response.worker), r.state, r.votes_for, r.votes_against, reasons[r.response_id])
        )
    for review in grouped.values():
        states = [row.state for row in review.rounds]
        if ReviewRound.State.VOTING in states:
            review.final_state = "voting"
        elif ReviewRound.State.PASSED in states:
            review.final_state = "passed"
        elif states[-1] == ReviewRound.State.EXHAUSTED:
            review.final_state = "flagged"
        elif states[-1] == ReviewRound.State.RECOLLECTED:
            review.final_state = "re-collecting"
        else:
            review.final_state = "cancelled"
    rows = list(grouped.values())
    return [r for r in rows if r.final_state == "flagged"] if flagged_only else rows


@dataclass(frozen=True)
class HardItem:
    item_id: int
    turn_id: int | None
    utterance: str
    mean_score: float
    responses: int


def hard_subset(job: Job, threshold: float | None = None) -> list[HardItem]:
    """CGoDial's hard test subset: items of a hard_score job whose mean score is above the threshold.

    The mean is over every criterion score of every response that counts; gold items are left out.
    """
    if job.task_type != "hard_score":
        raise ValueError(f"job {job.name!r} is not a hard_score job")
    threshold = job.settings.get("hard_threshold", DEFAULT_THRESHOLD) if threshold is None else threshold
    answers = defaultdict(list)
    for item_id, row in Response.objects.counted().filter(item__job=job, item__gold__isnull=True).values_list("item_id", "answers"):
        answers[item_id].append(row)
    items = Item.objects.filter(pk__in=answers).values_list("pk", "turn_id", "payload", "position").order_by("position")
    subset = []
    for pk, turn_id, payload, _pos in items:
        mean = item_mean(answers[pk])
        if mean is not None and mean > threshold:
            subset.append(HardItem(pk, turn_id, payload.get("utterance", ""), round(mean, 4), len(answers[pk])))
    return subset


# --- Worker flags ---------------------------------------------------------------------------------


def flag_tables(job: Job):
    """The three tables `annotation.quality.flags.compute_flags` reads, for one job's responses.

    Every confirmed response is read (flags are evidence about the worker, including on work that was
    voted down), and gold items are left out (they have their own check). Time is the page's active time where the
    browser measured it, else the time from claim to submission.
    """
    import pandas as pd

    from .. import task_types
    from ..quality.flags import RATING_COLUMNS, RESPONSE_COLUMNS, TEXT_COLUMNS

    kind = task_types.get(job.task_type)
    rows = Response.objects.confirmed().filter(item__job=job, item__gold__isnull=True).values_list(
        "pk", "worker_id", "item_id", "active_seconds", "claimed_at", "submitted_at", "answers", "telemetry"
    )
    responses, ratings, texts = [], [], []
    for order, (pk, worker, item, active, claimed, submitted, answers, telemetry) in enumerate(rows.order_by("submitted_at", "pk").iterator(chunk_size=5000)):
        seconds = active if active is not None else (submitted - claimed).total_seconds()
        responses.append((pk, worker, job.pk, item, seconds))
        for key, value in kind.rating_values(answers).items():
            ratings.append((pk, worker, item, key, value, order))
        text = kind.text_of(answers)
        if text:
            pasted = sum(int(c.get("pasted_chars", 0)) for c in (telemetry or {}).values() if isinstance(c, dict))
            typed = sum(int(c.get("typed_chars", 0)) for c in (telemetry or {}).values() if isinstance(c, dict))
            texts.append((pk, worker, item, text, pasted, typed))
    return (
        pd.DataFrame(responses, columns=RESPONSE_COLUMNS),
        pd.DataFrame(ratings, columns=RATING_COLUMNS),
        pd.DataFrame(texts, columns=TEXT_COLUMNS),
    )


def job_flags(job: Job):
    """The FlagReport of a job, with the job's thresholds; ordinal types agree within one point."""
    from .. import task_types
    from ..quality.flags import FlagThresholds, compute_flags

    kind = task_types.get(job.task_type)
    responses, ratings, texts = flag_tables(job)
    ordinal = set(ratings["key"].astype(str)) if kind.agreement_level in ("ordinal", "interval", "ratio") and len(ratings) else set()
    thresholds = FlagThresholds.from_policy(QualityPolicy.objects.filter(job=job).first(), ordinal_keys=ordinal)
    return compute_flags(responses, ratings, texts, thresholds)


@dataclass
class ReviewRow:
    response_id: int
    worker_id: int
    worker: str
    item_id: int
    status: str
    response_flags: list[str]
    worker_flags: list[str]
    held: str
    gold: dict | None
    vote_state: str
    overrides: int


def review_list(job: Job, *, flagged_only: bool = True) -> list[ReviewRow]:
    """A job's responses for a reviewer, with the evidence on each: response and worker flags,
    work held after a soft block, gold results, the vote state, overrides. Flagged ones first."""
    from django.db.models import Count

    from ..models import Worker

    report = job_flags(job)
    names = {w.pk: str(w) for w in Worker.objects.filter(responses__item__job=job).distinct()}
    rounds = dict(ReviewRound.objects.filter(item__job=job).values_list("response_id", "state"))
    rows = []
    qs = Response.objects.filter(item__job=job).annotate(n_overrides=Count("overrides")).values_list(
        "pk", "worker_id", "item_id", "status", "checks", "n_overrides"
    )
    for pk, worker_id, item_id, status, checks, n_overrides in qs.order_by("pk").iterator():
        checks = checks or {}
        row = ReviewRow(
            response_id=pk,
            worker_id=worker_id,
            worker=names.get(worker_id, str(worker_id)),
            item_id=item_id,
            status=status,
            response_flags=report.responses.get(pk, []),
            worker_flags=[f.code for f in report.workers.get(worker_id, [])],
            held=checks.get("held", ""),
            gold=checks.get("gold"),
            vote_state=rounds.get(pk, ""),
            overrides=n_overrides,
        )
        evidence = row.response_flags or row.worker_flags or row.held or (row.gold and not row.gold.get("correct"))
        if evidence or row.vote_state == ReviewRound.State.EXHAUSTED or not flagged_only:
            rows.append(row)
    rows.sort(key=lambda r: (-(len(r.response_flags) + len(r.worker_flags) + bool(r.held)), r.response_id))
    return rows


@dataclass
class WorkerJobQuality:
    job: Job
    responses: int
    flags: list  # WorkerFlag
    measures: dict
    standing: str
    gold_answered: int
    gold_failed: int
    block_reason: str


def worker_quality(worker) -> list[WorkerJobQuality]:
    """For a worker page: per job the worker worked on, their flags, measures and gold standing."""
    from django.db.models import Count

    from ..models import WorkerStanding

    standings = {s.job_id: s for s in WorkerStanding.objects.filter(worker=worker)}
    counts = dict(
        Response.objects.filter(worker=worker).values("item__job_id").annotate(n=Count("id")).values_list("item__job_id", "n")
    )
    out = []
    for job in Job.objects.filter(pk__in=set(counts) | set(standings)).order_by("-created_at"):
        report = job_flags(job)
        standing = standings.get(job.pk)
        out.append(
            WorkerJobQuality(
                job=job,
                responses=counts.get(job.pk, 0),
                flags=report.workers.get(worker.pk, []),
                measures=report.measures.get(worker.pk, {}),
                standing=standing.state if standing else "",
                gold_answered=standing.gold_answered if standing else 0,
                gold_failed=standing.gold_failed if standing else 0,
                block_reason=standing.reason if standing else "",
            )
        )
    return out
