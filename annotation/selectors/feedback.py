"""Feedback to writers: their responses that voters turned down, with the voters' reasons.

The vote form tells voters that a reason "helps the writer"; these reads carry it back. The home
page reads it with `voted_down` (two queries); the work page gets the same rows inside its one read
(`selectors.work.work_slot` annotates `feedback_json` with `feedback_subquery`), so the annotation
loop keeps its query budget.
"""
import json
from dataclasses import dataclass, field

from django.db.models import OuterRef, Subquery

from .. import task_types
from ..models import Job, Response, ReviewRound, Worker

VOTED_DOWN = (ReviewRound.State.RECOLLECTED, ReviewRound.State.EXHAUSTED)
SHOWN = 5  # the latest voted-down responses shown: enough to learn from, short enough to read


@dataclass
class Feedback:
    response_id: int
    job_name: str
    answers: dict  # the writer's own answers, as saved
    reasons: list[str] = field(default_factory=list)  # the reasons of the voters who said no
    #: Per part voted on one by one (a rewrite's variants): how many voters said no to it.
    parts_against: dict[str, int] = field(default_factory=dict)
    #: The labels of the job's answer fields, in the form's order (the stored answers' own order is
    #: the database's: PostgreSQL's jsonb sorts keys by length).
    labels: dict[str, str] = field(default_factory=dict)

    @property
    def shown(self) -> list[tuple[str, object, bool]]:
        """(label, text, turned down) of each answer, in the form's order, then any others."""
        order: list[str] = [name for name in self.labels if name in self.answers] + [k for k in self.answers if k not in self.labels]
        return [(self.labels.get(name, name), self.answers[name], name in self.parts_against) for name in order]

    @property
    def turned_down(self) -> list[tuple[str, int]]:
        """(label, voters who said no) of each part turned down, in the form's order."""
        order: list[str] = [p for p in self.labels if p in self.parts_against] + [p for p in self.parts_against if p not in self.labels]
        return [(self.labels.get(part, part), self.parts_against[part]) for part in order]

    def add_vote(self, vote: dict) -> None:
        if vote.get("reason"):
            self.reasons.append(vote["reason"])
        for part, verdict in (vote.get("parts") or {}).items():
            if verdict == "against":
                self.parts_against[part] = self.parts_against.get(part, 0) + 1


def _against():
    """Counted "no" votes on a voted-down response."""
    return Response.objects.counted().filter(answers__vote="against", item__subject_response__review_round__state__in=VOTED_DOWN)


def labels_of(fields: list[dict]) -> dict[str, str]:
    """Answer fields' labels by name, in the form's order."""
    return {f["name"]: f.get("label") or f["name"] for f in fields}


def answer_labels(job: Job) -> dict[str, str]:
    """The job's answer fields' labels by name, in the form's order."""
    return labels_of(task_types.get(job.task_type).answer_fields(job.settings))


def voted_down(worker: Worker, limit: int = SHOWN) -> list[Feedback]:
    """The worker's latest voted-down responses in any job, with the voters' reasons. Two queries."""
    rounds = list(
        ReviewRound.objects.filter(response__worker=worker, state__in=VOTED_DOWN)
        .select_related("response__item__job")
        .order_by("-decided_at", "-pk")[:limit]
    )
    labels = {r.response.item.job_id: answer_labels(r.response.item.job) for r in rounds}
    found = {
        r.response_id: Feedback(r.response_id, r.response.item.job.name, r.response.answers or {}, labels=labels[r.response.item.job_id])
        for r in rounds
    }
    rows = _against().filter(item__subject_response_id__in=list(found)).order_by("submitted_at")
    for subject, answers in rows.values_list("item__subject_response_id", "answers"):
        found[subject].add_vote(answers or {})
    return [found[r.response_id] for r in rounds]


def feedback_subquery(worker_id: int, rows_aggregate):
    """For the work page's one read: the "no" votes on the worker's voted-down responses in the
    slot's job, as JSON rows [subject id, subject answers, vote answers] (`rows_aggregate` is the
    work selector's JSON aggregate, which speaks both SQLite and PostgreSQL)."""
    votes = _against().filter(
        item__subject_response__worker_id=worker_id, item__subject_response__item__job_id=OuterRef("job_id")
    )
    return Subquery(
        votes.order_by()
        .values("item__subject_response__worker_id")
        .annotate(rows=rows_aggregate("item__subject_response_id", "item__subject_response__answers", "answers"))
        .values("rows")[:1]
    )


def feedback_from_json(text: str | None, labels: dict[str, str], limit: int = SHOWN) -> list[Feedback]:
    """The work page's feedback from `feedback_json`, on responses of the page's job (whose answer
    `labels` the page has); newest responses first."""
    if not text:
        return []
    by_response: dict[int, Feedback] = {}
    for subject, subject_answers, vote in json.loads(text):
        # SQLite's JSON_ARRAY keeps a JSON column as text; PostgreSQL's JSON_BUILD_ARRAY as JSON.
        subject_answers = json.loads(subject_answers) if isinstance(subject_answers, str) else subject_answers
        vote = json.loads(vote) if isinstance(vote, str) else vote
        by_response.setdefault(subject, Feedback(subject, "", subject_answers or {}, labels=labels)).add_vote(vote or {})
    return [by_response[k] for k in sorted(by_response, reverse=True)[:limit]]
