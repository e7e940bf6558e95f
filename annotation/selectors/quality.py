"""Reads for quality control: voting summaries, per-item review histories, agreement of any job,
combined items and a job's subset (the hard test subset), worker flags.

Every alpha here comes from `quality.agreement`, the module the campaigns' and FED sets' alphas come
from too, with the same 95% bootstrap interval over units. What is measured, and at which level, is
the task type's to say (`agreement_values`, `agreement_level`).
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from quorum.lazy_modules import lazy

from .. import task_types
from ..models import Item, Job, QualityPolicy, Response, ReviewRound
from ..quality.flags import described_measures
from ..task_types.vote import AGAINST, FOR
from .flags import StoredFlags, stored_flags, stored_worker_flags
from .readings import flag_rows

if TYPE_CHECKING:
    import numpy as np

    from ..quality import agreement
else:
    np = lazy("numpy")
    agreement = lazy("annotation.quality.agreement")

#: A task type's level of measurement as krippendorff names it.
KRIPPENDORFF_LEVELS: dict[str, Literal["nominal", "ordinal", "interval", "ratio"]] = {
    "nominal": "nominal", "ordinal": "ordinal", "interval": "interval", "ratio": "ratio",
}


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
    vote_alpha_ci_low: float | None = None  # its 95% bootstrap interval over the parts voted on
    vote_alpha_ci_high: float | None = None
    vote_alpha_ci_withheld: str = ""  # why there is no interval (too few responses), in words
    vote_alpha_responses: int = 0  # the responses voted on, the interval's resampled clusters
    vote_alpha_unanimous: float | None = None  # share of resamples with one value only, counted as alpha 1

    def as_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass(frozen=True)
class VoteAlpha:
    alpha: float | None
    note: str  # why alpha is undefined, when it is
    votes: int  # votes counted
    ci_low: float | None = None
    ci_high: float | None = None
    responses: int = 0  # responses voted on (the clusters the interval resamples)
    unanimous: float | None = None  # share of resamples with one value only (counted as alpha 1)
    ci_withheld: str = ""  # why there is no interval, in words ("no interval: too few responses, 12 of the 50 needed")


def vote_alpha(job: Job) -> VoteAlpha:
    """Nominal Krippendorff's alpha of the votes on `job`'s responses, with its 95% bootstrap
    interval over the units voted on, and how many votes it counted. Below
    `agreement.MIN_INTERVAL_CLUSTERS` responses voted on (or 3 with any disagreement) no interval is
    given and `ci_withheld` says why: there it covers far less, or more, than 95%
    (tests/quality/test_vote_coverage.py).

    Units are what a decision is taken on: each part of a response voted part by part (a rewrite's
    variants, each re-collected on its own noes), else the response. The interval resamples the
    responses voted on, each with all its parts (tests/quality/test_vote_alpha_interval.py); a resample
    in which every vote agrees counts as alpha 1 (`agreement`). Late votes (stored but
    ignored) are left out, as they were not part of any decision.
    """
    rows = Response.objects.counted().filter(item__job__reviews=job, item__job__task_type__in=task_types.keys_with(task_types.FromResponses), item__subject_response__isnull=False)
    counts: defaultdict[tuple, list[int]] = defaultdict(lambda: [0, 0])
    total = 0
    for item_id, answers, checks in rows.values_list("item_id", "answers", "checks").iterator():
        if (checks or {}).get("ignored"):
            continue
        verdicts = answers.get("parts") or {"": answers.get("vote")}
        counted = False
        for part, value in verdicts.items():
            if value in (FOR, AGAINST):
                counts[(item_id, part)][0 if value == FOR else 1] += 1
                counted = True
        total += counted
    pairable = [(unit, c) for unit, c in counts.items() if sum(c) >= 2]
    matrix = np.array([c for _unit, c in pairable], dtype=float)
    if matrix.size == 0:
        return VoteAlpha(None, "n/a (no response has two votes yet)", total)
    if (matrix[:, 0].sum() == 0) or (matrix[:, 1].sum() == 0):
        return VoteAlpha(None, "n/a (every vote is the same: no variation)", total)
    # A response's parts are resampled together: one voter's verdicts on them go together (a vote
    # on the whole response decides every part), so parts resampled apart give too narrow an interval.
    clusters = [item_id for (item_id, _part), _c in pairable]
    found = agreement.alpha_from_counts(matrix, np.array([0, 1]), "nominal", clusters=clusters, cluster_words=("response", "responses"))
    return VoteAlpha(found.alpha, "", total, found.ci_low, found.ci_high, len(set(clusters)), found.unanimous_resamples, found.ci_withheld)


def voting_summary(job: Job) -> VotingSummary:
    """Per job: rewrites voted down, re-collected, flagged, the re-collection rate and the vote alpha."""
    policy = QualityPolicy.objects.filter(job=job).first()
    rounds = list(ReviewRound.objects.filter(item__job=job).values_list("item_id", "state"))
    by_state: defaultdict[str, int] = defaultdict(int)
    items, recollected_items = set(), set()
    for item_id, state in rounds:
        by_state[state] += 1
        items.add(item_id)
        if state == ReviewRound.State.RECOLLECTED:
            recollected_items.add(item_id)
    votes = vote_alpha(job)
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
        votes=votes.votes,
        vote_alpha=votes.alpha,
        vote_alpha_note=votes.note,
        vote_alpha_ci_low=votes.ci_low,
        vote_alpha_ci_high=votes.ci_high,
        vote_alpha_ci_withheld=votes.ci_withheld,
        vote_alpha_responses=votes.responses,
        vote_alpha_unanimous=votes.unanimous,
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
    # A reviewer's decision against the vote's outcome: the response's status in words, else "".
    overruled: str = ""


@dataclass
class ItemReview:
    item_id: int
    position: int
    utterance: str
    rounds: list[RoundRow]
    final_state: str  # "passed", "voting", "re-collecting", "flagged", "cancelled"
    decisions: list[str] = field(default_factory=list)  # reviewers' decisions against the vote, in words


def _overruled(review_round: ReviewRound) -> str:
    """The response's status in words where a reviewer decided against its round's outcome: a
    response that passed and was then rejected or excluded, or one voted down and then accepted."""
    status = review_round.response.status
    passed = review_round.state == ReviewRound.State.PASSED
    voted_down = review_round.state in (ReviewRound.State.RECOLLECTED, ReviewRound.State.EXHAUSTED)
    if (passed and status in (Response.Status.REJECTED, Response.Status.EXCLUDED)) or (voted_down and status == Response.Status.ACCEPTED):
        return str(Response.Status(status).label).lower()
    return ""


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
            RoundRow(r.round, r.response_id, str(r.response.worker), r.state, r.votes_for, r.votes_against, reasons[r.response_id],
                     _overruled(r))
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
        review.decisions = [f"response {row.response_id} {row.overruled} by a reviewer" for row in review.rounds if row.overruled]
    rows = list(grouped.values())
    return [r for r in rows if r.final_state == "flagged"] if flagged_only else rows


@dataclass(frozen=True)
class CombinedItem:
    item_id: int
    turn_id: int | None
    position: int
    subject: str
    combined: dict  # the task type's `combine` of the item's counted responses
    in_subset: bool | None


def combined_items(job: Job) -> list[CombinedItem]:
    """Per item with counted responses, what they say together (the task type's `combine`), in
    position order; gold items are left out."""
    kind = task_types.get(job.task_type)
    answers = defaultdict(list)
    rows = Response.objects.counted().filter(item__job=job, item__gold__isnull=True).order_by("submitted_at", "pk")
    for item_id, row in rows.values_list("item_id", "answers").iterator(chunk_size=5000):
        answers[item_id].append(row)
    out = []
    items = Item.objects.filter(pk__in=answers).order_by("position").values_list("pk", "turn_id", "position", "payload")
    for pk, turn_id, position, payload in items.iterator(chunk_size=2000):
        combined = kind.combine(answers[pk], job.settings)
        out.append(CombinedItem(pk, turn_id, position, kind.subject_of(payload), combined, _in_subset(kind, combined, job.settings)))
    return out


def _in_subset(kind, combined: dict, settings: dict) -> bool | None:
    """Whether an item is in the job's subset (`HasSubset`); None for a type or job without one."""
    subsets = task_types.capability(kind, task_types.HasSubset)
    return subsets.in_subset(combined, settings) if subsets else None


def has_subset(job: Job) -> bool:
    """Whether the job's task type and settings define a downloadable subset (the hard test subset)."""
    return _in_subset(task_types.get(job.task_type), {"mean": None}, job.settings) is not None


def subset(job: Job) -> list[CombinedItem]:
    """The items of the job's subset, e.g. CGoDial's hard test subset: items of a hard-score job whose
    mean score over every question and counted response is above the job's threshold."""
    if not has_subset(job):
        raise ValueError(f"job {job.name!r} defines no subset (its task type or settings have no subset rule)")
    return [row for row in combined_items(job) if row.in_subset]


@dataclass(frozen=True)
class QuestionAgreement:
    question: str
    level: str
    alpha: float | None
    note: str  # why alpha is undefined, when it is
    units: int  # items with at least two values
    values: int
    ci_low: float | None = None  # the 95% bootstrap interval over items
    ci_high: float | None = None
    ci_withheld: str = ""  # why alpha has no interval (too few items), in words


def agreement_table(rows, level: str) -> tuple[float | None, str, int, tuple[float | None, float | None, str]]:
    """(alpha, note, pairable units, (its 95% bootstrap interval, why it has none)) of one question
    from (item, worker, value) rows. Pure."""
    by_item = defaultdict(list)
    for item, _worker, value in rows:
        by_item[item].append(value)
    units = {item: values for item, values in by_item.items() if len(values) >= 2}
    if not units:
        return None, "n/a (no item has two values yet)", 0, (None, None, "")
    domain = sorted({v for values in units.values() for v in values}, key=lambda v: (isinstance(v, str), v))
    if len(domain) < 2:
        return None, "n/a (every value is the same: no variation)", len(units), (None, None, "")
    code = {v: i for i, v in enumerate(domain)}
    numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in domain)
    counts = np.zeros((len(units), len(domain)))
    for row, values in enumerate(units.values()):
        for v in values:
            counts[row, code[v]] += 1
    value_domain = [float(v) for v in domain] if numeric else list(range(len(domain)))
    if not numeric and level != "nominal":
        level = "nominal"  # labels have no distances; only nominal agreement means something
    found = agreement.alpha_from_counts(counts, np.array(value_domain), KRIPPENDORFF_LEVELS[level])
    return found.alpha, "", len(units), (found.ci_low, found.ci_high, found.ci_withheld)


def job_agreement(job: Job) -> list[QuestionAgreement]:
    """Krippendorff's alpha per question of any job, over its counted responses (units = items,
    coders = workers), at the task type's level; empty for free-text types."""
    kind = task_types.get(job.task_type)
    tables = defaultdict(list)
    rows = Response.objects.counted().filter(item__job=job, item__gold__isnull=True)
    for item_id, worker_id, answers in rows.values_list("item_id", "worker_id", "answers").iterator(chunk_size=5000):
        for question, value in kind.agreement_values(answers, job.settings).items():
            tables[question].append((item_id, worker_id, value))
    out = []
    for question, table in tables.items():
        level = task_types.agreement_level_of(kind, question, job.settings)
        alpha, note, units, (low, high, withheld) = agreement_table(table, level)
        out.append(QuestionAgreement(question, level, alpha, note, units, len(table), low, high, withheld))
    return out


# --- Worker flags ---------------------------------------------------------------------------------


def flag_tables(job: Job):
    """The three tables `annotation.quality.flags.compute_flags` reads, for one job's responses.

    Every confirmed response is read (flags are evidence about the worker, including on work that was
    voted down), and gold items are left out (they have their own check). Time is the page's active time where the
    browser measured it, else the time from claim to submission.
    """
    import pandas as pd

    from ..quality.flags import RATING_COLUMNS, RESPONSE_COLUMNS, TEXT_COLUMNS

    kind = task_types.get(job.task_type)
    rows = Response.objects.confirmed().filter(item__job=job, item__gold__isnull=True).values_list(
        "pk", "worker_id", "item_id", "active_seconds", "claimed_at", "submitted_at", "answers", "telemetry", "typing", "item__payload"
    )
    responses, ratings, texts = [], [], []
    codes: defaultdict[str, dict] = defaultdict(dict)
    sources = {}  # item -> the text its work was about, once per item
    rows = rows.order_by("submitted_at", "pk").iterator(chunk_size=5000)
    for order, (pk, worker, item, active, claimed, submitted, answers, telemetry, logs, payload) in enumerate(rows):
        seconds = active if active is not None else (submitted - claimed).total_seconds()
        responses.append((pk, worker, job.pk, item, seconds))
        for key, value in kind.agreement_values(answers, job.settings).items():
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                value = codes[key].setdefault(value, len(codes[key]))  # a label: the flags compare codes
            ratings.append((pk, worker, item, key, value, order))
        fields = kind.texts_of(answers, job.settings)
        logs = logs if isinstance(logs, dict) else {}
        # A logged field the type does not count as text (a reason, chat messages) is judged by its
        # log alone: a row with no text, so the text flags pass it by.
        fields = {**{name: "" for name in logs if name != "*" or not fields}, **fields} if logs else fields
        if fields:
            if item not in sources:
                sources[item] = kind.subject_of(payload or {})
            telemetry = telemetry if isinstance(telemetry, dict) else {}
            for name, text in fields.items():
                given = telemetry.get(name)
                counts = given if isinstance(given, dict) else {}
                pasted, typed = int(counts.get("pasted_chars", 0)), int(counts.get("typed_chars", 0))
                log = logs.get(name, logs.get("*"))  # "*": the whole posted log was malformed
                texts.append((pk, worker, item, name, text, sources[item], order, pasted, typed, log))
    return (
        pd.DataFrame(responses, columns=RESPONSE_COLUMNS),
        pd.DataFrame(ratings, columns=RATING_COLUMNS),
        pd.DataFrame(texts, columns=TEXT_COLUMNS),
    )


def job_flags(job: Job):
    """The FlagReport of a job, with the job's thresholds; ordinal types agree within one point."""
    from ..quality.flags import FlagThresholds, compute_flags

    kind = task_types.get(job.task_type)
    responses, ratings, texts = flag_tables(job)
    keys = set(ratings["key"].astype(str)) if len(ratings) else set()
    ordinal = {k for k in keys if task_types.agreement_level_of(kind, k, job.settings) in ("ordinal", "interval", "ratio")}
    thresholds = FlagThresholds.from_policy(QualityPolicy.objects.filter(job=job).first(), ordinal_keys=ordinal)
    # A type whose responses carry recordings has its readings judged too (`worth_a_listen`).
    readings = reading_table(job, kind) if isinstance(kind, task_types.TakesUploads) else None
    return compute_flags(responses, ratings, texts, thresholds, readings=readings)


def reading_table(job: Job, kind):
    """The `readings` table `compute_flags` reads: every reading of the job's confirmed responses,
    the turn read being the item's subject as the review queue shows it."""
    import pandas as pd

    from ..quality.flags import READING_COLUMNS

    rows = [
        (response, worker, index, kind.subject_of(payload), hypothesis, speech, seconds, fp)
        for response, worker, index, payload, hypothesis, speech, seconds, fp in flag_rows(job.pk)
    ]
    return pd.DataFrame(rows, columns=READING_COLUMNS)


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
    #: The response's flags as data a reader can check: {"code", "name" (in words), "evidence"}, in `response_flags` order.
    response_flag_evidence: list[dict] = field(default_factory=list)


def _flags_with_evidence(codes, checks: dict) -> list[dict]:
    """Each flag of a response with its name in words and the evidence the last flag run stored on it."""
    from ..quality.flags import flag_name

    evidence = checks.get("flag_evidence")
    evidence = evidence if isinstance(evidence, dict) else {}
    return [{"code": code, "name": flag_name(code), "evidence": str(evidence.get(code) or "")} for code in codes]


def review_list(job: Job, *, flagged_only: bool = True, flags=None) -> list[ReviewRow]:
    """A job's responses for a reviewer, with the evidence on each: response and worker flags (as
    stored by the last flag run; `flags` is its `selectors.flags.StoredFlags` when the caller has
    it already), work held after a soft block, gold results, the vote state, overrides. Flagged
    ones first."""
    from django.db.models import Count

    from ..models import Worker

    report = (flags or stored_flags(job)).report
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
        row.response_flag_evidence = _flags_with_evidence(row.response_flags, checks)
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
    measures: dict  # the stored numbers, as the API gives them
    standing: str
    gold_answered: int
    gold_failed: int
    block_reason: str
    flags_computed_at: object = None  # when the stored flags were computed; None: not yet

    @property
    def measures_in_words(self) -> list[tuple[str, str]]:
        """The measures as a page says them (quality.flags.described_measures)."""
        return described_measures(self.measures)


def worker_quality(worker) -> list[WorkerJobQuality]:
    """For a worker page: per job the worker worked on, their stored flags and measures (as the
    last flag run of the job found them) and gold standing."""
    from django.db.models import Count

    from ..models import WorkerStanding

    standings = {s.job_id: s for s in WorkerStanding.objects.filter(worker=worker)}
    counts = dict(
        Response.objects.filter(worker=worker).values("item__job_id").annotate(n=Count("id")).values_list("item__job_id", "n")
    )
    job_ids = set(counts) | set(standings)
    stored = stored_worker_flags(job_ids)
    out = []
    for job in Job.objects.filter(pk__in=job_ids).order_by("-created_at"):
        flags = stored.get(job.pk, StoredFlags())
        report = flags.report
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
                flags_computed_at=flags.computed_at,
            )
        )
    return out


@dataclass(frozen=True)
class ResponseEvidence:
    """One of a worker's latest responses on the worker page, with what its checks and its typing say."""

    response: Response
    flags: list[tuple[str, str, str]]  # (code, in words, the evidence the last flag run stored)
    typing: list[tuple[str, str]]  # (field, how it was written, from its typing log or else its counts)


def worker_response_evidence(responses) -> list[ResponseEvidence]:
    """`responses` (a worker's latest) with each one's flags in words and evidence, and each field's
    typing summary: from the typing log where there is one (it says what was typed, pasted, dropped,
    dictated or inserted with no key), else the page's counts. One query for the logs and answers."""
    from ..quality import typing as typing_flags
    from ..quality.flags import flag_name

    responses = list(responses)
    logged = {
        pk: (answers or {}, typing or {}, job_id)
        for pk, answers, typing, job_id in Response.objects.filter(pk__in=[r.pk for r in responses])
        .values_list("pk", "answers", "typing", "item__job_id")
    }
    field_order = _answer_field_order({job_id for _, _, job_id in logged.values()})
    rows = []
    for r in responses:
        checks = r.checks or {}
        evidence = checks.get("flag_evidence") or {}
        flags = [(code, flag_name(code), evidence.get(code, "")) for code in checks.get("flags") or []]
        answers, logs, job_id = logged.get(r.pk, ({}, {}, None))
        order = field_order.get(job_id, {})
        typing = [
            (name, typing_flags.summary(typing_flags.features(record, str(answers.get(name) or ""))))
            for name, record in _in_order(logs, order) if isinstance(record, dict)
        ]
        if not typing:
            typing = [(name, f"{counts.get('typed_chars', 0)} typed, {counts.get('pasted_chars', 0)} pasted")
                      for name, counts in _in_order(r.telemetry, order) if isinstance(counts, dict)]
        rows.append(ResponseEvidence(r, flags, typing))
    return rows


def _answer_field_order(job_ids) -> dict[int, dict[str, int]]:
    """Each job's answer fields' positions, as its task type lists them (one query for the jobs)."""
    out = {}
    for pk, key, settings in Job.objects.filter(pk__in=job_ids).values_list("pk", "task_type", "settings"):
        kind = task_types.registry().get(key)  # a type no longer registered: its fields keep the log's order
        fields = kind.answer_fields(settings or {}) if kind is not None else []
        out[pk] = {f["name"]: i for i, f in enumerate(fields)}
    return out


def _in_order(by_field, order: dict[str, int]) -> list[tuple]:
    """`by_field`'s items in the task type's field order, then any other field: a stored JSON object's
    keys come back from PostgreSQL shortest first (typos before paraphrase)."""
    if not isinstance(by_field, dict):
        return []
    return sorted(by_field.items(), key=lambda pair: order.get(pair[0], len(order)))
