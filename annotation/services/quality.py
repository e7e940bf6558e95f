"""Writes for quality control: quality settings, gold items and onboarding, soft blocks, overrides.

Gold items are items of a job with a known answer (`Item.gold`). They have no slots of their own:
when the schedule in `annotation.quality.gold` says a worker's next item should be gold, a slot is
added to a gold item that worker has not answered and claimed for them in the same transaction
(`serve_gold`, called by claim_next_slot). A job with `onboarding_items` > 0 first gives each
worker that many gold items; a worker who fails them, or later fails more than the allowed share
of gold, is soft-blocked on the job: they get no more work there, and their responses that are
not settled yet are held (status `held`, the reason in `checks["held"]`) for a reviewer.
"""
from datetime import timedelta

from django.db import transaction
from django.db.models import Max, Q
from django.utils import timezone

from .. import extensions, task_types
from ..models import CheckOverride, Item, Job, JobFlagReport, QualityPolicy, Response, ReviewRound, Slot, Worker, WorkerStanding
from ..quality import gold as gold_schedule
from ..quality.flags import NEVER_REJECTS, count_flags
from ..selectors.policies import policy_of
from ..selectors.quality import job_agreement, job_flags
from ..selectors.review_decisions import decision_checks
from . import reliability, voting
from .errors import ClaimError
from .response_status import transition
from .stored_reports import store_latest

SESSION_LOOKBACK = 500  # submissions read to find the start of a session


class QualityError(ValueError):
    """A quality-control request that cannot be carried out; the message says what to change."""


# --- Settings ----------------------------------------------------------------------------------

RATE_FIELDS = (
    "gold_start_rate", "gold_floor_rate", "onboarding_pass_rate", "gold_max_failure_rate", "fast_ratio", "flag_share",
    "straight_line_share", "low_agreement", "paste_share", "near_duplicate_similarity", "transcription_pause_share",
)
COUNT_FIELDS = (
    "gold_decay_items", "session_gap_minutes", "onboarding_items", "gold_min_answered", "pattern_min_ratings",
    "transcription_min_chars", "offscreen_min_chars", "synthetic_min_chars", "implausible_iki_ms", "revision_free_min_chars",
)
COUNT_MAX = 10000
# Counts that must be at least 1 (the others may be 0): a session gap of 0 minutes makes every
# submission a new session; patterns judged on 0 ratings flag every worker and divide by zero on
# the job and worker pages, in the API and in the flag sweep; a typing flag "from 0 characters"
# flags every logged answer, the honest ones with "0 characters inserted". The form and the API
# serializer use these same minimums (a database check, QualityPolicy.Meta, holds the first two).
COUNT_MINIMUMS = {"session_gap_minutes": 1, "pattern_min_ratings": 1,
                  "offscreen_min_chars": 1, "synthetic_min_chars": 1, "revision_free_min_chars": 1}


def set_quality(job: Job, **values) -> QualityPolicy:
    """Create or update a job's quality settings (voting is set with services.voting.enable_voting)."""
    known = set(RATE_FIELDS) | set(COUNT_FIELDS) | {"flags_reject"}
    unknown = sorted(set(values) - known)
    if unknown:
        raise QualityError(f"unknown quality settings: {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    errors = []
    for name in RATE_FIELDS:
        if name in values:
            v = values[name]
            if not isinstance(v, (int, float)) or isinstance(v, bool) or not 0 <= v <= 1:
                errors.append(f"{name} must be a number from 0 to 1")
    for name in COUNT_FIELDS:
        if name in values:
            v, low = values[name], COUNT_MINIMUMS.get(name, 0)
            if not isinstance(v, int) or isinstance(v, bool) or v < low or v > COUNT_MAX:
                errors.append(f"{name} must be a whole number from {low} to {COUNT_MAX}")
    if "flags_reject" in values and not isinstance(values["flags_reject"], bool):
        errors.append("flags_reject must be true or false")
    if errors:
        raise QualityError("; ".join(errors))
    policy, _ = QualityPolicy.objects.update_or_create(job=job, defaults=values)
    return policy


# --- Gold items ---------------------------------------------------------------------------------


def add_gold_item(job: Job, *, payload: dict, gold: dict) -> Item:
    """Add a gold item: what the worker sees (`payload`, in the task type's shape) and the known answer.

    The known answer is checked by the task type's own validation, so it can be met at all.
    """
    kind = task_types.get(job.task_type)
    if not isinstance(gold, dict) or not gold:
        raise QualityError('give the known answer as an object, e.g. {"vote": "against"}')
    fields = {f["name"] for f in kind.answer_fields(job.settings)}
    unknown = sorted(set(gold) - fields)
    if unknown:
        raise QualityError(f"the known answer names fields this task type does not have: {', '.join(unknown)}")
    cleaned, problems = kind.validate(payload, job.settings, gold)
    problems = [p for p in problems if p.field in gold]
    if problems:
        raise QualityError("the known answer is not a valid answer: " + "; ".join(p.message for p in problems))
    with transaction.atomic():
        Job.objects.select_for_update().get(pk=job.pk)  # positions are allocated one at a time
        last = Item.objects.filter(job=job).aggregate(m=Max("position"))["m"]
        return Item.objects.create(
            job=job, position=(last + 1) if last is not None else 0, payload=payload, gold={k: cleaned[k] for k in gold}
        )


def _session_counts(job: Job, worker: Worker, policy: QualityPolicy, now) -> tuple[int, int]:
    rows = list(
        Response.objects.filter(worker=worker, item__job=job)
        .order_by("-submitted_at")
        .values_list("submitted_at", "item__gold")[:SESSION_LOOKBACK]
    )
    if rows and now - rows[0][0] >= timedelta(minutes=policy.session_gap_minutes):
        return 0, 0  # the last submission is long ago: a new session starts now
    n = gold_schedule.session_start([t for t, _ in rows], timedelta(minutes=policy.session_gap_minutes))
    return n, sum(1 for _, gold in rows[:n] if gold is not None)


_UNREAD = object()


def gate_claim(job: Job, worker: Worker, now, *, policy=_UNREAD) -> Slot | None:
    """Called by claim_next_slot inside its transaction before ordinary work is looked for.

    Raises ClaimError for a soft-blocked worker; returns a claimed gold slot when gold is due (or
    onboarding is under way); None when the worker should get ordinary work. `policy` is the job's
    quality policy (None: it has none) when the caller has read it already.
    """
    if policy is _UNREAD:
        policy = policy_of(job)
    if policy is None:
        return None
    standing = WorkerStanding.objects.filter(job=job, worker=worker).first()
    if standing is not None and standing.state == WorkerStanding.State.SOFT_BLOCKED:
        raise ClaimError("You are paused on this job while a reviewer looks at your recent work.")
    onboarding = policy.onboarding_items > 0 and (standing is None or standing.state == WorkerStanding.State.ONBOARDING)
    if onboarding:
        slot = serve_gold(job, worker, now)
        if slot is None and (standing is None or standing.gold_answered < policy.onboarding_items):
            answered = standing.gold_answered if standing else 0
            if answered == 0 and not Item.objects.filter(job=job, gold__isnull=False).exists():
                return None  # no gold items exist: onboarding cannot be run, so it does not hold work back
            raise ClaimError("The qualification items of this job are not available right now; please try later.")
        return slot
    done, gold_done = _session_counts(job, worker, policy, now)
    if gold_schedule.gold_due(done, gold_done, policy.gold_start_rate, policy.gold_floor_rate, policy.gold_decay_items):
        return serve_gold(job, worker, now)
    return None


def serve_gold(job: Job, worker: Worker, now) -> Slot | None:
    """Claim a new slot on a gold item this worker has not had; None when none is left for them."""
    had = Slot.objects.filter(job=job, worker=worker).values("item_id")
    item = (
        Item.objects.filter(job=job, gold__isnull=False).exclude(pk__in=had).order_by("position").first()
    )
    if item is None:
        return None
    Item.objects.select_for_update().get(pk=item.pk)  # one new slot index at a time
    last = Slot.objects.filter(item=item).aggregate(m=Max("index"))["m"]
    next_index = 0 if last is None else last + 1
    return Slot.objects.create(
        item=item,
        job=job,
        index=next_index,
        position=item.position,
        state=Slot.State.CLAIMED,
        worker=worker,
        claimed_at=now,
        expires_at=now + timedelta(minutes=job.claim_timeout_minutes),
    )


def grade_gold_answer(response: Response, kind) -> bool:
    """Grade a stored answer to a gold item, update the worker's standing, soft-block if warranted.

    Called by `responses` when a real response of a gold item arrives, inside its transaction; runs once
    per stored response. The gold answer itself is paid and kept, but never exported as data.
    """
    item = response.item
    correct = bool(task_types.grade_gold(kind, item.gold or {}, response.answers))
    checks = dict(response.checks or {})
    checks["gold"] = {"correct": correct, "expected": item.gold}
    Response.objects.filter(pk=response.pk).update(checks=checks)
    response.checks = checks
    policy = QualityPolicy.objects.filter(job_id=item.job_id).first()
    standing, _ = WorkerStanding.objects.select_for_update().get_or_create(
        job_id=item.job_id,
        worker_id=response.worker_id,
        defaults={"state": WorkerStanding.State.ONBOARDING if policy and policy.onboarding_items else WorkerStanding.State.QUALIFIED},
    )
    standing = WorkerStanding.objects.select_for_update().get(pk=standing.pk)
    standing.gold_answered += 1
    standing.gold_failed += 0 if correct else 1
    if policy is not None and standing.state == WorkerStanding.State.ONBOARDING:
        verdict = gold_schedule.onboarding_verdict(
            standing.gold_answered, standing.gold_answered - standing.gold_failed, policy.onboarding_items, policy.onboarding_pass_rate
        )
        if verdict == "qualified":
            standing.state = WorkerStanding.State.QUALIFIED
        elif verdict == "failed":
            _soft_block(standing, f"failed the onboarding qualification ({standing.gold_failed} of {standing.gold_answered} wrong)")
    elif (
        policy is not None
        and standing.state == WorkerStanding.State.QUALIFIED
        and gold_schedule.fails_too_many(standing.gold_answered, standing.gold_failed, policy.gold_min_answered, policy.gold_max_failure_rate)
    ):
        _soft_block(standing, f"failed {standing.gold_failed} of {standing.gold_answered} gold items")
    standing.save()
    return correct


def _soft_block(standing: WorkerStanding, reason: str) -> None:
    standing.state = WorkerStanding.State.SOFT_BLOCKED
    standing.reason = reason
    hold_pending_work(standing.worker_id, standing.job_id, f"held for review: the author {reason}")


def hold_pending_work(worker_id: int, job_id: int, reason: str) -> int:
    """Hold a worker's unsettled, non-gold responses in a job for review. Returns how many.

    Unsettled: accepted or under vote, and no reviewer has decided on it (an override stands).
    """
    held = 0
    pending = Response.objects.filter(
        worker_id=worker_id, item__job_id=job_id, item__gold__isnull=True,
        status__in=[Response.Status.ACCEPTED, Response.Status.AWAITING_REVIEW],
        overrides__isnull=True,
    )
    for response in pending.only("pk", "checks", "status"):
        checks = dict(response.checks or {})
        checks["held"] = reason
        Response.objects.filter(pk=response.pk).update(checks=checks)
        transition(response, Response.Status.HELD, actor="gold", reason=reason)
        held += 1
    return held


def unblock_worker(worker: Worker, job: Job, *, by=None) -> WorkerStanding:
    """A reviewer lets a soft-blocked worker work again (their gold record is kept)."""
    with transaction.atomic():
        standing = WorkerStanding.objects.select_for_update().filter(worker=worker, job=job).first()
        if standing is None or standing.state != WorkerStanding.State.SOFT_BLOCKED:
            raise QualityError("this worker is not soft-blocked on this job")
        standing.state = WorkerStanding.State.QUALIFIED
        standing.reason = ""
        standing.save()
    return standing


# --- Overrides ----------------------------------------------------------------------------------

SETTLED = set(Response.SETTLED)


def override_verdict(
    response: Response, *, status: str, reason: str, check: str | None = None, by=None, recollect: bool = False
) -> CheckOverride:
    """Replace an automatic verdict (vote, rewrite checks, gold, flags) on a response, with the reason;
    `check` by default the job's first of `decision_checks` (the vote outcome where there is a vote).

    The response gets `status`; a vote still running on it is cancelled (votes held by voters are
    then ignored). With `recollect`, a rejected response's item is reopened for a new response.
    Repeating the same override changes nothing and returns the first record.
    """
    reason = (reason or "").strip()
    if not reason:
        raise QualityError("give the reason for overriding the automatic verdict")
    if status not in SETTLED:
        raise QualityError(f"status must be one of {', '.join(sorted(SETTLED))}")
    check = check or decision_checks(response.item.job)[0][0]
    if check not in CheckOverride.Check.values:
        raise QualityError(f"check must be one of {', '.join(CheckOverride.Check.values)}")
    if recollect and status == Response.Status.ACCEPTED:
        raise QualityError("only a rejected response can be re-collected")
    _refuse_unsettleable(response, status)  # before the vote is cancelled: a refusal changes nothing
    voting.cancel_review(response)  # its own transaction; takes the vote item lock first
    with transaction.atomic():
        Item.objects.select_for_update().get(pk=response.item_id)
        response = Response.objects.select_for_update().get(pk=response.pk)
        if response.status == Response.Status.AWAITING_CONFIRMATION:
            raise QualityError("this response came through a crowd entry the provider has not confirmed yet; it cannot be decided before that")
        last = response.overrides.order_by("-created_at", "-pk").first()
        if last is not None and last.new_status == status and last.check_name == check and response.status == status:
            return last
        _refuse_unsettleable(response, status)  # again under the lock: a settlement may have been sent since
        record = CheckOverride.objects.create(
            response=response, check_name=check, previous_status=response.status, new_status=status, reason=reason, by=by
        )
        checks = dict(response.checks or {})
        checks.pop("held", None)
        checks["override"] = {"status": status, "check": check, "reason": reason}
        Response.objects.filter(pk=response.pk).update(checks=checks)
        # A decision with no automatic verdict behind it overrides nothing, and its audit row says so.
        said = "Reviewer's decision" if check == CheckOverride.Check.NONE else f"{record.get_check_name_display()} overridden"
        transition(response, status, actor="reviewer", by=by, reason=f"{said}: {reason}")
        already_reopened = recollection_outstanding(response, record)
        if recollect and not already_reopened:
            voting.reopen_item(response.item_id, collection=voting.collection_of(response) + 1)
            record.recollected = True  # so an undo knows the item was reopened (services.review_undo)
            record.save(update_fields=["recollected"])
            ReviewRound.objects.filter(response=response).update(state=ReviewRound.State.RECOLLECTED)
        elif status == Response.Status.ACCEPTED and already_reopened and voting.withdraw_recollection(response):
            record.recollection_withdrawn = True  # so an undo knows the new slot is gone (services.review_undo)
            record.save(update_fields=["recollection_withdrawn"])
    return record


def _refuse_unsettleable(response: Response, status: str) -> None:
    """QualityError when moving the response to `status` would contradict money that moved at its
    crowd provider (`extensions.settlement_guards`: a paid approval cannot become a rejection)."""
    if response.status == status:
        return
    for guard in extensions.settlement_guards.values():
        refusal = guard(response, status)
        if refusal:
            raise QualityError(refusal)


def recollection_outstanding(response: Response, decision: CheckOverride) -> bool:
    """Whether the response's item is being collected again in its place: the vote or a reviewer
    re-collected it, and no later decision took that back (`voting.withdraw_recollection`). The vote
    always comes first: a reviewer's decision cancels a vote still running."""
    last = (
        response.overrides.exclude(pk=decision.pk).filter(Q(recollected=True) | Q(recollection_withdrawn=True))
        .order_by("-created_at", "-pk").first()
    )
    if last is not None:
        return last.recollected
    return ReviewRound.objects.filter(response=response, state=ReviewRound.State.RECOLLECTED).exists()


# --- Flags ----------------------------------------------------------------------------------------


def apply_flags(job: Job) -> dict:
    """Compute the job's flags and store them: the whole report (`JobFlagReport`, which the pages
    and the API read) and each response's flags in its checks; where the job says so
    (`flags_reject`), soft-reject the flagged responses that are not settled by a reviewer, on the
    flags that may reject (not `quality.flags.NEVER_REJECTS`: a reading worth a listen).
    Idempotent. Returns counts. Run by the beat sweep and by "recompute now", never by a page."""
    policy = QualityPolicy.objects.filter(job=job).first()
    computed_at = timezone.now()  # before reading: a response stored later is not in this report
    report = job_flags(job)
    reliability.fit_job(job, report, computed_at)  # stores the model; adds its flags to the report
    # Agreement reads every counted response too, so it is computed here with the flags, not by the page.
    agreement = [vars(a) for a in job_agreement(job)]
    store_flag_report(job, report, computed_at, agreement)
    recorded = rejected = 0
    for response_id, codes in report.responses.items():
        with transaction.atomic():
            response = Response.objects.select_for_update().filter(pk=response_id).first()
            if response is None:
                continue
            checks = dict(response.checks or {})
            status = response.status
            rejecting = sorted(set(codes) - NEVER_REJECTS)  # a reading worth a listen is for a person to hear
            reject = (
                policy is not None and policy.flags_reject and bool(rejecting) and status == Response.Status.ACCEPTED
                and not response.overrides.exists()  # a reviewer's decision stands
            )
            evidence = {code: why for code, why in report.evidence.get(response_id, {}).items() if code in codes}
            if checks.get("flags") == sorted(codes) and checks.get("flag_evidence", {}) == evidence and not reject:
                continue
            checks["flags"] = sorted(codes)
            checks["flag_evidence"] = evidence  # why, for the reviewer: each flag with what it measured
            Response.objects.filter(pk=response.pk).update(checks=checks)
            if reject:
                transition(response, Response.Status.EXCLUDED, actor="flags", reason="flagged: " + "; ".join(
                    f"{code} ({evidence[code]})" if code in evidence else code for code in rejecting
                ))
                rejected += 1
            recorded += 1
    return {"flagged_responses": len(report.responses), "recorded": recorded, "soft_rejected": rejected,
            "flagged_workers": len(report.flagged_workers())}


def store_flag_report(job: Job, report, computed_at, agreement=()) -> JobFlagReport:
    """Replace the job's stored flag report with `report` (a quality.flags.FlagReport), unless a
    run that started later has already stored its own: the sweep and "recompute now" may overlap."""
    data = report.as_json()
    values = {
        "computed_at": computed_at,
        "responses_seen": data["responses_seen"],
        "responses_flagged": len(data["responses"]),
        "response_flag_counts": count_flags(data["responses"]),  # what the job page names, without reading them all
        "response_flags": data["responses"],
        "worker_flags": data["workers"],
        "worker_measures": data["measures"],
        "agreement": list(agreement),
    }
    return store_latest(JobFlagReport, job, values)
