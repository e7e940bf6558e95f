"""Voting with re-collection (PROTOCOLS.md section 5, CGoDial).

Every response of a voting job is shown, as an item of the job's vote job, to
`votes_per_response` workers other than its author (three by default). When all votes are in:

- `against_threshold` or more votes against (two of three by default) -> the response is rejected
  or soft-rejected as the job says and, below `max_rounds`, its item reopens with one new slot for
  a new response: round k+1. At `max_rounds` the item is not reopened but flagged for the builder.
- otherwise the response is accepted.

While under vote a response stays `submitted`: it is neither exported nor paid as accepted
before the vote settles it.

The state machine is ReviewRound.State: voting -> passed | recollected | exhausted | cancelled.
Every transition happens here, under row locks, in this order: vote item, then review round,
then the reviewed item (submit_response has already locked the item it stores a response on).
The decision counts the stored votes rather than incrementing counters, and only a round in
state `voting` is decided, so running it twice changes nothing.

A vote that arrives after its round was settled (a reviewer overrode the response and cancelled
the vote while the voter held a claim) is stored, paid, and ignored: `checks["ignored"]` says why.
Refusing it would lose work the voter did in good faith.
"""
from decimal import Decimal

from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from quorum import numbers

from .. import task_types
from ..models import DecisionRule, Item, Job, OnVotedDown, QualityPolicy, Response, ReviewRound, Slot
from ..quality import reliability
from ..selectors.policies import policy_of
from ..signals import items_added, places_withdrawn
from ..task_types.vote import AGAINST
from . import model_votes, voting_tally
from .response_status import transition

DEFAULT_VOTE_REWARD = Decimal("0.10")  # CGoDial paid $0.10-0.20 per turn
VOTE_REWARD_HELP = (
    "What one vote pays its worker on the vote job, in USD (CGoDial paid $0.10-0.20 a turn); left empty, the vote job's "
    f"pay as it is (${DEFAULT_VOTE_REWARD} for a new one). It can change until the vote job has votes; each response "
    "costs this times the votes per response, again for each re-collection."
)
VOTE_INSTRUCTIONS = (
    "Another worker wrote the text shown for the user's turn. Vote yes if you can recognize what "
    "the user means and the text keeps every slot value listed under the user's original turn; vote no "
    "if it is unrecognizable "
    "or ambiguous. A reason helps. You never see your own work here."
)


class VotingError(ValueError):
    """Voting cannot be set up as asked; the message says what to change."""


def _validate_settings(votes_per_response, against_threshold, max_rounds, on_voted_down):
    errors = []
    for name, value in (("votes_per_response", votes_per_response), ("against_threshold", against_threshold), ("max_rounds", max_rounds)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            errors.append(f"{name} must be a whole number of at least 1")
    if not errors and against_threshold > votes_per_response:
        errors.append("against_threshold cannot exceed votes_per_response")
    if on_voted_down not in OnVotedDown.values:
        errors.append(f"on_voted_down must be one of {', '.join(OnVotedDown.values)}")
    if errors:
        raise VotingError("; ".join(errors))


def _validate_model_settings(decision_rule, model_sure, model_max_votes, votes_per_response):
    errors = []
    if decision_rule not in DecisionRule.values:
        errors.append(f"decision_rule must be one of {', '.join(DecisionRule.values)}")
    if not isinstance(model_sure, (int, float)) or isinstance(model_sure, bool) or not 0.5 < model_sure <= 1:
        errors.append("model_sure must be a number above 0.5 and at most 1")
    if not isinstance(model_max_votes, int) or isinstance(model_max_votes, bool) or model_max_votes < 1:
        errors.append("model_max_votes must be a whole number of at least 1")
    elif isinstance(votes_per_response, int) and model_max_votes < votes_per_response:
        errors.append("model_max_votes cannot be below votes_per_response")
    if errors:
        raise VotingError("; ".join(errors))


def enable_voting(
    job: Job,
    *,
    votes_per_response: int = 3,
    against_threshold: int = 2,
    max_rounds: int = 3,
    on_voted_down: str = OnVotedDown.SOFT_REJECT,
    vote_reward: Decimal | str | None = None,
    decision_rule: str = DecisionRule.PUBLISHED,
    model_sure: float = 0.85,
    model_max_votes: int = 5,
) -> Job:
    """Turn voting on for `job` (idempotent; later calls update the settings). Returns the vote job.
    `vote_reward` (USD per vote) None: the vote job's pay as it is, DEFAULT_VOTE_REWARD for a new one.

    The vote job is live from the start when the job is (it only ever holds items for responses
    that exist); a draft job's vote job is a draft too, and goes live with it (`jobs.launch_job`).
    The job's accepted responses that were never voted on are put to the vote now.
    """
    _validate_settings(votes_per_response, against_threshold, max_rounds, on_voted_down)
    _validate_model_settings(decision_rule, model_sure, model_max_votes, votes_per_response)
    kind = task_types.capability(task_types.get(job.task_type), task_types.Votable)
    if kind is None:
        raise VotingError(f"responses of task type {job.task_type!r} cannot be voted on")
    with transaction.atomic():
        job = Job.objects.select_for_update().get(pk=job.pk)
        QualityPolicy.objects.update_or_create(
            job=job,
            defaults={
                "voting_enabled": True,
                "votes_per_response": votes_per_response,
                "against_threshold": against_threshold,
                "max_rounds": max_rounds,
                "on_voted_down": on_voted_down,
                "decision_rule": decision_rule,
                "model_sure": model_sure,
                "model_max_votes": model_max_votes,
            },
        )
        vote_job = vote_job_of(job)
        if vote_job is None:
            vote_key, = task_types.keys_with(task_types.FromResponses)  # the vote type
            vote_kind = task_types.get(vote_key)
            vote_job = Job.objects.create(
                name=f"{job.name} · votes"[:200],
                task_type=vote_kind.key,
                settings=vote_kind.clean_settings(
                    {"parts": kind.vote_parts(job.settings), **({"question": kind.vote_question} if kind.vote_question else {})}
                ),
                instructions=VOTE_INSTRUCTIONS,
                redundancy=votes_per_response,
                reward=Decimal(str(vote_reward if vote_reward is not None else DEFAULT_VOTE_REWARD)),
                claim_timeout_minutes=job.claim_timeout_minutes,
                state=Job.State.DRAFT if job.state == Job.State.DRAFT else Job.State.LIVE,
                launched_at=None if job.state == Job.State.DRAFT else timezone.now(),
                reviews=job,
                created_by=job.created_by,
            )
            vote_job.annotators.set(job.annotators.all())
        else:
            changes: dict = {}
            if vote_job.redundancy != votes_per_response:
                changes["redundancy"] = votes_per_response
            if vote_reward is not None and vote_job.reward != Decimal(str(vote_reward)):
                # A vote already given was offered at the old pay: the pay changes only before the first.
                if Response.objects.filter(item__job=vote_job).exists():
                    raise VotingError(f"vote_reward cannot change: the vote job has votes already, so its pay stays {numbers.money(vote_job.reward)} per vote")
                changes["reward"] = Decimal(str(vote_reward))
            if changes:
                Job.objects.filter(pk=vote_job.pk).update(**changes)
    backlog = Response.objects.filter(item__job=job, item__gold__isnull=True, status=Response.Status.ACCEPTED, review_round__isnull=True)
    for response_id in backlog.values_list("pk", flat=True).iterator():
        with transaction.atomic():
            response = Response.objects.select_related("item__job").get(pk=response_id)
            Item.objects.select_for_update().get(pk=response.item_id)
            start_review_if_enabled(response)
    return vote_job


def disable_voting(job: Job) -> None:
    """New responses are no longer voted on; rounds already voting are finished as started."""
    QualityPolicy.objects.filter(job=job).update(voting_enabled=False)


def vote_job_of(job: Job) -> Job | None:
    return Job.objects.filter(reviews=job, task_type__in=task_types.keys_with(task_types.FromResponses)).order_by("pk").first()


def start_review_if_enabled(response: Response) -> ReviewRound | None:
    """Put a stored response to the vote if its job votes. Call with the response's item locked.

    Idempotent: a response has at most one round (unique), and its vote item's position is the
    response's id (unique per job).
    """
    job = response.item.job
    policy = policy_of(job)  # no query when the job came with its policy (the work page's read)
    if policy is None or not policy.voting_enabled:
        return None
    existing = ReviewRound.objects.filter(response=response).first()
    if existing is not None:
        return existing
    vote_job = vote_job_of(job)
    if vote_job is None:  # voting enabled by hand without a vote job: nothing can be voted on
        return None
    item = response.item
    # The round is the collection of the response's slot: each of an item's `redundancy` slots is
    # collected again on its own, so two responses of one item voted down in round 1 are both
    # replaced in round 2.
    round_no = collection_of(response)
    kind = task_types.get(job.task_type)
    view = kind.review_view(item.payload, response.answers, job.settings)
    payload = {
        "utterance": view["subject"], "slot_values": view["slot_values"], "shown": view["shown"],
        "history": _history(item), "round": round_no, "source_job": job.name,
    }
    vote_item = Item.objects.create(job=vote_job, position=response.pk, payload=payload, subject_response=response)
    Slot.objects.bulk_create(
        [
            Slot(item=vote_item, job=vote_job, index=k, position=vote_item.position, barred_worker_id=response.worker_id)
            for k in range(policy.votes_per_response)
        ]
    )
    if response.status == Response.Status.ACCEPTED:
        transition(response, Response.Status.AWAITING_REVIEW, actor="voting", reason=f"put to the vote (round {round_no})")
    return ReviewRound.objects.create(item=item, response=response, vote_item=vote_item, round=round_no)


def _history(item: Item) -> list[dict]:
    """The dialog before the reviewed turn, so voters judge the turn in its context."""
    turn = item.turn if item.turn_id is not None else None
    if turn is None:
        return []
    rows = turn.dialog.turns.filter(index__lt=turn.index).order_by("index").values_list("speaker", "text")
    return [{"speaker": speaker, "text": text} for speaker, text in rows]


def record_vote(vote: Response) -> ReviewRound | None:
    """Count a stored vote; decide the round when the last vote is in. Call with the vote item locked."""
    # Most votes are not the last: counted and stored in one statement. The last one, and one for
    # a round settled already, go on below as before.
    counted = voting_tally.count_votes(vote.item_id)
    if counted is not None and counted.waits_for_more:
        return counted.round
    # The response and its job's policy come with the round (the decision reads both); only the
    # round's row is locked, as before.
    round_ = (
        ReviewRound.objects.select_for_update(of=("self",)).select_related("response__item__job__quality")
        .filter(vote_item_id=vote.item_id).first()
    )
    if round_ is None:
        return None
    if round_.state != ReviewRound.State.VOTING:
        if "ignored" in (vote.checks or {}) or (round_.decided_at and vote.submitted_at <= round_.decided_at):
            return round_  # already marked, or counted in the decision: a repeated call changes nothing
        checks = dict(vote.checks or {})
        checks["ignored"] = (
            f"The response was already settled ({round_.get_state_display().lower()}) when this vote "
            "arrived; the vote is kept but not counted."
        )
        Response.objects.filter(pk=vote.pk).update(checks=checks)
        vote.checks = checks
        return round_
    # A voting round's votes were counted and stored by the statement above (`voting_tally`, the one
    # count: voted part by part, against is the worst part's, so the one rule, `voted_down`, decides both).
    policy = round_.response.item.job.quality
    if round_.votes_for + round_.votes_against < policy.votes_per_response:
        return round_
    if policy.decision_rule == DecisionRule.MODEL:
        voters_votes = list(Response.objects.filter(item_id=vote.item_id).values_list("worker_id", "answers"))
        return _decide_by_model(round_, policy, voters_votes, vote.item.job_id)  # the vote's item is loaded by submit
    return _decide(round_, policy)


def _decide_by_model(round_: ReviewRound, policy: QualityPolicy, voters_votes: list, vote_job_id: int) -> ReviewRound:
    decision = model_votes.model_call(vote_job_id, policy, voters_votes)
    if decision.call == reliability.ASK_MORE:
        if round_.vote_item_id is None:  # the vote item is gone (its job deleted): no one to ask
            return _decide(round_, policy)
        model_votes.ask_one_more_voter(round_.vote_item_id, round_.response.worker_id)
        round_.save(update_fields=["votes_for", "votes_against"])
        return round_
    return _decide(round_, policy, down=decision.call == reliability.RECOLLECT, failed=decision.failed_parts, why=decision.why)


def tally_parts(votes) -> dict[str, int]:
    """Votes against per part, from the answers of one vote item; empty for whole-response votes. Pure."""
    against: dict[str, int] = {}
    for answers in votes:
        for part, verdict in (answers.get("parts") or {}).items():
            against[part] = against.get(part, 0) + (verdict == AGAINST)
    return against


def voted_down(votes_against: int, against_threshold: int) -> bool:
    """The CGoDial rule, stated directly: at least `against_threshold` (two) of the votes are against."""
    return votes_against >= against_threshold


def _decide(round_: ReviewRound, policy: QualityPolicy, down: bool | None = None, failed=None, why: str = "") -> ReviewRound:
    """Settle the round: by the published rule, or as the model decided (`down`, `failed`, `why`)."""
    now = timezone.now()
    response = round_.response
    tally = f"{round_.votes_against} of {round_.votes_for + round_.votes_against} votes against" + (f"; {why}" if why else "")
    if down is None:
        down = voted_down(round_.votes_against, policy.against_threshold)
    # A response held meanwhile (its author failed gold) waits for the reviewer; the round is decided all the same.
    settle = response.status == Response.Status.AWAITING_REVIEW
    if down:
        status = Response.Status.REJECTED if policy.on_voted_down == OnVotedDown.REJECT else Response.Status.EXCLUDED
        if failed is None:
            failed = sorted(p for p, n in tally_parts(_votes_of(round_)).items() if voted_down(n, policy.against_threshold))
        if failed:  # the writer sees which parts were turned down (selectors.feedback)
            checks = {**(response.checks or {}), "voted_down_parts": failed}
            Response.objects.filter(pk=response.pk).update(checks=checks)
            response.checks = checks
            tally += f" on {', '.join(failed)}"
        if settle:
            transition(response, status, actor="voting", reason=f"voted down: {tally}")
        if round_.round >= policy.max_rounds:
            round_.state = ReviewRound.State.EXHAUSTED  # flagged: the builder decides
        else:
            reopen_item(round_.item_id, collection=round_.round + 1)
            round_.state = ReviewRound.State.RECOLLECTED
    else:
        if settle:
            transition(response, Response.Status.ACCEPTED, actor="voting", reason=f"passed the vote: {tally}")
        round_.state = ReviewRound.State.PASSED
    round_.decided_at = now
    round_.save(update_fields=["votes_for", "votes_against", "state", "decided_at"])
    return round_


def _votes_of(round_: ReviewRound) -> list[dict]:
    return list(Response.objects.filter(item_id=round_.vote_item_id).values_list("answers", flat=True)) if round_.vote_item_id else []


def collection_of(response: Response) -> int:
    """Which collection of its item a response is (its slot's; 1 for the first). The submission
    stores a response with its slot in hand: then no query."""
    if Response.slot.is_cached(response):
        return response.slot.collection
    return Slot.objects.filter(pk=response.slot_id).values_list("collection", flat=True).first() or 1


def reopen_item(item_id: int, *, collection: int) -> Slot:
    """Add one open slot to an item so that a new worker collects it again; the item is open again.

    `collection` is the new slot's: one more than the turned-down response's for a re-collection,
    the same for a place taken by an entry the provider refuted. The author of the rejected
    response keeps their old slot, so `slot_one_worker_per_item` keeps them from collecting the
    same item again. A new collection is announced after commit (`signals.items_added`), so a job
    with crowd settings posts its place, as it posts a launch's.
    """
    item = Item.objects.select_for_update().get(pk=item_id)
    next_index = (Slot.objects.filter(item=item).aggregate(m=Max("index"))["m"] or 0) + 1
    # A new collection needs a new place at the job's crowd; a refuted entry's replacement reuses the
    # place its assignment gave back.
    new_place = not Slot.objects.filter(item=item, collection=collection).exists()
    slot = Slot.objects.create(item=item, job_id=item.job_id, index=next_index, position=item.position, collection=collection)
    if item.state != Item.State.OPEN:
        item.state = Item.State.OPEN
        item.save(update_fields=["state"])
    if new_place:
        transaction.on_commit(lambda: items_added.send(sender=Job, job=Job.objects.get(pk=item.job_id), recollection=True))
    return slot


def withdraw_recollection(response: Response) -> bool:
    """Take back the new slot a turned-down response's re-collection added, now that a reviewer
    accepted the response after all: the item would otherwise collect one response more than its
    redundancy, paid work the builder does not need. Only a slot no one has started is taken back;
    False when the re-collection is already in a worker's hands (or done). Call with the item locked.
    """
    spare = Slot.objects.filter(item_id=response.item_id, collection=collection_of(response) + 1, state=Slot.State.OPEN).order_by("-index").first()
    if spare is None:
        return False
    spare.delete()
    if not Slot.objects.filter(item_id=response.item_id).exclude(state=Slot.State.SUBMITTED).exists():
        Item.objects.filter(pk=response.item_id).update(state=Item.State.COMPLETE)
    # A crowd may hold a place for it (`items_added` posted one): told, so that it can stop listing it.
    job_id = spare.job_id
    transaction.on_commit(lambda: places_withdrawn.send(sender=Job, job=Job.objects.get(pk=job_id)))
    return True


def cancel_review(response: Response) -> ReviewRound | None:
    """Stop the vote on a response a reviewer has settled. Votes still held by voters will be ignored."""
    round_ = ReviewRound.objects.filter(response=response).first()
    if round_ is None or round_.state != ReviewRound.State.VOTING:
        return round_
    with transaction.atomic():
        if round_.vote_item_id is not None:
            Item.objects.select_for_update().get(pk=round_.vote_item_id)
        round_ = ReviewRound.objects.select_for_update().get(pk=round_.pk)
        if round_.state != ReviewRound.State.VOTING:
            return round_
        if round_.vote_item_id is not None:
            Slot.objects.filter(item_id=round_.vote_item_id, state=Slot.State.OPEN).delete()
            if not Slot.objects.filter(item_id=round_.vote_item_id, state=Slot.State.CLAIMED).exists():
                Item.objects.filter(pk=round_.vote_item_id).update(state=Item.State.COMPLETE)
        round_.state = ReviewRound.State.CANCELLED
        round_.decided_at = timezone.now()
        round_.save(update_fields=["state", "decided_at"])
    return round_
