"""What each kind of export holds, as a builder reads it: the answer columns of `responses.csv`
carry every worker's answer as a real value (not a Python repr), and the README describes the data
the export holds, in the words of the job's task type."""
import csv

import pytest

from annotation.services.claims import claim_next_slot, submit_response
from annotation.services.exports import export_job
from annotation.services.jobs import create_job, launch_job
from tests.factories import make_corpus

pytestmark = pytest.mark.django_db


def read_csv(path):
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def oos_job(make_annotator, dialogs=2, **settings):
    corpus = make_corpus(dialogs=dialogs, user_turns=2)
    job = launch_job(create_job(corpus=corpus, name="oos", task_type="oos_insert",
                                settings={"insert_probability": 1.0, "max_per_dialog": 1, **settings}))
    worker = make_annotator("writer")[1]
    while (slot := claim_next_slot(job=job, worker=worker)) is not None:
        submit_response(slot_id=slot.pk, worker=worker, answers={"utterance": f"Do penguins have knees {slot.item.position}?"})
    return job


# --- A1: the out-of-scope export's responses.csv -------------------------------------------------------------


def test_the_oos_responses_csv_has_each_workers_inserted_turn(make_annotator, tmp_path):
    job = oos_job(make_annotator)
    export_job(job, tmp_path / "out")
    rows = read_csv(tmp_path / "out" / "responses.csv")
    assert rows and all(row["utterance"].startswith("Do penguins have knees") for row in rows)
    assert all(row["worker"] == "inhouse:writer" for row in rows)
    assert "oos" not in rows[0]  # the test set's name is not an answer column
