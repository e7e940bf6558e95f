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


# --- A4: the spoken-reading export's responses.csv ----------------------------------------------------------


@pytest.mark.speech  # the readings are synthesised with espeak-ng
@pytest.mark.parametrize("include_audio", [True, False])
def test_the_spoken_responses_csv_has_each_readings_hypothesis_and_audio_path(make_annotator, tmp_path, include_audio):
    from django.test import Client
    from django.urls import reverse
    from django.utils import timezone

    from annotation.models import Response, SpokenReading
    from annotation.work_tokens import make_token
    from tests.factories import make_live_job

    from .spoken_audio import readings_of

    corpus = make_corpus(name="spoken", dialogs=1, user_turns=1)
    job = make_live_job(corpus, task_type="spoken_reading", name="spoken job", settings={"readings": 2})
    user, worker = make_annotator("reader")
    client = Client()
    client.force_login(user)
    slot = claim_next_slot(job=job, worker=worker)
    assert client.post(reverse("work", args=[make_token(slot)]), readings_of(slot.item.payload["utterance"], 2)).status_code == 302
    response = Response.objects.get(slot=slot)
    for reading in response.readings.all():  # as the recogniser would store them
        SpokenReading.objects.filter(pk=reading.pk).update(
            asr_text=f"heard {reading.index + 1}, said \"twice\"", asr_confidence=0.5, transcribed_at=timezone.now())

    export_job(job, tmp_path / "out", include_audio=include_audio)
    (row,) = read_csv(tmp_path / "out" / "responses.csv")
    assert "{" not in "".join(row.values())  # no Python dict repr in any cell
    for k in (1, 2):
        assert row[f"reading_{k}_hypothesis"] == f"heard {k}, said \"twice\""
        assert float(row[f"reading_{k}_seconds"]) > 1
        if include_audio:
            assert row[f"reading_{k}_audio"] == f"audio/response-{response.pk}-reading-{k}.wav"
            assert (tmp_path / "out" / row[f"reading_{k}_audio"]).read_bytes()[:4] == b"RIFF"
        else:
            assert row[f"reading_{k}_audio"] == ""
    readme = (tmp_path / "out" / "README.md").read_text()
    assert "`reading_1_hypothesis`" in readme and "`reading_1_audio`" in readme
