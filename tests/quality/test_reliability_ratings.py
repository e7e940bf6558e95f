"""The model over categorical questionnaire answers, with gold answers as known truth (issue 22)."""
import csv

import pytest

from annotation.models import Item
from annotation.selectors.flags import stored_flags
from annotation.selectors.reliability import judgements, stored_reliability
from annotation.services.claims import claim_next_slot, submit_response
from annotation.services.exports import export_job
from annotation.services.quality import apply_flags

from .test_gold_items_ui import likert_job

pytestmark = pytest.mark.django_db


def _answer_all(job, worker, answer):
    while (slot := claim_next_slot(job=job, worker=worker)) is not None:
        submit_response(slot_id=slot.pk, worker=worker, answers=answer(slot.item))


def test_a_rating_job_is_modelled_per_question_and_a_rater_giving_top_marks_to_everything_is_flagged(make_annotator, tmp_path):
    job = likert_job(items=30)
    job.redundancy = 3
    job.save(update_fields=["redundancy"])
    for item in job.items.all():
        for k in range(1, 3):
            item.slots.create(job=job, index=k, position=item.position)
    gold = job.items.order_by("position").first()
    Item.objects.filter(pk=gold.pk).update(gold={"accuracy": 5, "appropriateness": 5})
    truth = {item.pk: 5 if item.position % 2 else 1 for item in job.items.all()}
    careful = [make_annotator(f"careful{i}")[1] for i in range(2)]
    noisy = make_annotator("noisy")[1]
    for worker in careful:
        _answer_all(job, worker, lambda item: {"accuracy": truth[item.pk], "appropriateness": truth[item.pk]})
    _answer_all(job, noisy, lambda item: {"accuracy": 5, "appropriateness": 5})  # top marks whatever the item

    data = judgements(job)
    questions = {task.split(":")[1] for task in data.table["task"]}
    assert questions == {"accuracy", "appropriateness"}
    assert data.gold == {f"{gold.pk}:accuracy": "5", f"{gold.pk}:appropriateness": "5"}
    apply_flags(job)
    fit = stored_reliability(job)
    assert fit.tasks[f"{gold.pk}:accuracy"]["outcome"] == "5"  # known truth
    assert fit.worker(careful[0].pk)["spammer_score"] > fit.worker(noisy.pk)["spammer_score"]
    assert "unreliable_rater" in {f.code for f in stored_flags(job).report.workers.get(noisy.pk, [])}
    export_job(job, tmp_path / "ratings")
    with open(tmp_path / "ratings" / "items.csv", encoding="utf-8", newline="") as fh:
        header = next(csv.reader(fh))
    assert "accuracy_model" in header and "accuracy_model_confidence" in header and "accuracy" in header
