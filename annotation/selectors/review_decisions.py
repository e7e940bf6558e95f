"""Reads for the review decisions page (the audit trail of a job's reviewer decisions) and for the
review queue's remembered view.

Decisions are `CheckOverride` rows, newest first, a page at a time; consecutive decisions by one
person with one reason, one outcome and one check, made within a minute, are one bulk decision and
are shown (and can be undone) together. An undone decision shows its undo and its reason.
"""
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.core.paginator import Paginator

from ..models import CheckOverride, Job, Response, ReviewerPreference, ReviewRound, Slot
from .policies import policy_of

PAGE_SIZE = 100
#: Decisions this close in time, with the same person, reason, outcome and check, were one bulk decision.
BULK_WINDOW = timedelta(seconds=60)


@dataclass
class DecisionRow:
    decision_id: int
    response_id: int
    previous: str
    new: str
    check: str
    reason: str
    by: str
    created_at: datetime
    undo_reason: str = ""
    undone_by: str = ""
    undone_at: object = None


@dataclass
class DecisionGroup:
    """One reviewer action: a single decision, or the decisions of one bulk action."""

    new: str
    reason: str
    by: str
    created_at: datetime
    rows: list[DecisionRow] = field(default_factory=list)

    @property
    def open_ids(self) -> list[int]:
        """The decisions of the group that are not undone yet."""
        return [r.decision_id for r in self.rows if not r.undone_at]


@dataclass
class DecisionsPage:
    job: Job
    page: object  # django Page of CheckOverride
    groups: list[DecisionGroup]


def has_vote(job: Job) -> bool:
    """Whether a decision on `job` can overrule a vote: it votes, or voted before voting was turned off."""
    policy = policy_of(job)
    return bool(policy and policy.voting_enabled) or ReviewRound.objects.filter(item__job=job).exists()


def decision_checks(job: Job) -> list[tuple[str, str]]:
    """The verdicts a review decision on `job` can say it overrides, the default first: the vote
    outcome where there is a vote; where there is none, "no automatic verdict" (the vote is not offered)."""
    Check = CheckOverride.Check
    if has_vote(job):
        return [(c.value, c.label) for c in Check if c != Check.NONE]
    return [(c.value, c.label) for c in Check if c != Check.VOTE]


def _user_name(user) -> str:
    return user.get_username() if user is not None else "(automatic)"


def decision_records(job: Job):
    """The job's decisions (CheckOverride rows), newest first, with who made and undid them and the response."""
    return (
        CheckOverride.objects.filter(response__item__job=job)
        .select_related("by", "undo__by", "response")
        .order_by("-created_at", "-pk")
    )


def job_decisions(job: Job, page_number=1) -> DecisionsPage:
    """A page of the job's decisions, newest first, grouped by reviewer action. Two queries and a count."""
    page = Paginator(decision_records(job), PAGE_SIZE).get_page(page_number)
    groups: list[DecisionGroup] = []
    for record in page.object_list:
        undo = getattr(record, "undo", None)
        row = DecisionRow(
            decision_id=record.pk, response_id=record.response_id, previous=record.get_previous_status_display(),
            new=record.get_new_status_display(), check=record.get_check_name_display(), reason=record.reason,
            by=_user_name(record.by), created_at=record.created_at,
            undo_reason=undo.reason if undo else "", undone_by=_user_name(undo.by) if undo else "",
            undone_at=undo.created_at if undo else None,
        )
        if groups and _same_action(groups[-1], row):
            groups[-1].rows.append(row)
        else:
            groups.append(DecisionGroup(new=row.new, reason=row.reason, by=row.by, created_at=row.created_at, rows=[row]))
    return DecisionsPage(job=job, page=page, groups=groups)


def _same_action(group: DecisionGroup, row: DecisionRow) -> bool:
    """Whether `row` (older) was made by the same bulk action as the group's rows."""
    newest_older = group.rows[-1]
    return (
        group.new == row.new and group.reason == row.reason and group.by == row.by
        and newest_older.check == row.check and newest_older.created_at - row.created_at <= BULK_WINDOW
    )


def prefers_compact(user) -> bool:
    """Whether this organizer last chose the review queue's compact table (remembered per user)."""
    return ReviewerPreference.objects.filter(user=user, compact=True).exists()


@dataclass(frozen=True)
class Recollection:
    """Where the re-collection of a turned-down response's item stands: the slots of the item's next
    collection that a worker holds, and the responses written in them (id, status), oldest first."""

    held: int
    written: list[tuple[int, str]]


def recollection_of(response: Response) -> Recollection:
    """The re-collection that took `response`'s place (its item's next collection)."""
    collection = Slot.objects.filter(pk=response.slot_id).values_list("collection", flat=True).first() or 1
    slots = Slot.objects.filter(item_id=response.item_id, collection=collection + 1)
    held = slots.filter(state=Slot.State.CLAIMED).count()
    written = list(
        Response.objects.filter(slot__in=slots).exclude(pk=response.pk).order_by("submitted_at", "pk").values_list("pk", "status")
    )
    return Recollection(held=held, written=written)
