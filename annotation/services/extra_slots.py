"""More raters on items a job already has: open slots added to existing items.

Used where work grows one rating at a time rather than one item at a time (the evaluation app's
adaptive campaigns in rating units add a rater to a response already rated). The new slots are
plain open slots after the item's last index, with the item's position, so the claim query is the
same; the item is open again until they are submitted. A worker who already holds or did a slot
of the item never gets another (`slot_one_worker_per_item`, and the claim query skips those
items), so each added slot is a new rater.
"""
from django.db import transaction
from django.db.models import Max

from ..models import Item, Job, Slot
from ..signals import items_added
from .jobs import JobError

MAX_SLOTS_PER_ITEM = 32767  # Slot.index is a PositiveSmallIntegerField


def add_slots(job: Job, counts: dict[int, int]) -> int:
    """Add `counts[item_id]` open slots to each listed item of `job` (draft, live or paused), in one
    transaction under the job's row lock; returns how many were added. Refused with JobError,
    nothing written, when the job is finished, an item is not the job's, or a count is not a
    whole number of at least 1. After commit `signals.items_added` tells hits, which posts the
    new slots of a live crowd job through its usual path."""
    if not counts:
        return 0
    bad = [item_id for item_id, n in counts.items() if isinstance(n, bool) or not isinstance(n, int) or n < 1]
    if bad:
        raise JobError(f"slots to add must be whole numbers of at least 1 (item {bad[0]})", field="slots")
    with transaction.atomic():
        job = Job.objects.select_for_update().get(pk=job.pk)
        if job.state == Job.State.FINISHED:
            raise JobError(f"job {job.name!r} is finished; raters cannot be added to it", field="state")
        positions = dict(Item.objects.filter(job=job, pk__in=list(counts)).values_list("pk", "position"))
        missing = sorted(set(counts) - set(positions))
        if missing:
            raise JobError(f"items {', '.join(map(str, missing[:10]))} are not items of job {job.name!r}", field="slots")
        last = dict(Slot.objects.filter(item_id__in=list(counts)).values("item_id").annotate(m=Max("index")).values_list("item_id", "m"))
        rows = []
        for item_id, n in counts.items():
            first = last.get(item_id, -1) + 1
            if first + n > MAX_SLOTS_PER_ITEM:
                raise JobError(f"item {item_id} cannot have more than {MAX_SLOTS_PER_ITEM} slots", field="slots")
            rows += [Slot(item_id=item_id, job=job, index=first + k, position=positions[item_id], state=Slot.State.OPEN) for k in range(n)]
        Slot.objects.bulk_create(rows, batch_size=5000)
        Item.objects.filter(pk__in=list(counts)).update(state=Item.State.OPEN)
        transaction.on_commit(lambda: items_added.send(sender=Job, job=job))
    return len(rows)
