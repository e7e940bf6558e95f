"""Adaptive campaigns in rating units: a round adds one rater at a time, as the replay draws ratings.

With `Campaign.adaptive_unit` "rating" the round order (`CampaignJob.round_order`) is one seeded
order of [instance, rater number] units, `redundancy` per instance, shared by every system; a look
is at a number of units. A round gives each active entry the next units of the order: a unit on an
instance the entry has an item for adds one open slot to that item (`annotation.services.extra_slots`:
a new rater, since a worker holds one slot per item), a unit on a new instance makes its item.
So a live campaign gets what `allocation.replay` gets with `unit="rating"`: a rating of a new
instance where that tells more, another rating of a rated one where the order says so, and the
same intervals (`allocation.live_look` on a rating-unit pool: unit k of an instance is its k-th
rater, weighted 1 / redundancy, clustered by instance).
"""
from __future__ import annotations

import random
from typing import TYPE_CHECKING

from django.db import transaction

from annotation.services.extra_slots import add_slots
from annotation.services.jobs import JobError
from annotation.services.payload_jobs import add_payload_items
from evaluation.campaigns.services.crowd import build_rows, rating_units_per_instance
from evaluation.errors import EvaluationInputError
from evaluation.models import Campaign, CampaignItem, CampaignJob, Rating
from hits.models import JobCrowdConfig
from hits.services.postings import BudgetExceeded, reserve_postings
from quorum.lazy_modules import lazy

if TYPE_CHECKING:
    import numpy as np

    from evaluation.stats import allocation
else:
    np = lazy("numpy")
    allocation = lazy("evaluation.stats.allocation")


def uses_rating_units(campaign: Campaign) -> bool:
    return campaign.adaptive_unit == "rating"


def pool(campaign: Campaign, crowd: CampaignJob, entries: list, detection) -> allocation.Pool:
    """The allocation pool in rating units: column u is unit `crowd.round_order[u]`, scored for an
    entry as the mean over questions of the answers of the entry's k-th rater of that instance
    (raters in the order their ratings were recorded); NaN while not rated."""
    units = [tuple(unit) for unit in crowd.round_order]
    column = {unit: u for u, unit in enumerate(units)}
    redundancy = 1 + max(k for _i, k in units)
    row = {e.pk: s for s, e in enumerate(entries)}
    questions = list(campaign.questions)
    sums = np.zeros((len(entries), len(units)))
    counts = np.zeros_like(sums)
    raters: dict[tuple[int, int], dict[str, int]] = {}  # (entry row, instance) -> {rater: k}
    ratings = Rating.objects.filter(campaign=campaign).order_by("pk").values_list("entry_id", "instance", "rater", "question", "value")
    for entry_id, instance, rater, question, value in ratings.iterator(chunk_size=20000):
        if entry_id not in row or question not in questions:
            continue
        seen = raters.setdefault((row[entry_id], instance), {})
        k = seen.setdefault(rater, len(seen))
        u = column.get((instance, k))
        if u is not None:
            sums[row[entry_id], u] += value
            counts[row[entry_id], u] += 1
    with np.errstate(invalid="ignore", divide="ignore"):
        scores = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
    instance_column = {instance: j for j, instance in enumerate(crowd.instances)}
    return allocation.pool_from_arrays(
        [e.label for e in entries], scores, (counts > 0).astype(float), [_factor(campaign, e) for e in entries],
        kinds=[e.kind for e in entries], weights=np.where(counts > 0, 1.0 / redundancy, 0.0), unit="rating",
        instances=np.array([instance_column[i] for i, _k in units]), detection=detection,
    )


def _factor(campaign: Campaign, entry) -> float:
    truth = [bool(label.get("target")) for label in campaign.test_set.labels]
    return allocation.eq1_factor(truth, None if entry.outputs is None else [bool(o.get("target")) for o in entry.outputs])


def next_round(campaign: Campaign, crowd: CampaignJob, entries: list, active: list, prefixes: dict, next_n: int) -> tuple[list, dict]:
    """What the round that takes the active entries to `next_n` units adds: (rows of new items
    (entry, instance, payload) with the raters each needs, {existing item id: raters to add})."""
    wanted: dict[tuple[str, int], int] = {}
    for label in active:
        for instance, raters in rating_units_per_instance(crowd.round_order[prefixes.get(label, 0) : next_n]).items():
            wanted[(label, instance)] = raters
    existing = _existing_items(campaign)
    extra = {existing[key]: n for key, n in wanted.items() if key in existing}
    new = {key: n for key, n in wanted.items() if key not in existing}
    rows, _skipped = build_rows(campaign, sorted({i for _label, i in new}))
    by_label = {e.label for e in entries}
    return [(entry, i, payload, new[(entry.label, i)]) for entry, i, payload in rows if (entry.label, i) in new and entry.label in by_label], extra


def _existing_items(campaign: Campaign) -> dict[tuple[str, int], int]:
    items = CampaignItem.objects.filter(campaign=campaign).select_related("entry__team").only("item_id", "instance", "entry__entry_id", "entry__team__team_id")
    return {(pair.entry.label, pair.instance): pair.item_id for pair in items}


def add_round(crowd: CampaignJob, rows: list, extra: dict, look_number: int) -> bool:
    """Add the round (new items with their raters, more raters on rated items) and, on a crowd
    job, reserve the postings within its money budget; False (nothing added) when it cannot."""
    random.Random(f"{crowd.order_seed}-round-{look_number}").shuffle(rows)

    def write():
        more = dict(extra)
        if rows:
            item_ids = new_items(crowd, [(entry, i, payload) for entry, i, payload, _n in rows])
            more.update({item_id: n - 1 for item_id, (*_row, n) in zip(item_ids, rows, strict=True) if n > 1})
        add_slots(crowd.job, more)

    return added_with_postings(crowd, write)


def new_items(crowd: CampaignJob, rows: list) -> list[int]:
    """Items for the rows (entry, instance, payload) after the job's last, each linked to its
    entry and instance; their ids in row order."""
    item_ids = add_payload_items(crowd.job, [payload for _entry, _i, payload in rows])
    CampaignItem.objects.bulk_create(
        [CampaignItem(campaign_id=crowd.campaign_id, item_id=item_id, entry=entry, instance=i) for item_id, (entry, i, _p) in zip(item_ids, rows, strict=True)],
        batch_size=5000,
    )
    return item_ids


def added_with_postings(crowd: CampaignJob, write) -> bool:
    """Run `write` (a round's items and slots) and, on a crowd job, reserve the postings of what it
    added in the same transaction; False, nothing written, when the job's money budget cannot
    carry them. Shared by both kinds of rounds (`services.adaptive`)."""
    try:
        with transaction.atomic():
            write()
            if JobCrowdConfig.objects.filter(job=crowd.job, rehearsal=False).exists():
                reserve_postings(crowd.job)
    except BudgetExceeded:
        return False
    except JobError as exc:
        raise EvaluationInputError(str(exc)) from exc
    return True
