"""Reads of FED question sets: the sets, their offensive-word review queue and per-system results."""
from django.db.models import Count, Q

from annotation import task_types
from annotation.models import Response
from evaluation.interactive.selectors import waiting_first
from evaluation.models import FedCandidate, FedSet


def fed_sets():
    return FedSet.objects.select_related("job", "chat_job").annotate(
        n_candidates=Count("candidates"), n_pending=Count("candidates", filter=Q(candidates__review="pending")),
        n_dropped=Count("candidates", filter=Q(candidates__review="dropped")),
    )


def fed_review_queue(fed_set):
    """The set's flagged candidates, waiting ones first."""
    return fed_set.candidates.exclude(review="clean").order_by(waiting_first(), "position")


def fed_results(fed_set) -> list[dict]:
    """Per system: for each FED question the mean of the counted answers (N/A left out), how many
    answers it rests on and how many were N/A; and how many items were rated."""
    if fed_set.job_id is None:
        return []
    # Questions only: a field with a scale (choices). An N/A reason is free text about a question,
    # not a question of its own.
    questions = [f["name"] for f in task_types.get(fed_set.job.task_type).answer_fields(fed_set.job.settings) if f.get("choices")]
    system_of = dict(FedCandidate.objects.filter(fed_set=fed_set, item__isnull=False).values_list("item_id", "system"))
    sums: dict[str, dict] = {}
    for item_id, answers in Response.objects.counted().filter(item__job=fed_set.job).values_list("item_id", "answers").iterator():
        per = sums.setdefault(system_of.get(item_id, "?"), {"items": set(), **{q: [0, 0, 0] for q in questions}})
        per["items"].add(item_id)
        for q in questions:
            if isinstance(answers.get(q), int):
                per[q][0] += answers[q]
                per[q][1] += 1
            elif f"{q}_na_reason" in answers:
                per[q][2] += 1
    rows = []
    for system in sorted(sums):
        per = sums[system]
        rows.append({
            "system": system, "items": len(per["items"]),
            "questions": [{"name": q, "mean": round(per[q][0] / per[q][1], 4) if per[q][1] else None, "n": per[q][1], "na": per[q][2]} for q in questions],
        })
    return rows
