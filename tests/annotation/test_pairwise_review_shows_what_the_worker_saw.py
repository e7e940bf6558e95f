"""A pairwise response in the review queue read "Source: <text> | <text>" and "Response B is better":
nothing said which text was B, nor that the worker had seen B as "Response 1" (the order is drawn
per worker and recorded, but the review left it out). A reviewer could not check a choice against
what the worker saw. The source now names A and B, and the answer says which was shown on the left, as Response 1."""
import html

import pytest
from django.urls import reverse

from annotation.services.claims import claim_next_slot, submit_response
from annotation.services.jobs import launch_job
from annotation.services.payload_jobs import create_payload_job
from annotation.task_types.pairwise import left_side

pytestmark = pytest.mark.django_db

PAIR = {
    "context": [{"speaker": "user", "text": "Is breakfast served?"}],
    "instance": "c1",
    "a": {"system": "sys-A", "text": "Breakfast is served from 7 to 10."},
    "b": {"system": "sys-B", "text": "I cannot say."},
}


def test_the_review_names_a_and_b_and_the_order_the_worker_saw(make_annotator, organizer, client):
    job = launch_job(create_payload_job(name="Breakfast pairs", task_type="pairwise", payloads=[PAIR], redundancy=1))
    worker = make_annotator("rita")[1]
    slot = claim_next_slot(job=job, worker=worker)
    left = left_side(job.pk, slot.item_id, worker.pk)  # what the work page drew for this worker
    submit_response(slot_id=slot.id, worker=worker, answers={"winner": left, "left": left, "reason": ""})
    client.force_login(organizer)
    page = html.unescape(client.get(reverse("organizer:job-review", args=[job.pk]) + "?status=").content.decode())
    assert f"A: {PAIR['a']['text']} | B: {PAIR['b']['text']}" in page
    right = "b" if left == "a" else "a"
    assert f"{left.upper()} as Response 1 (left), {right.upper()} as Response 2" in page
    assert f"Response {left.upper()} is better" in page  # the choice, named as the source names it
