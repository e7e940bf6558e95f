"""Reads for the review queue: one page of a job's responses with what a reviewer needs to judge
each one — the source turn with its slot values, the answer as the task type shows it (for
rewrites a word diff of every variant against the source), the votes with their reasons, the
stored flags with their evidence, the response's state and overrides.

A page costs the same queries whatever the job's size: the stored flag report (one row), a count
and the page of responses (with item, turn, worker and vote round joined), the votes on the
page's responses, and the workers for the filter. Flags are read as the last flag run stored them
(`selectors.flags`), never computed here.
"""
from collections import defaultdict
from dataclasses import dataclass, field

from django.core.paginator import Page, Paginator
from django.db.models import Count, OuterRef, Subquery
from django.db.models.functions import Coalesce

from .. import task_types
from ..models import CheckOverride, Job, Response, ReviewRound, Worker
from ..quality import typing as typing_process
from ..quality.flags import WORTH_A_LISTEN, FlagReport, count_flags, flag_name
from ..text.highlight import slot_segments
from ..text.review_diff import word_diff
from .flags import StoredFlags, counted_flag_words, stored_flags
from .readings import reading_evidence, readings_by_response, same_recordings

PAGE_SIZE = 50  # the compact table: one line per response
#: The full cards show the work, votes and evidence of each response: fewer per page, so a page
#: stays within 5,000 px at 1280 px wide.
CARDS_PAGE_SIZE = 10
#: The vote-outcome filter: a round state, or "none" for responses never put to the vote.
NO_VOTE = "none"
#: The flag filter's value for "any flag at all", on the response or its author.
ANY_FLAG = "any"
#: A flag filter value `author:<code>` asks for the responses whose author carries worker flag <code>;
#: a bare code, for the responses that carry it themselves.
AUTHOR_FLAG = "author:"


@dataclass(frozen=True)
class ReviewFilters:
    status: str = ""
    flag: str = ""
    worker: int | None = None
    variant: str = ""
    vote: str = ""

    @classmethod
    def from_query(cls, query) -> "ReviewFilters":
        """From a page's query string; values that are not understood are ignored, not errors
        (a stale link still shows the queue)."""
        worker = query.get("worker", "")
        status = query.get("status", "")
        vote = query.get("vote", "")
        return cls(
            status=status if status in Response.Status.values else "",
            flag=query.get("flag", "")[:40],
            worker=int(worker) if worker.isdigit() else None,
            variant=query.get("variant", "")[:40],
            vote=vote if vote in (*ReviewRound.State.values, NO_VOTE) else "",
        )

    def as_query(self) -> dict:
        values = {"status": self.status, "flag": self.flag, "worker": self.worker or "", "variant": self.variant, "vote": self.vote}
        return {k: v for k, v in values.items() if v}


@dataclass
class Vote:
    worker: str
    vote: str
    reason: str
    counted: bool  # false: a late vote, stored but not part of the decision


@dataclass
class QueueRow:
    response_id: int
    item_id: int
    item_position: int
    worker_id: int
    worker: str
    status: str
    status_label: str
    source: list  # [(text, is_slot)] of the subject with its slot values marked
    slots: list  # [(slot name or "", value)]
    shown: list  # [{"name", "label", "text", "diff": [Segment] | None}]
    vote_state: str
    votes_for: int
    votes_against: int
    votes: list[Vote] = field(default_factory=list)
    response_flags: list[str] = field(default_factory=list)
    worker_flags: list = field(default_factory=list)  # WorkerFlag (code, message: the evidence)
    held: str = ""
    gold: dict | None = None
    overrides: int = 0
    override_reason: str = ""
    flag_evidence: dict = field(default_factory=dict)  # code -> why, as the last flag run stored it
    typing: list = field(default_factory=list)  # per text field: {"field", "summary", "cells"}

    @property
    def reading_doubts(self) -> list[str]:
        """What makes a reading of this response worth a listen, each named by its reading (spoken
        readings; `readings.reading_evidence`), for the evidence column and the table's flags."""
        return [f"{entry['label']}: {doubt}" for entry in self.shown for doubt in ((entry.get("asr") or {}).get("doubts") or [])]

    @property
    def unstored_reading_doubts(self) -> list[str]:
        """`reading_doubts` while the last flag run has not stored them as the response's
        `worth_a_listen` flag (a reading transcribed since): the chip and the evidence column say
        them then; once stored, the flag says them with the others."""
        return [] if WORTH_A_LISTEN in self.response_flags else self.reading_doubts

    @property
    def named_flags(self) -> list[tuple[str, str, str]]:
        """The response's flags as a reviewer reads them: (code, in words, the stored evidence or "")."""
        return [(code, flag_name(code), self.flag_evidence.get(code, "")) for code in self.response_flags]

    @property
    def named_worker_flags(self) -> list[tuple[str, str, str]]:
        """Its author's flags: (code, in words, the evidence)."""
        return [(f.code, flag_name(f.code), f.message) for f in self.worker_flags]


@dataclass
class ReviewQueue:
    job: Job
    filters: ReviewFilters
    page: object  # django Page of QueueRow
    flags: StoredFlags
    flag_options: list[tuple[str, list[tuple[str, str]]]]  # (group, [(value, label)])
    flag_counts: list[tuple[str, int, str]]  # (code, responses carrying it, what it marks), most first
    workers: list[tuple[int, str]]
    variants: list[tuple[str, str]]  # (field name, label) a reviewer may narrow the page to
    statuses: list[tuple[str, str]]
    vote_states: list[tuple[str, str]]


def _filtered(job: Job, filters: ReviewFilters):
    """The job's responses through every filter but the flag one (`_flagged_ids`)."""
    qs = Response.objects.filter(item__job=job)
    if filters.status:
        qs = qs.filter(status=filters.status)
    if filters.worker:
        qs = qs.filter(worker_id=filters.worker)
    if filters.vote == NO_VOTE:
        qs = qs.filter(review_round__isnull=True)
    elif filters.vote:
        qs = qs.filter(review_round__state=filters.vote)
    if filters.variant:
        qs = qs.filter(answers__has_key=filters.variant).exclude(**{f"answers__{filters.variant}": ""})
    return qs


def _flagged_ids(qs, flag: str, report: FlagReport) -> list[int]:
    """The ids, in order, of the responses of `qs` the flag filter asks for: those that carry the flag
    (a bare code), those whose author carries it (`author:<code>`), or, for `any`, those with any flag
    on themselves or their author. Matched here rather than in SQL: a flag may hold most of a job's
    responses, and an IN list of 75,000 ids took Django seconds to build, twice (count and page)."""
    on_author = flag.startswith(AUTHOR_FLAG)
    code = flag.removeprefix(AUTHOR_FLAG)
    wanted = (lambda c: True) if flag == ANY_FLAG else (lambda c: c == code)
    workers = set()
    if flag == ANY_FLAG or on_author:
        workers = {w for w, wflags in report.workers.items() if any(wanted(f.code) for f in wflags)}
    flagged = {} if on_author else report.responses
    return [
        pk for pk, worker in qs.order_by("pk").values_list("pk", "worker_id").iterator(chunk_size=10000)
        if worker in workers or (pk in flagged and any(wanted(c) for c in flagged[pk]))
    ]


def _flag_counts(report: FlagReport) -> list[tuple[str, int, str]]:
    """How many responses carry each flag, most first: the line a reviewer reads before the queue."""
    return [(code, n, counted_flag_words(code, n)) for code, n in count_flags(report.responses).items()]


def _flag_options(report: FlagReport) -> list[tuple[str, list[tuple[str, str]]]]:
    """The flag filter's choices in two groups: a flag on the response itself, and a worker flag on its
    author (which picks every response of that worker)."""
    own = sorted({c for cs in report.responses.values() for c in cs})
    authors = sorted({f.code for fs in report.workers.values() for f in fs})
    return [
        ("On the response", [(code, flag_name(code)) for code in own]),
        ("On its author (every response of a flagged worker)",
         [(f"{AUTHOR_FLAG}{code}", f"author: {flag_name(code)}") for code in authors]),
    ]


@dataclass(frozen=True)
class _PageEvidence:
    """What the queue reads once for a page and each row looks up: votes, readings, flags."""

    settings: dict
    variant: str  # the variant filter, when the type's answers are diffed against the subject
    diffs: bool
    votes: dict
    readings: dict
    same_audio: dict  # fingerprint -> the job's readings with that recording (`readings.same_recordings`)
    report: FlagReport


def review_queue(job: Job, filters: ReviewFilters, page_number=1, page_size: int = PAGE_SIZE) -> ReviewQueue:
    kind = task_types.get(job.task_type)
    flags = stored_flags(job)
    report = flags.report
    overrides_per_response = (
        CheckOverride.objects.filter(response=OuterRef("pk")).order_by().values("response").annotate(n=Count("pk")).values("n")
    )
    filtered = _filtered(job, filters)

    def shown(qs):
        return (
            qs.select_related("item__turn", "worker", "review_round")
            # A subquery per row of the page, not a join grouped over every response of the job: with
            # GROUP BY, SQLite counted the overrides of all 100,000 responses before taking 50 (issue 26).
            .annotate(n_overrides=Coalesce(Subquery(overrides_per_response), 0))
            .order_by("pk")
        )

    page: Page
    if filters.flag:
        page = Paginator(_flagged_ids(filtered, filters.flag, report), page_size).get_page(page_number)
        responses = list(shown(Response.objects.filter(pk__in=list(page.object_list))))
    else:
        page = Paginator(shown(filtered), page_size).get_page(page_number)
        responses = list(page.object_list)
    diffs = isinstance(kind, task_types.DiffsAgainstSubject)
    evidence = _PageEvidence(
        settings=job.settings, variant=filters.variant, diffs=diffs, votes=_votes_on([r.pk for r in responses]),
        # A type whose responses carry audio shows each reading's player and hypothesis (one more query).
        readings=readings_by_response([r.pk for r in responses]) if isinstance(kind, task_types.TakesUploads) else {},
        same_audio=same_recordings(job.pk, responses, len(kind.upload_fields(job.settings))) if isinstance(kind, task_types.TakesUploads) else {},
        report=report,
    )
    page.object_list = [_queue_row(kind, r, evidence) for r in responses]
    workers = list(
        Worker.objects.filter(responses__item__job=job).distinct().order_by("external_id").values_list("pk", "provider", "external_id")
    )
    variants = [(f["name"], f["label"]) for f in kind.answer_fields(job.settings)] if diffs else []
    return ReviewQueue(
        job=job,
        filters=filters,
        page=page,
        flags=flags,
        flag_options=_flag_options(report),
        flag_counts=_flag_counts(report),
        workers=[(pk, f"{provider}:{external}") for pk, provider, external in workers],
        variants=variants,
        statuses=list(Response.Status.choices),
        # Only a type whose responses can be put to the vote has votes to filter by.
        vote_states=[*ReviewRound.State.choices, (NO_VOTE, "Never put to the vote")] if isinstance(kind, task_types.Votable) else [],
    )


def _queue_row(kind, r: Response, evidence: _PageEvidence) -> QueueRow:
    """One response of the page as the queue shows it: the work, each answer (a word diff against
    the subject where the type asks for it, a reading's transcription), its votes, flags and checks."""
    payload = r.item.payload or {}
    view = kind.review_view(payload, r.answers or {}, evidence.settings)
    turn_slots = r.item.turn.slot_values if r.item.turn_id and r.item.turn else []
    values = [sv.get("value", "") for sv in turn_slots] or list(view.get("slot_values", []))
    checks = r.checks or {}
    rnd = getattr(r, "review_round", None)
    return QueueRow(
        response_id=r.pk,
        item_id=r.item_id,
        item_position=r.item.position,
        worker_id=r.worker_id,
        worker=str(r.worker),
        status=r.status,
        status_label=r.get_status_display(),
        source=slot_segments(view["subject"], values),
        slots=[(sv.get("slot", ""), sv.get("value", "")) for sv in turn_slots] or [("", v) for v in values],
        shown=_shown(view, values, r, evidence),
        vote_state=rnd.state if rnd else "",
        votes_for=rnd.votes_for if rnd else 0,
        votes_against=rnd.votes_against if rnd else 0,
        votes=evidence.votes.get(r.pk, []),
        response_flags=evidence.report.responses.get(r.pk, []),
        worker_flags=evidence.report.workers.get(r.worker_id, []),
        held=checks.get("held", ""),
        gold=checks.get("gold"),
        overrides=getattr(r, "n_overrides", 0),
        override_reason=(checks.get("override") or {}).get("reason", ""),
        flag_evidence=dict(checks.get("flag_evidence") or {}),
        typing=typing_views(r.typing, r.answers or {}, {entry["name"]: entry["label"] for entry in view["shown"]}),
    )


def typing_views(logs, answers: dict, labels: dict | None = None) -> list[dict]:
    """How each text field came to be, for a reviewer: a one-line summary and a compact timeline
    (`quality.typing`), read from the response's own row (no query). In the order of `labels` (the
    answers as the card shows them, each with its label), then any other field: the stored log's own
    key order is PostgreSQL's (shortest name first), which put typos before paraphrase."""
    if not isinstance(logs, dict):
        return []
    labels = labels or {}
    order = {name: i for i, name in enumerate(labels)}
    views = []
    for name, record in sorted(logs.items(), key=lambda pair: order.get(pair[0], len(order))):
        if not isinstance(record, dict):
            continue
        given = answers.get(name)
        text = given if isinstance(given, str) else ""
        views.append({
            "field": name,
            "label": labels.get(name, name),
            "summary": typing_process.summary(typing_process.features(record, text)),
            "cells": typing_process.timeline(record),
        })
    return views


def _shown(view: dict, values: list, r: Response, evidence: _PageEvidence) -> list[dict]:
    """The answers of one response's review view, each with its word diff, or its transcription and
    the evidence that the turn was read (`readings.reading_evidence`)."""
    readings = evidence.readings.get(r.pk, {})
    shown = []
    for entry in view["shown"]:
        if evidence.variant and evidence.diffs and entry["name"] != evidence.variant:
            continue
        diff = word_diff(view["subject"], entry["text"], values) if evidence.diffs else None
        reading = readings.get(entry.get("reading"))
        asr = None
        if reading is not None:
            asr = {**_asr_of(reading), **reading_evidence(reading, r.pk, r.answers, view["subject"], evidence.same_audio)}
        shown.append({**entry, "diff": diff, "asr": asr})
    return shown


def _asr_of(reading) -> dict:
    """What the review queue shows of a reading's transcription."""
    return {
        "text": reading.asr_text, "confidence": reading.asr_confidence, "error": reading.asr_error,
        "done": reading.transcribed_at is not None, "backend": reading.asr_backend,
    }


def _votes_on(response_ids: list[int]) -> dict[int, list[Vote]]:
    """The votes cast on these responses (by the vote job's workers), with their reasons. One query."""
    if not response_ids:
        return {}
    out = defaultdict(list)
    rows = (
        Response.objects.confirmed()
        .filter(item__subject_response_id__in=response_ids)
        .order_by("submitted_at", "pk")
        .values_list("item__subject_response_id", "worker__provider", "worker__external_id", "answers", "checks", "status")
    )
    for subject, provider, external, answers, checks, status in rows:
        counted = status in Response.COUNTED and not (checks or {}).get("ignored")
        out[subject].append(Vote(f"{provider}:{external}", (answers or {}).get("vote", ""), (answers or {}).get("reason", ""), counted))
    return out
