"""An organizer's request to add a gold item (from the API or the job page) turned into a service call.

A gold item is made from an item of the job that the organizer picks: its payload is copied, so
the gold item looks to a worker like any other item, and the organizer gives the known answer per
answer field (blank fields are not graded). Both front ends share this module so that the same
request gets the same refusal, with a message under the field it is about, before anything is
written; `services.quality.add_gold_item` then checks the answer again and writes the item.
"""
from collections.abc import Mapping

from .. import task_types
from ..models import Item, Job
from .quality import QualityError, add_gold_item


class GoldRequestError(ValueError):
    """The request cannot be carried out; `item`, `gold` and `fields` say what to fix.

    `item`: messages about the picked item; `gold`: messages about the known answer as a whole;
    `fields`: {answer field: [messages]}.
    """

    def __init__(self, *, item=(), gold=(), fields=None):
        self.item = list(item)
        self.gold = list(gold)
        self.fields = {name: list(msgs) for name, msgs in (fields or {}).items()}
        parts = [*self.item, *self.gold, *(f"{n}: {m}" for n, msgs in self.fields.items() for m in msgs)]
        super().__init__("; ".join(parts))

    def as_api_errors(self) -> dict:
        """{"item": [...], "gold": [...] or {field: [...]}} in DRF's shape."""
        out = {}
        if self.item:
            out["item"] = self.item
        if self.fields:
            out["gold"] = {**self.fields, **({"non_field_errors": self.gold} if self.gold else {})}
        elif self.gold:
            out["gold"] = self.gold
        return out


def answer_fields(job: Job) -> list[dict]:
    """The answer fields a known answer may name: [{"name", "label", "help", "choices"?}]."""
    return task_types.get(job.task_type).answer_fields(job.settings)


def add_gold_from_item(job: Job, *, item_id, gold: Mapping) -> Item:
    """A gold item with the payload of item `item_id` of `job` and the known answer `gold`
    ({answer field: value}; empty values are left out). GoldRequestError changes nothing."""
    kind = task_types.get(job.task_type)
    source, item_errors = _source_item(job, item_id)
    if not isinstance(gold, Mapping):
        raise GoldRequestError(item=item_errors, gold=['give the known answer as an object {field: value}, e.g. {"accuracy": 4}'])
    known = {name: value for name, value in gold.items() if value not in (None, "")}
    names = [f["name"] for f in kind.answer_fields(job.settings)]
    gold_errors: list[str] = []
    field_errors: dict[str, list[str]] = {}
    unknown = sorted(set(known) - set(names))
    if unknown:
        gold_errors.append(f"this task type has no answer field {', '.join(map(repr, unknown))}; its fields are {', '.join(names)}")
    elif not known:
        gold_errors.append("give the known answer to at least one field")
    elif source is not None:
        _cleaned, problems = kind.validate(source.payload, job.settings, known)
        for problem in problems:
            if problem.field in known:
                field_errors.setdefault(problem.field, []).append(problem.message)
    if source is None or item_errors or gold_errors or field_errors:
        raise GoldRequestError(item=item_errors, gold=gold_errors, fields=field_errors)
    try:
        return add_gold_item(job, payload=dict(source.payload), gold=known)
    except QualityError as exc:
        raise GoldRequestError(gold=[str(exc)]) from None


def _source_item(job: Job, item_id) -> tuple[Item | None, list[str]]:
    if isinstance(item_id, bool) or not isinstance(item_id, int):
        try:
            item_id = int(str(item_id).strip())
        except ValueError:
            return None, ["give the id of an item of this job (a whole number)"]
    item = Item.objects.filter(job=job, pk=item_id).first()
    if item is None:
        return None, [f"this job has no item with id {item_id}; pick one of its items"]
    if item.gold is not None:
        return None, [f"item {item.position + 1} (id {item.pk}) is a gold item already; pick an ordinary item"]
    return item, []
