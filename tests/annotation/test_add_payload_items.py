"""Adding items to an existing payload job (an adaptive campaign's next round): positions continue,
each new item gets the job's redundancy in open slots, the same claim query serves them."""
import pytest

from annotation import task_types
from annotation.models import Item, Job, Slot
from annotation.services.claims import claim_next_slot, submit_response
from annotation.services.jobs import JobError, finish_job, launch_job
from annotation.services.payload_jobs import add_payload_items, create_payload_job

pytestmark = pytest.mark.django_db

def _payload(i):
    return {"context": [{"speaker": "user", "text": f"Question {i}?"}], "response": f"Answer {i}."}


def _job():
    return launch_job(create_payload_job(name="rate", task_type="likert", payloads=[_payload(i) for i in range(3)], redundancy=2))


def test_added_items_continue_the_positions_with_open_slots_and_are_claimed(make_annotator):
    job = _job()
    ids = add_payload_items(job, [_payload(10), _payload(11)])
    items = list(Item.objects.filter(job=job).order_by("position"))
    assert [i.position for i in items] == [0, 1, 2, 3, 4] and [i.pk for i in items[3:]] == ids
    assert items[3].payload["response"] == "Answer 10."
    assert Slot.objects.filter(job=job).count() == 5 * 2
    assert Slot.objects.filter(item_id__in=ids, state=Slot.State.OPEN).count() == 4
    # One rater works through the job: the added items are served by the same claim query.
    worker = make_annotator("adder")[1]
    fields = task_types.get("likert").answer_fields(job.settings)
    done = []
    while (slot := claim_next_slot(job=job, worker=worker)) is not None:
        submit_response(slot_id=slot.pk, worker=worker, answers={f["name"]: next(iter(f["choices"])) for f in fields})
        done.append(slot.item_id)
    assert sorted(done) == sorted(i.pk for i in items)


def test_a_bad_payload_or_a_finished_job_adds_nothing():
    job = _job()
    with pytest.raises(JobError, match="payload 1"):
        add_payload_items(job, [_payload(10), {"response": 5}])
    finish_job(job)
    with pytest.raises(JobError, match="finished"):
        add_payload_items(Job.objects.get(pk=job.pk), [_payload(10)])
    assert Item.objects.filter(job=job).count() == 3 and Slot.objects.filter(job=job).count() == 6
