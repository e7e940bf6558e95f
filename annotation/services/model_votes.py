"""Deciding a vote by the reliability model (issue 22; the job setting `decision_rule = model`).

Each voted part's posterior that it is unusable comes from the voters' confusion matrices as the
last flag sweep stored them (`JobReliability` of the vote job; one query, no model fit in the
request) and the label priors; a voter the model has not seen yet gets
`quality.reliability.DEFAULT_ACCURACY`. A part is re-collected or passed once its posterior is
`model_sure` either way; otherwise one more voter is asked, up to `model_max_votes`. A response is
voted down when any part is, as under the published rule.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..models import Item, QualityPolicy, Slot
from ..quality import reliability
from ..selectors.reliability import stored_reliability
from ..task_types.vote import AGAINST, FOR

LABELS = sorted([AGAINST, FOR])  # the order the fit stores its labels in
NO_FIT_PRIORS = [0.5, 0.5]


@dataclass(frozen=True)
class ModelCall:
    call: str  # reliability.PASS | RECOLLECT | ASK_MORE
    failed_parts: list[str]
    why: str  # the posteriors, for the transition's reason


def model_call(vote_job_id: int, policy: QualityPolicy, votes: list[tuple[int, dict]]) -> ModelCall:
    """The model's call on one vote item from its votes [(voter id, answers)]."""
    fit = stored_reliability(vote_job_id, with_tasks=False)
    usable_fit = fit is not None and list(fit.labels) == LABELS
    confusions = {int(w): r["confusion"] for w, r in fit.workers.items()} if fit is not None and usable_fit else {}
    priors = fit.priors if fit is not None and usable_fit else NO_FIT_PRIORS
    against = LABELS.index(AGAINST)
    by_part: dict[str, list[tuple[int, int]]] = {}
    for worker, answers in votes:
        verdicts = answers.get("parts") or ({"": answers["vote"]} if answers.get("vote") in LABELS else {})
        for part, verdict in verdicts.items():
            if verdict in LABELS:
                by_part.setdefault(part, []).append((worker, LABELS.index(verdict)))
    calls, shown = {}, []
    for part, given in by_part.items():
        p = float(reliability.posterior(given, confusions, priors)[against])
        calls[part] = reliability.decide(p, len(given), sure=policy.model_sure, max_votes=policy.model_max_votes)
        shown.append(f"{part + ': ' if part else ''}P(unusable) = {p:.2f}")
    failed = sorted(p for p, c in calls.items() if c == reliability.RECOLLECT and p)
    if reliability.RECOLLECT in calls.values():
        call = reliability.RECOLLECT
    elif reliability.ASK_MORE in calls.values():
        call = reliability.ASK_MORE
    else:
        call = reliability.PASS
    source = "the model of the last sweep" if usable_fit else "no sweep yet: every voter at the default accuracy"
    return ModelCall(call, failed, f"{'; '.join(shown)} ({source})")


def ask_one_more_voter(vote_item_id: int, author_id: int) -> Slot:
    """One more open slot on a vote item (the author still barred). Call with the vote item locked."""
    from django.db.models import Max

    item = Item.objects.get(pk=vote_item_id)
    index = (Slot.objects.filter(item=item).aggregate(m=Max("index"))["m"] or 0) + 1
    slot = Slot.objects.create(item=item, job_id=item.job_id, index=index, position=item.position, barred_worker_id=author_id)
    if item.state != Item.State.OPEN:
        Item.objects.filter(pk=item.pk).update(state=Item.State.OPEN)
    return slot
