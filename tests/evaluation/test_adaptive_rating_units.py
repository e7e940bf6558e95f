"""Adaptive crowd campaigns in rating units: a round adds one rater at a time, to items already
rated or to new ones, in the replay's order of (instance, rater) units (`services.rating_rounds`)."""
from collections import Counter

import pytest

from annotation.models import Job, Slot
from annotation.services.extra_slots import add_slots
from annotation.services.jobs import JobError
from evaluation.campaigns.services.campaigns import create_campaign, set_adaptive
from evaluation.campaigns.services.crowd import create_crowd_campaign, launch_crowd_job
from evaluation.errors import EvaluationInputError
from evaluation.models import CampaignItem, CampaignLook, Rating
from tests.evaluation.test_adaptive_campaign import N_INSTANCES, QUALITY, _rate_until_no_work, _write_test_set

pytestmark = [pytest.mark.postgres, pytest.mark.usefixtures("rotations_by_name")]
RATERS, ROUND_UNITS = 3, 120


def _slot_counts(campaign):
    return Counter(Slot.objects.filter(item_id__in=CampaignItem.objects.filter(campaign=campaign).values("item_id")).values_list("item_id", flat=True))


@pytest.mark.django_db
def test_rounds_add_raters_to_rated_items_one_at_a_time(tmp_path, make_annotator, django_capture_on_commit_callbacks):
    test_set, entries = _write_test_set(tmp_path / "data")
    crowd = create_crowd_campaign(
        "units", test_set, entries, with_references=False, redundancy=RATERS, order_seed=11,
        adaptive={"confidence": 0.95, "round_size": ROUND_UNITS, "budget": 1100, "unit": "rating"},
    )
    launch_crowd_job(crowd.campaign)
    crowd.refresh_from_db()
    campaign, job = crowd.campaign, crowd.job
    # One seeded order of (instance, rater number) units, 3 per instance; looks every 120 units.
    assert sorted(map(tuple, crowd.round_order)) == [(i, k) for i in range(N_INSTANCES) for k in range(RATERS)]
    assert crowd.round_sizes[0] == ROUND_UNITS and crowd.round_sizes[-1] == RATERS * N_INSTANCES
    # The first round: each entry's item on an instance has as many slots (raters) as the first units rate it.
    first = Counter(i for i, _k in crowd.round_order[:ROUND_UNITS])
    before = _slot_counts(campaign)
    assert sum(before.values()) == ROUND_UNITS * len(QUALITY)
    for pair in CampaignItem.objects.filter(campaign=campaign):
        assert before[pair.item_id] == first[pair.instance]
    assert max(first.values()) > 1 and min(first.values()) == 1

    workers = [make_annotator(f"rater{i}")[1] for i in range(4)]
    _rate_until_no_work(job, workers, django_capture_on_commit_callbacks)

    looks = list(CampaignLook.objects.filter(campaign=campaign).order_by("number"))
    assert len(looks) >= 2 and looks[-1].decision != CampaignLook.Decision.CONTINUE
    after = _slot_counts(campaign)
    # Later rounds added raters to items the first round had already rated, never past 3 an item.
    assert any(after[item] > n for item, n in before.items())
    assert max(after.values()) <= RATERS
    assert Slot.objects.filter(job=job).count() <= 1100
    # Every slot of an item went to a different rater, and each rating is a unit of the pool.
    taken = Slot.objects.filter(job=job, worker__isnull=False).values_list("item_id", "worker_id")
    assert len(set(taken)) == len(taken)
    assert Rating.objects.filter(campaign=campaign).values("rater").distinct().count() >= RATERS
    # The looks count rating units, and the clearly best entry ends ahead of the clearly worst.
    assert all(look.instances in crowd.round_sizes for look in looks)
    pair = next(p for p in looks[-1].pairs if {p["a"], p["b"]} == {"best/e", "worst/e"})
    assert pair["state"] == "resolved" and pair["better"] == "best/e" and pair["target"].startswith("finite")


@pytest.mark.django_db
def test_rating_units_are_a_checked_setting(tmp_path):
    test_set, entries = _write_test_set(tmp_path / "data")
    campaign = create_campaign("checked", test_set, entries)
    with pytest.raises(EvaluationInputError, match="unit must be one of instance, rating"):
        set_adaptive(campaign, unit="rater")
    campaign.refresh_from_db()
    assert campaign.adaptive is False and campaign.adaptive_unit == "instance"
    with pytest.raises(EvaluationInputError, match=r"not smaller than the 600 rating units"):
        create_crowd_campaign("too big", test_set, entries, with_references=False, redundancy=3, adaptive={"round_size": 600, "unit": "rating"})


@pytest.mark.django_db
def test_extra_slots_are_refused_on_a_finished_job_or_foreign_items(tmp_path):
    test_set, entries = _write_test_set(tmp_path / "data")
    crowd = create_crowd_campaign("slots", test_set, entries, with_references=False, redundancy=1, order_seed=3)
    item_id = CampaignItem.objects.filter(campaign=crowd.campaign).values_list("item_id", flat=True).first()
    with pytest.raises(JobError, match="whole numbers of at least 1"):
        add_slots(crowd.job, {item_id: 0})
    with pytest.raises(JobError, match="are not items of job"):
        add_slots(crowd.job, {item_id: 1, 10**9: 1})
    assert Slot.objects.filter(item_id=item_id).count() == 1
    assert add_slots(crowd.job, {item_id: 2}) == 2
    assert sorted(Slot.objects.filter(item_id=item_id).values_list("index", flat=True)) == [0, 1, 2]
    Job.objects.filter(pk=crowd.job.pk).update(state=Job.State.FINISHED)
    with pytest.raises(JobError, match="finished"):
        add_slots(crowd.job, {item_id: 1})
