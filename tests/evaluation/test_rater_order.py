"""Issue 4: the order of a campaign's items is randomised per rater.

A campaign's Likert job shuffles its items once (positions); each rater then meets them in their
own rotation of that order (OrdersClaims.claim_start), while every claim rule still holds. Rewrite
jobs keep the plain position order.
"""
import threading
from collections import Counter

import pytest
from django.db import connection, connections

from annotation import task_types
from annotation.models import Item, Response, Slot, Worker
from annotation.services.claims import claim_next_slot, submit_response
from annotation.task_types.questionnaire import rotation_offset
from evaluation.campaigns.services.crowd import create_crowd_campaign, launch_crowd_job
from evaluation.models import CampaignItem
from tests.factories import good_answers, make_corpus, make_live_job

from .crowd_data import make_test_set, rate_everything

LIKERT = task_types.get("likert")


@pytest.fixture
def crowd_job(tmp_path, db):
    test_set, finalists = make_test_set(tmp_path / "data")
    crowd = create_crowd_campaign("order-crowd", test_set, finalists, order_seed=7)
    launch_crowd_job(crowd.campaign)
    crowd.refresh_from_db()
    return crowd.job


def raters_with_different_starts(job, count=2):
    """Crowd raters whose rotations start at different items (a hash can collide, so look further)."""
    chosen, starts = [], set()
    n = 0
    while len(chosen) < count:
        worker = Worker.objects.create(provider="prolific", external_id=f"rater-{n}")
        n += 1
        start = LIKERT.claim_start(job, worker)
        if start not in starts:
            starts.add(start)
            chosen.append(worker)
    return chosen


def positions(item_ids):
    by_id = dict(Item.objects.filter(pk__in=item_ids).values_list("pk", "position"))
    return [by_id[i] for i in item_ids]


@pytest.mark.django_db
def test_two_raters_start_at_different_items_and_each_rates_every_item_once(crowd_job, django_capture_on_commit_callbacks):
    first, second = raters_with_different_starts(crowd_job)
    met_first = rate_everything(crowd_job, first, django_capture_on_commit_callbacks)
    met_second = rate_everything(crowd_job, second, django_capture_on_commit_callbacks)

    every_item = set(Item.objects.filter(job=crowd_job).values_list("pk", flat=True))
    assert len(every_item) == CampaignItem.objects.filter(item__job=crowd_job).count() == 15
    for met in (met_first, met_second):
        assert len(met) == len(set(met)) == len(every_item)  # never the same item twice
        assert set(met) == every_item  # every item once
    assert met_first[0] != met_second[0]
    assert met_first != met_second

    # Each rater's order is the shuffled order rotated: ascending positions from their start, then wrapping.
    for met in (met_first, met_second):
        order = positions(met)
        start = order[0]
        assert order == list(range(start, 15)) + list(range(0, start))
    assert positions(met_first)[0] == rotation_offset(crowd_job.pk, first.pk, 15)


@pytest.mark.django_db
def test_raters_claiming_in_turn_never_share_a_slot_and_fill_the_job(crowd_job):
    """Three raters for three slots per item, claiming in turn: all 45 slots filled, one response per rater per item."""
    raters = raters_with_different_starts(crowd_job, count=3)
    done = {r.pk: [] for r in raters}
    active = list(raters)
    while active:
        for rater in list(active):
            slot = claim_next_slot(job=crowd_job, worker=rater)
            if slot is None:
                active.remove(rater)
                continue
            submit_response(slot_id=slot.pk, worker=rater, answers={"appropriateness": 4, "accuracy": 3})
            done[rater.pk].append(slot.item_id)
    for items in done.values():
        assert len(items) == len(set(items)) == 15
    pairs = Counter(Response.objects.filter(item__job=crowd_job).values_list("item_id", "worker_id"))
    assert len(pairs) == 45 and max(pairs.values()) == 1
    assert not Slot.objects.filter(job=crowd_job).exclude(state=Slot.State.SUBMITTED).exists()


@pytest.mark.django_db
def test_a_raters_order_is_the_same_on_every_claim(crowd_job):
    rater = Worker.objects.create(provider="prolific", external_id="steady")
    first = claim_next_slot(job=crowd_job, worker=rater)
    # Claiming again while holding the item returns the same claim; the offset does not drift.
    assert claim_next_slot(job=crowd_job, worker=rater).pk == first.pk
    assert LIKERT.claim_start(crowd_job, rater) == LIKERT.claim_start(crowd_job, rater) == first.position


def test_rotation_offset_is_stable_and_in_range():
    offsets = [rotation_offset(12, w, 15) for w in range(200)]
    assert all(0 <= o < 15 for o in offsets)
    assert offsets == [rotation_offset(12, w, 15) for w in range(200)]
    assert len(set(offsets)) > 5  # spread over the items, not one start for all
    assert rotation_offset(12, 3, 1) == 0


@pytest.mark.django_db
def test_a_rewrite_job_keeps_the_plain_position_order(make_annotator):
    job = make_live_job(make_corpus(dialogs=3, user_turns=2), redundancy=2)
    for name in ("ann", "bob"):
        _user, worker = make_annotator(name)
        assert not isinstance(task_types.get(job.task_type), task_types.OrdersClaims)
        met = []
        while (slot := claim_next_slot(job=job, worker=worker)) is not None:
            submit_response(slot_id=slot.pk, worker=worker, answers=good_answers(slot.item))
            met.append(slot.position)
        assert met == list(range(6))


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_many_raters_at_once_keep_every_claim_rule(tmp_path):
    """On PostgreSQL (row locks): 12 raters rating concurrently, each from their own start."""
    assert connection.vendor == "postgresql"
    test_set, finalists = make_test_set(tmp_path / "data")
    crowd = create_crowd_campaign("order-crowd-pg", test_set, finalists, order_seed=3, redundancy=3)
    job = launch_crowd_job(crowd.campaign)
    raters = [Worker.objects.create(provider="prolific", external_id=f"pg-{i}") for i in range(12)]
    errors, firsts = [], []
    barrier = threading.Barrier(len(raters))

    def work(rater):
        try:
            barrier.wait()
            first = True
            while (slot := claim_next_slot(job=job, worker=rater)) is not None:
                if first:
                    firsts.append(slot.position)
                    first = False
                submit_response(slot_id=slot.pk, worker=rater, answers={"appropriateness": 2, "accuracy": 5})
        except Exception as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(repr(exc))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=work, args=(r,)) for r in raters]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    assert errors == []
    per_item = Counter(Response.objects.filter(item__job=job).values_list("item_id", flat=True))
    assert len(per_item) == 15 and all(n == 3 for n in per_item.values())
    pairs = Counter(Response.objects.filter(item__job=job).values_list("item_id", "worker_id"))
    assert max(pairs.values()) == 1
    assert len(set(firsts)) > 1  # raters did not all start on the same item
