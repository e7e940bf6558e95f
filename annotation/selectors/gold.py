"""Reads for gold items: a job's gold items with what workers made of them."""
from dataclasses import dataclass

from django.db.models import Count, Q

from ..models import Item, Job

SHOWN_CHARS = 200


@dataclass(frozen=True)
class GoldItemRow:
    item_id: int
    position: int
    shown: str  # what a worker is asked about, shortened
    expected: dict  # the known answer
    answered: int  # graded answers
    correct: int
    pass_rate: float | None  # correct / answered; None before any answer

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def gold_items(job: Job) -> list[GoldItemRow]:
    """Every gold item of the job in position order, with its graded answers and pass rate.

    An answer counts once graded (`checks["gold"]`, written when the response is stored), whatever
    its later status: the pass rate says how hard the item is, not how workers were paid.
    """
    rows = (
        Item.objects.filter(job=job, gold__isnull=False)
        .annotate(
            answered=Count("responses", filter=Q(responses__checks__has_key="gold")),
            correct=Count("responses", filter=Q(responses__checks__gold__correct=True)),
        )
        .order_by("position")
        .values_list("pk", "position", "payload", "gold", "answered", "correct")
    )
    return [
        GoldItemRow(
            item_id=pk,
            position=position,
            shown=_shown(payload),
            expected=dict(gold or {}),
            answered=answered,
            correct=correct,
            pass_rate=correct / answered if answered else None,
        )
        for pk, position, payload, gold, answered, correct in rows
    ]


def item_numbered(job: Job, number: int) -> int | None:
    """The id of the job's item that pages number `number` (its position + 1: the review queue and
    the preview say "item 3"), or None."""
    return Item.objects.filter(job=job, position=number - 1).values_list("pk", flat=True).first() if number >= 1 else None


def highest_item_number(job: Job) -> int:
    """The highest number a page gives an item of the job (0 without items)."""
    highest = Item.objects.filter(job=job).order_by("-position").values_list("position", flat=True).first()
    return highest + 1 if highest is not None else 0


def _shown(payload) -> str:
    """The text a worker judges: the utterance (rewrites, scores, votes) or the response (ratings)."""
    if not isinstance(payload, dict):
        return ""
    text = payload.get("utterance") or payload.get("response") or ""
    text = str(text)
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"
