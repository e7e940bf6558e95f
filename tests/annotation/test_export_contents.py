"""What each kind of export holds, as a builder reads it: the answer columns of `responses.csv`
carry every worker's answer as a real value (not a Python repr), and the README describes the data
the export holds, in the words of the job's task type."""
import csv
import json

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


# --- A5, B10: each test-set export's README describes its own test sets -------------------------------------


def test_the_oos_readme_says_where_turns_were_inserted_and_which_dialogs_are_left_out(make_annotator, tmp_path):
    job = oos_job(make_annotator, default_answer="Sorry, no idea.")
    export_job(job, tmp_path / "out")
    readme = (tmp_path / "out" / "README.md").read_text()
    # Nothing of the rewrite README: no turn is replaced, no slot value was required.
    assert "rewrite" not in readme.lower()
    assert "required verbatim" not in readme and "turns replaced" not in readme
    assert "inserted" in readme and "Sorry, no idea." in readme and '`"oos": true`' in readme
    assert "general-oos" not in readme  # a JSONL corpus: MultiWOZ's label is not this format's
    assert "| oos | 2 | 0 |" in readme  # two turns got one inserted before them, none without
    # B10: a dialog the draw passed over is not in the set, and the README and manifest say so.
    assert "insert_probability" in readme and "left out" in readme
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert "no insertion point" in manifest["out_of_scope"]["dialogs"]
    assert "`utterance`: Out-of-scope user turn" in readme  # the answer column by what it is


def test_the_rewrite_readme_keeps_its_own_words(tmp_path, make_annotator):
    from tests.factories import good_answers, make_live_job

    job = make_live_job(make_corpus(dialogs=1, user_turns=1, source_format="multiwoz"))
    worker = make_annotator("writer")[1]
    slot = claim_next_slot(job=job, worker=worker)
    submit_response(slot_id=slot.pk, worker=worker, answers=good_answers(slot.item))
    export_job(job, tmp_path / "out")
    readme = (tmp_path / "out" / "README.md").read_text()
    assert "One directory per rewrite variant" in readme and "required verbatim in every rewrite" in readme
    assert "| paraphrase | 1 | 0 |" in readme
    assert "`typos`: Typos (" in readme


@pytest.mark.speech
def test_the_spoken_readme_describes_hypotheses_not_rewrites(make_annotator, tmp_path):
    from annotation.exporters.readme import render
    from annotation.task_types import get

    kind = get("spoken_reading")
    settings = kind.clean_settings({"readings": 2})
    manifest = {
        "job": {"id": 1, "name": "spoken"}, "corpus": {"name": "c", "source_format": "multiwoz"}, "exported_at": "now",
        "quorum_version": "x", "variants": {"spoken_1": {"turns_replaced": 1, "turns_without_accepted_rewrite": 0}},
    }
    readme = render(manifest=manifest, files=[], columns=kind.response_column_help(settings), words=kind.test_set_words(settings))
    assert "rewrite" not in readme.lower() and "required verbatim" not in readme
    assert "hypothesis" in readme and "`spoken_1`" in readme


# --- B6 and the answer fields: the README of an export without test sets ----------------------------------


def test_the_qa_paraphrase_readme_has_no_empty_agreement_table_and_no_test_sets(make_annotator, tmp_path):
    from annotation.services.payload_jobs import create_payload_job

    job = launch_job(create_payload_job(
        name="qa", task_type="qa_paraphrase", settings={"count": 2},
        payloads=[{"id": "q1", "question": "Can I bring my dog to the hotel?", "answer": "Yes, dogs are welcome."}],
    ))
    worker = make_annotator("writer")[1]
    slot = claim_next_slot(job=job, worker=worker)
    submit_response(slot_id=slot.pk, worker=worker, answers={
        "paraphrase_1": "Are dogs allowed at the hotel?", "paraphrase_2": "May my dog stay with me at the hotel?"})
    export_job(job, tmp_path / "out")
    readme = (tmp_path / "out" / "README.md").read_text()
    assert "| question | alpha |" not in readme  # no table without a row
    assert "free text" in readme
    assert "test set" not in readme
    assert "`paraphrase_1`: Paraphrase 1 (" in readme


def test_an_answers_readme_calls_each_field_what_the_task_type_says_it_is(tmp_path):
    from annotation.exporters.flag_summary import readme_lines

    summary = {"responses": 2, "flagged_responses": 1, "flagged_and_reviewed_by_a_person": 0,
               "per_variant": {"q1_reason": {"pasted": {"accepted": 1}}}}
    text = "\n".join(readme_lines(summary, part="answer field"))
    assert "| answer field | flag |" in text and "variant" not in text and "test set" not in text


# --- B8: the export form says what an export holds, before it is run ---------------------------------------


def test_the_export_form_lists_what_an_export_holds(make_annotator, organizer):
    from django.test import Client
    from django.urls import reverse

    job = oos_job(make_annotator)
    client = Client()
    client.force_login(organizer)
    html = client.get(reverse("organizer:job", args=[job.pk])).content.decode()
    section = html.split('id="export-contents"')[1].split("</details>")[0]
    for name in ("oos/", "responses.csv", "manifest.json", "README.md", "worker_reliability.csv"):
        assert f"<code>{name}</code>" in section
    assert "utterance" in section  # the answer columns by name
    assert "inserted" in section  # what the test set is, in the type's words
