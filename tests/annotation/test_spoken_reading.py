"""Spoken readings (issue 14 item 1): refused recordings, who may hear the audio, deletion with the
response, transcription on real synthesised speech, the review queue and the per-reading export.

Every recording is made in the test run (espeak-ng through annotation.speech.tts, or numpy)."""
import json
from datetime import timedelta
from pathlib import Path

import pytest
from celery.exceptions import Retry
from django.core.files.storage import storages
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation import task_types
from annotation.models import Response, Slot, SpokenReading
from annotation.services import readings as reading_service
from annotation.services.claims import claim_next_slot
from annotation.services.exports import export_job
from annotation.services.imports import import_corpus
from annotation.services.voting import enable_voting
from annotation.speech.asr import AsrFailed
from annotation.speech.wer import wer
from annotation.tasks import TRANSCRIBE_MAX_RETRIES, transcribe_reading
from annotation.work_tokens import make_token
from tests.factories import make_corpus, make_live_job

from .spoken_audio import readings_of, silence, speech, tone, upload

pytestmark = [pytest.mark.django_db, pytest.mark.speech]  # recordings are synthesised with espeak-ng


def spoken_job(readings=2, **settings):
    corpus = make_corpus(name="spoken", dialogs=1, user_turns=1)
    return make_live_job(corpus, task_type="spoken_reading", name="spoken job", settings={"readings": readings, **settings})


def stored_files(settings) -> list:
    return sorted(p for p in settings.MEDIA_ROOT.rglob("*") if p.is_file())


def submit(job, user, worker, answers):
    client = Client()
    client.force_login(user)
    slot = claim_next_slot(job=job, worker=worker)
    return slot, client.post(reverse("work", args=[make_token(slot)]), answers)


@pytest.fixture
def reader(make_annotator):
    return make_annotator("reader")


# --- settings -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "field"),
    [({"readings": 0}, "readings"), ({"readings": 11}, "readings"), ({"min_seconds": 5, "max_seconds": 2}, "max_seconds"),
     ({"max_seconds": 500}, "max_seconds"), ({"min_seconds": 0}, "min_seconds"), ({"language": ""}, "language")],
)
def test_bad_settings_are_refused_where_written(given, field):
    with pytest.raises(task_types.TaskTypeSettingsError) as caught:
        task_types.get("spoken_reading").clean_settings(given)
    assert field in caught.value.errors


def test_the_page_asks_for_k_readings_and_explains_the_microphone(reader):
    user, worker = reader
    job = spoken_job(readings=3)
    client = Client()
    client.force_login(user)
    slot = claim_next_slot(job=job, worker=worker)
    html = client.get(reverse("work", args=[make_token(slot)])).content.decode()
    assert html.count('class="reading-file"') == 3
    assert "microphone" in html and "Allow" in html and "spoken.js" in html
    assert slot.item.payload["utterance"].split()[0] in html


# --- refused recordings -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("bad", "says"),
    [
        (lambda: silence(2.0), "silent"),
        (lambda: tone(0.3), "at least 1 s"),
        (lambda: b"ID3\x03\x00 not a wav at all", "not a WAV"),
        (lambda: tone(2.0, rate=8000), "8000 Hz"),
        (lambda: tone(40.0), "at most 30 s"),
    ],
    ids=["silent", "too-short", "wrong-format", "low-rate", "too-long"],
)
def test_a_bad_recording_is_refused_with_which_reading_and_why_and_nothing_is_stored(reader, settings, bad, says):
    user, worker = reader
    job = spoken_job()
    answers = readings_of("I need a cheap table for two people in the centre please.", 2)
    answers["reading_2"] = upload("reading_2", bad())
    slot, refused = submit(job, user, worker, answers)
    assert refused.status_code == 400
    html = refused.content.decode()
    assert "Reading 2:" in html and says in html and "Reading 1:" not in html
    assert not Response.objects.filter(slot=slot).exists()
    assert not SpokenReading.objects.exists() and stored_files(settings) == []


def test_the_page_script_is_told_which_reading_to_record_again(reader, settings):
    """spoken.js posts with Accept: application/json: a refusal names only the silent reading and
    stores nothing; the same readings with that one recorded again are saved, and it is told where next."""
    user, worker = reader
    job = spoken_job(readings=3)
    text = job.items.get().payload["utterance"]
    client = Client()
    client.force_login(user)
    url = reverse("work", args=[make_token(claim_next_slot(job=job, worker=worker))])
    answers = readings_of(text, 3)
    answers["reading_2"] = upload("reading_2", silence(2.0))

    refused = client.post(url, answers, headers={"Accept": "application/json"})
    assert refused.status_code == 400
    body = refused.json()
    assert list(body["errors"]) == ["reading_2"] and body["non_field"] == []
    assert body["errors"]["reading_2"][0].startswith("Reading 2: The recording is silent")
    assert not Response.objects.exists() and not SpokenReading.objects.exists() and stored_files(settings) == []

    answers = {**readings_of(text, 3), "reading_2": upload("reading_2", speech(f"Well, {text}"))}
    saved = client.post(url, answers, headers={"Accept": "application/json"})
    assert saved.status_code == 200 and "/done/" in saved.json()["redirect"]
    assert sorted(SpokenReading.objects.values_list("index", flat=True)) == [0, 1, 2]


def test_an_oversized_file_is_refused_before_it_is_read(reader, settings):
    from annotation.task_types.base import MAX_UPLOAD_BYTES

    user, worker = reader
    answers = readings_of("I need a cheap table.", 2)
    answers["reading_1"] = upload("reading_1", b"RIFF" + b"\0" * MAX_UPLOAD_BYTES)
    slot, refused = submit(spoken_job(), user, worker, answers)
    assert refused.status_code == 400 and "Reading 1: the file is larger than 16 MB." in refused.content.decode()
    assert stored_files(settings) == [] and not Response.objects.filter(slot=slot).exists()


def test_a_missing_reading_is_refused(reader):
    user, worker = reader
    answers = readings_of("I need a cheap table.", 1)
    slot, refused = submit(spoken_job(), user, worker, answers)
    assert refused.status_code == 400 and "Reading 2: record it before submitting." in refused.content.decode()


# --- stored, served, deleted --------------------------------------------------------------------------


@pytest.fixture
def stored(reader, settings):
    user, worker = reader
    job = spoken_job()
    slot, posted = submit(job, user, worker, readings_of(job.items.get().payload["utterance"], 2))
    assert posted.status_code == 302
    return job, Response.objects.get(slot=slot)


def test_readings_are_stored_as_rows_and_files_in_the_audio_storage(stored, settings):
    job, response = stored
    rows = list(response.readings.order_by("index"))
    assert [r.index for r in rows] == [0, 1]
    assert all(r.sample_rate == 16000 and r.seconds > 1 for r in rows)
    assert response.answers["reading_1"]["seconds"] == pytest.approx(rows[0].seconds, abs=0.001)
    assert len(stored_files(settings)) == 2
    assert all(storages["audio"].exists(r.audio.name) for r in rows)
    assert storages["audio"].open(rows[0].audio.name).read(4) == b"RIFF"


def test_only_organizers_hear_the_audio(stored, organizer, make_annotator, reader):
    _job, response = stored
    url = reverse("organizer:reading-audio", args=[response.pk, 0])
    client = Client()
    assert client.get(url).status_code == 302 and "login" in client.get(url)["Location"]  # anonymous: the login page
    for user in (make_annotator("someone-else")[0], reader[0]):  # another annotator, and the author
        client.force_login(user)
        assert client.get(url).status_code == 403
    client.force_login(organizer)
    heard = client.get(url)
    assert heard.status_code == 200 and heard["Content-Type"] == "audio/wav"
    assert b"".join(heard.streaming_content) == response.readings.get(index=0).audio.open("rb").read()
    assert client.get(reverse("organizer:reading-audio", args=[response.pk, 5])).status_code == 404


def test_a_voter_hears_the_reading_through_the_vote_slot_only(stored, make_annotator):
    job, response = stored
    # Turning voting on puts the job's accepted responses to the vote.
    vote_job = enable_voting(job, votes_per_response=1, against_threshold=1)
    voter_user, voter = make_annotator("voter")
    client = Client()
    client.force_login(voter_user)
    slot = claim_next_slot(job=vote_job, worker=voter)
    page = client.get(reverse("work", args=[make_token(slot)])).content.decode()
    assert "<audio" in page
    assert client.get(reverse("work-reading-audio", args=[make_token(slot), 1])).status_code == 200
    other_user, _other = make_annotator("not-the-voter")
    client.force_login(other_user)
    assert client.get(reverse("work-reading-audio", args=[make_token(slot), 1])).status_code == 403
    # Issue 25: once the voter's claim has expired, the old link no longer plays the reading.
    client.force_login(voter_user)
    Slot.objects.filter(pk=slot.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    expired = client.get(reverse("work-reading-audio", args=[make_token(slot), 1]))
    assert expired.status_code == 403 and "Claim expired" in expired.content.decode()


def test_files_leave_the_storage_with_their_response(stored, settings, django_capture_on_commit_callbacks):
    """A job with responses cannot be deleted (its slots protect them), so a response's deletion is
    where audio goes; the file is removed once the deletion commits."""
    _job, response = stored
    assert len(stored_files(settings)) == 2
    with django_capture_on_commit_callbacks(execute=True):
        Response.objects.filter(pk=response.pk).delete()
    assert not SpokenReading.objects.exists() and stored_files(settings) == []


def test_a_deletion_that_rolls_back_keeps_the_files(stored, settings, django_capture_on_commit_callbacks):
    from django.db import transaction

    _job, response = stored
    with django_capture_on_commit_callbacks(execute=True):
        with pytest.raises(RuntimeError), transaction.atomic():
            Response.objects.filter(pk=response.pk).delete()
            raise RuntimeError("changed my mind")
    assert SpokenReading.objects.count() == 2 and len(stored_files(settings)) == 2


def test_a_failed_submission_takes_its_files_back(reader, settings, monkeypatch):
    """Storage is not transactional: files written for a response whose transaction fails are deleted."""
    user, worker = reader
    job = spoken_job()

    def broken(rows, *args, **kwargs):
        raise RuntimeError("the database went away")

    monkeypatch.setattr(SpokenReading.objects, "bulk_create", broken)  # after both files are written
    client = Client(raise_request_exception=False)
    client.force_login(user)
    slot = claim_next_slot(job=job, worker=worker)
    assert client.post(reverse("work", args=[make_token(slot)]), readings_of(job.items.get().payload["utterance"], 2)).status_code == 500
    assert stored_files(settings) == [] and not Response.objects.filter(slot=slot).exists()


# --- transcription --------------------------------------------------------------------------------------


def test_a_submission_is_transcribed_on_commit_by_the_adapted_recognizer(reader, django_capture_on_commit_callbacks):
    user, worker = reader
    job = spoken_job()
    text = job.items.get().payload["utterance"]
    with django_capture_on_commit_callbacks(execute=True):
        slot, posted = submit(job, user, worker, {"reading_1": upload("r1", speech(text)), "reading_2": upload("r2", speech(f"Well, {text}"))})
    assert posted.status_code == 302
    for reading in SpokenReading.objects.filter(response__slot=slot):
        assert reading.transcribed_at is not None and reading.asr_error == ""
        assert reading.asr_backend == "pocketsphinx" and reading.decode_seconds > 0
        assert 0 <= reading.asr_confidence <= 1
        # The engine's tests measure recognition; here: the stored reading reached the recognizer,
        # adapted to this job's text, and what came back is mostly the sentence read.
        assert wer(text, reading.asr_text) <= 0.4, reading.asr_text


def test_a_failing_backend_is_stored_and_retried_a_bounded_number_of_times(stored, monkeypatch):
    _job, response = stored
    reading = response.readings.get(index=0)
    calls = []

    class Down:
        def transcribe(self, wav, **kwargs):
            calls.append(1)
            raise AsrFailed("the endpoint timed out")

    monkeypatch.setattr(reading_service, "asr_backend", lambda: Down())
    with pytest.raises(Retry):  # a first failure is retried later
        transcribe_reading.apply(args=[reading.pk], retries=0)
    with pytest.raises(reading_service.TranscriptionFailed):  # the last allowed attempt gives up
        transcribe_reading.apply(args=[reading.pk], retries=TRANSCRIBE_MAX_RETRIES)
    assert len(calls) == 2
    reading.refresh_from_db()
    assert reading.transcribed_at is None and "timed out" in reading.asr_error


def test_a_language_without_an_offline_model_says_so_and_is_not_retried(reader):
    user, worker = reader
    job = spoken_job(language="fr")
    slot, _ = submit(job, user, worker, readings_of(job.items.get().payload["utterance"], 2))
    reading = SpokenReading.objects.filter(response__slot=slot).first()
    transcribe_reading.delay(reading.pk)
    reading.refresh_from_db()
    assert "No offline model for language 'fr'" in reading.asr_error and reading.transcribed_at is None


def test_the_job_page_says_why_readings_are_not_transcribed(reader, organizer):
    user, worker = reader
    job = spoken_job(language="fr")
    slot, _ = submit(job, user, worker, readings_of(job.items.get().payload["utterance"], 2))
    for reading in SpokenReading.objects.filter(response__slot=slot):
        transcribe_reading.delay(reading.pk)
    client = Client()
    client.force_login(organizer)
    html = client.get(reverse("organizer:job", args=[job.pk])).content.decode()
    assert "0 of 2 readings transcribed, 2 not transcribed" in html
    assert "No offline model for language &#x27;fr&#x27;" in html and "(2)" in html


# --- review and export ---------------------------------------------------------------------------------


def _transcribed(stored):
    job, response = stored
    for reading in response.readings.all():
        reading_service.transcribe(reading.pk)
    return job, response


def test_the_review_queue_plays_each_reading_beside_its_hypothesis(stored, organizer):
    job, response = _transcribed(stored)
    client = Client()
    client.force_login(organizer)
    html = client.get(reverse("organizer:job-review", args=[job.pk])).content.decode()
    for reading in response.readings.all():
        assert reverse("organizer:reading-audio", args=[response.pk, reading.index]) in html
        assert reading.asr_text in html
    assert "table for 2 people in the" in html  # the source beside them (slot values are marked up)


def test_the_export_has_a_test_set_per_reading_with_the_hypothesis_and_a_manifest(stored, tmp_path):
    job, response = _transcribed(stored)
    files = export_job(job, tmp_path / "out", include_audio=True)
    assert {"spoken_1/dialogs.jsonl", "spoken_2/dialogs.jsonl", "readings.jsonl"} <= set(files)
    source = response.item.turn.text
    for reading in response.readings.all():
        (dialog,) = [json.loads(line) for line in (tmp_path / "out" / f"spoken_{reading.index + 1}" / "dialogs.jsonl").open()]
        user_turn = next(t for t in dialog["turns"] if t["speaker"] == "user")
        assert user_turn["text"] == reading.asr_text
        # Only the values the recogniser heard stay, so the test set imports again as it is.
        assert all(v["value"] in reading.asr_text for v in user_turn.get("slot_values", []))
        import_corpus(name=f"spoken {reading.index}", source_format="jsonl",
                      files={"data": tmp_path / "out" / f"spoken_{reading.index + 1}" / "dialogs.jsonl"})
    rows = [json.loads(line) for line in (tmp_path / "out" / "readings.jsonl").open()]
    assert [(r["reading"], r["source_text"]) for r in rows] == [(1, source), (2, source)]
    assert all(r["asr_text"] and r["asr_confidence"] is not None for r in rows)
    for row in rows:
        assert (tmp_path / "out" / row["audio"]).read_bytes()[:4] == b"RIFF"


def test_the_job_page_exports_the_recordings_when_asked(stored, organizer, django_capture_on_commit_callbacks):
    job, response = _transcribed(stored)
    client = Client()
    client.force_login(organizer)
    assert 'name="include_audio"' in client.get(reverse("organizer:job", args=[job.pk])).content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("organizer:job-export", args=[job.pk]), {"include_audio": "on"})
    run = job.export_runs.get()
    assert run.status == "succeeded" and run.include_audio
    assert sum(name.startswith("audio/") for name in run.files) == 2
    assert "ASR hypothesis" in (Path(run.directory) / "README.md").read_text()
    # Its row says what it holds, so two exports of the job are told apart.
    row = client.get(reverse("organizer:job", args=[job.pk])).content.decode().split(f'id="export-run-{run.pk}"')[1]
    assert "with the recordings (audio/)" in row.split("</tr>")[0]


def test_the_export_leaves_the_audio_out_unless_asked(stored, tmp_path):
    job, _response = _transcribed(stored)
    files = export_job(job, tmp_path / "out")
    assert not any(name.startswith("audio/") for name in files)
    assert all(json.loads(line)["audio"] is None for line in (tmp_path / "out" / "readings.jsonl").open())


# --- the job form ----------------------------------------------------------------------------------------


def _spoken_form(corpus, **settings):
    from .test_organizer_views import job_form_data

    data = job_form_data(corpus, name="read aloud", task_type="spoken_reading")
    data.update({f"setting__spoken_reading__{name}": value for name, value in settings.items()})
    return data


def test_an_organizer_makes_a_spoken_job_with_its_settings(organizer):
    corpus = make_corpus(name="spoken-form", dialogs=2, user_turns=1)
    client = Client()
    client.force_login(organizer)
    page = client.get(reverse("organizer:job-new")).content.decode()
    assert "How many readings each worker records" in page and "understands English only" in page
    response = client.post(reverse("organizer:job-new"), _spoken_form(corpus, readings="3", min_seconds="2", max_seconds="10", language="en"))
    assert response.status_code == 302
    job = corpus.jobs.get()
    assert job.settings == {"readings": 3, "min_seconds": 2.0, "max_seconds": 10.0, "language": "en"}


def test_duration_bounds_that_cannot_hold_are_refused_on_the_form(organizer):
    corpus = make_corpus(name="spoken-form", dialogs=2, user_turns=1)
    client = Client()
    client.force_login(organizer)
    response = client.post(reverse("organizer:job-new"), _spoken_form(corpus, min_seconds="12", max_seconds="5"))
    assert response.status_code == 200 and "0 &lt; min_seconds &lt; max_seconds" in response.content.decode()
    assert not corpus.jobs.exists()


def test_the_api_exports_the_recordings_when_asked_and_refuses_a_bad_option(stored, organizer_api, django_capture_on_commit_callbacks):
    job, _response = _transcribed(stored)
    url = f"/api/jobs/{job.pk}/exports/"
    refused = organizer_api.post(url, {"include_audio": "loudly"}, format="json")
    assert refused.status_code == 400 and "include_audio" in refused.json()
    with django_capture_on_commit_callbacks(execute=True):
        made = organizer_api.post(url, {"include_audio": True}, format="json")
    assert made.status_code == 202 and made.json()["include_audio"] is True
    (run,) = organizer_api.get(url).json()
    names = [f["name"] for f in run["files"]]
    assert run["status"] == "succeeded" and "readings.jsonl" in names
    assert sum(n.startswith("audio/") for n in names) == 2


def test_other_types_review_and_vote_pages_have_no_players(organizer, make_annotator):
    from tests.factories import good_answers

    job = make_live_job(make_corpus(name="rewrites", dialogs=1, user_turns=1))
    vote_job = enable_voting(job, votes_per_response=1, against_threshold=1)
    (user, worker), (voter_user, voter) = make_annotator("writer"), make_annotator("voter")
    _slot, posted = submit(job, user, worker, good_answers(job.items.get()))
    assert posted.status_code == 302
    client = Client()
    client.force_login(organizer)
    assert "<audio" not in client.get(reverse("organizer:job-review", args=[job.pk])).content.decode()
    client.force_login(voter_user)
    vote_slot = claim_next_slot(job=vote_job, worker=voter)
    page = client.get(reverse("work", args=[make_token(vote_slot)])).content.decode()
    assert "Paraphrase" in page and "<audio" not in page


def test_readings_jsonl_carries_its_response_s_flags_as_flags_jsonl_words_them(stored, tmp_path):
    """A builder filtering readings by their flags had to join flags.jsonl by response id: each line of
    readings.jsonl now carries its response's flags (code, name, evidence; empty when it has none),
    after the keys it had, and the README says so."""
    job, response = _transcribed(stored)
    export_job(job, tmp_path / "clean")
    clean = [json.loads(line) for line in (tmp_path / "clean" / "readings.jsonl").open()]
    assert [row["flags"] for row in clean] == [[], []] and list(clean[0])[-1] == "flags"

    checks = {**response.checks, "flags": ["fast", "worth_a_listen"],
              "flag_evidence": {"fast": "12 s for the item; the job's median is 95 s", "worth_a_listen": "reading 2: little speech: 0.3 s"}}
    Response.objects.filter(pk=response.pk).update(checks=checks)
    export_job(job, tmp_path / "out")
    rows = [json.loads(line) for line in (tmp_path / "out" / "readings.jsonl").open()]
    (flagged,) = [json.loads(line) for line in (tmp_path / "out" / "flags.jsonl").open()]
    assert [row["flags"] for row in rows] == [flagged["flags"], flagged["flags"]]
    assert [(f["code"], f["evidence"]) for f in rows[0]["flags"]] == [
        ("fast", "12 s for the item; the job's median is 95 s"), ("worth_a_listen", "reading 2: little speech: 0.3 s")]
    assert [list(row)[:-1] for row in rows] == [list(row)[:-1] for row in clean]  # the keys it had, in their order
    readme = (tmp_path / "out" / "README.md").read_text()
    described = next(line for line in readme.splitlines() if line.startswith("- `readings.jsonl`"))
    assert "`flags`" in described and "flags.jsonl" in described
