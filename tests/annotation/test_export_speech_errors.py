"""The speech-error export option (issue 14, item 2): the `speech_errors/` test set beside the job's
variants, its refusals on the job page, the command and the API, and a target below the clean floor.

The end-to-end test runs the real pipeline (flite -> white noise -> pocketsphinx adapted to the
corpus); the others use the speech tests' closed-form speaker and recogniser.
"""
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import IntegrityError, transaction
from django.test import Client
from django.urls import reverse

from annotation.importers.jsonl import JSONLReader
from annotation.models import Corpus, ExportRun, RunStatus
from annotation.services.exports import SPEECH_ERRORS_MAX_PASSES, export_job, start_export
from annotation.services.payload_jobs import create_payload_job
from annotation.speech.wer import corpus_wer, normalize_words
from tests.speech.fakes import FakeRecogniser, fake_tts
from tests.speech.utterances import UTTERANCES

from .test_exports import item_for, make_dialog, make_job, read_json, respond

pytestmark = pytest.mark.django_db

# Twelve user turns (~110 words) in three dialogs: WER moves in steps of about 1%. They are the
# speech engine's own command test's set, spoken in the same order with the same seed, so the
# export's search is that test's; with ten turns WER(SNR) jumps past 0.2 +- 0.05 at seed 3.
USER_TURNS = UTTERANCES[:12]
DIALOG_SHAPES = [("d1", USER_TURNS[0:4]), ("d2", USER_TURNS[4:8]), ("d3", USER_TURNS[8:12])]
SYSTEM_REPLY = "Certainly."


@pytest.fixture
def corpus_job():
    """A JSONL corpus of three dialogs (user and system turns alternating) and a rewrite job over it,
    with one accepted rewrite: the speech errors apply to the source text, not to the rewrite."""
    corpus = Corpus.objects.create(name="speech", source_format="jsonl")
    dialogs = [
        make_dialog(corpus, name, position, [row for text in texts for row in (("user", text, {}), ("system", SYSTEM_REPLY, {}))])
        for position, (name, texts) in enumerate(DIALOG_SHAPES)
    ]
    job = make_job(corpus)
    respond(item_for(job, dialogs[0], 0), "ann")
    return job


def use_fake_speech(monkeypatch, min_deleted=0):
    monkeypatch.setattr("annotation.speech.simulate.synthesize", fake_tts)
    monkeypatch.setattr("annotation.services.exports.asr_backend", lambda: FakeRecogniser(USER_TURNS, min_deleted=min_deleted))


def export_tree() -> list[Path]:
    from django.conf import settings

    root = Path(settings.QUORUM_EXPORT_DIR)
    return sorted(root.rglob("*")) if root.exists() else []


# --- refusals: nothing queued, nothing written ------------------------------------------------------


@pytest.mark.parametrize(("value", "says"), [
    ("0.01", "Ensure this value is greater than or equal to 0.05."),
    ("0.9", "Ensure this value is less than or equal to 0.5."),
    ("lots", "Enter a number."),
    ("nan", "Enter a number."),
])
def test_the_job_page_refuses_a_target_outside_the_range(corpus_job, organizer, value, says):
    client = Client()
    client.force_login(organizer)
    page = client.get(reverse("organizer:job", args=[corpus_job.pk])).content.decode()
    assert 'name="speech_errors_wer"' in page and "CPU-seconds per 30 user turns" in page
    response = client.post(reverse("organizer:job-export", args=[corpus_job.pk]), {"speech_errors_wer": value})
    assert response.status_code == 400 and '<ul class="errorlist"' in response.content.decode()
    assert says in response.content.decode()
    assert not ExportRun.objects.exists()


@pytest.mark.parametrize(("options", "field"), [
    ({"speech_errors_wer": 0.7}, "speech_errors_wer"),
    ({"speech_errors_wer": 0.01}, "speech_errors_wer"),
    ({"speech_errors_wer": "twenty"}, "speech_errors_wer"),
    ({"speech_errors_wer": 0.2, "speech_errors_seed": -1}, "speech_errors_seed"),
])
def test_the_api_refuses_a_bad_option_and_queues_nothing(corpus_job, organizer_api, options, field):
    refused = organizer_api.post(f"/api/jobs/{corpus_job.pk}/exports/", options, format="json")
    assert refused.status_code == 400 and field in refused.json()
    assert not ExportRun.objects.exists()


@pytest.mark.parametrize("value", ["0.6", "0.04", "nan"])
def test_the_command_refuses_a_bad_target_and_writes_nothing(corpus_job, tmp_path, value):
    with pytest.raises(CommandError, match="--speech-errors-wer: .*from 0.05 to 0.5"):
        call_command("export_job", str(corpus_job.pk), "--out", str(tmp_path / "out"), "--speech-errors-wer", value)
    assert not (tmp_path / "out").exists()


def test_the_database_refuses_a_target_outside_the_range(corpus_job):
    with pytest.raises(IntegrityError), transaction.atomic():
        ExportRun.objects.create(job=corpus_job, speech_errors_wer=0.9)


def test_a_target_below_the_clean_floor_fails_the_run_naming_the_floor_and_leaves_no_files(
    corpus_job, monkeypatch, django_capture_on_commit_callbacks
):
    # The recogniser drops at least two words an utterance, so clean speech already gives this floor.
    use_fake_speech(monkeypatch, min_deleted=2)
    floor = 2 * len(USER_TURNS) / sum(len(normalize_words(t)) for t in USER_TURNS)
    assert floor > 0.15
    with django_capture_on_commit_callbacks(execute=True):
        run = start_export(corpus_job, speech_errors_wer=0.1)
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED
    assert f"the floor is {floor:.3f}" in run.error and run.files == [] and run.directory == ""
    assert [p for p in export_tree() if p.is_file()] == []  # the staging directory went too


# --- what the option writes -----------------------------------------------------------------------


def test_speech_errors_replace_the_source_user_turns_and_progress_counts_passes(corpus_job, tmp_path, monkeypatch):
    use_fake_speech(monkeypatch)
    calls = []
    files = export_job(corpus_job, tmp_path / "out", progress=lambda done, total: calls.append((done, total)),
                       speech_errors_wer=0.2, speech_errors_seed=4)
    assert "speech_errors/dialogs.jsonl" in files and "speech_errors.jsonl" in files
    assert "paraphrase/dialogs.jsonl" in files  # the job's own test sets are still there
    rows = [json.loads(line) for line in (tmp_path / "out" / "speech_errors.jsonl").open(encoding="utf-8")]
    assert [(r["dialog"], r["turn"], r["text"]) for r in rows] == [
        (name, 2 * k, text) for name, texts in DIALOG_SHAPES for k, text in enumerate(texts)
    ]  # the source text, though d1's first turn has an accepted rewrite
    speech = read_json(tmp_path / "out" / "manifest.json")["speech_errors"]
    assert speech["wer"] == pytest.approx(corpus_wer((r["text"], r["asr"]) for r in rows), abs=1e-4)
    assert abs(speech["wer"] - 0.2) <= 0.05 and speech["seed"] == 4 and speech["utterances"] == len(USER_TURNS)
    # Progress: the export's rows, then one pass over every user turn for synthesis and for each SNR tried.
    speech_units = (1 + len(speech["passes"])) * len(USER_TURNS)
    assert calls[-1][0] == calls[-1][1] == 3 + 1 + speech_units  # 3 dialogs, 1 response
    assert max(total for _, total in calls) == 4 + SPEECH_ERRORS_MAX_PASSES * len(USER_TURNS)
    assert [done for done, _ in calls] == sorted(done for done, _ in calls)


@pytest.mark.speech
@pytest.mark.slow
def test_an_export_at_twenty_percent_reimports_and_reaches_the_target(corpus_job, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        run = start_export(corpus_job, speech_errors_wer=0.2, speech_errors_seed=3)
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert run.done == run.total and run.total > 4 + 2 * len(USER_TURNS)  # the passes were counted
    out = Path(run.directory)
    rows = [json.loads(line) for line in (out / "speech_errors.jsonl").open(encoding="utf-8")]
    assert all(set(r) <= {"dialog", "turn", "text", "asr", "wer", "dropped_slot_values"} for r in rows)
    achieved = corpus_wer((r["text"], r["asr"]) for r in rows)  # recomputed from the file, not trusted
    assert abs(achieved - 0.2) <= 0.05
    speech = read_json(out / "manifest.json")["speech_errors"]
    assert speech["wer"] == pytest.approx(achieved, abs=1e-4) and speech["snr_db"] < 50
    assert f"corpus WER {speech['wer']}" in (out / "README.md").read_text(encoding="utf-8")
    # The test set is a corpus in its own format: the JSONL importer reads it back.
    with JSONLReader({"data": out / "speech_errors" / "dialogs.jsonl"}) as reader:
        dialogs = list(reader.dialogs())
    assert [d.external_id for d in dialogs] == [name for name, _ in DIALOG_SHAPES]
    heard = {(r["dialog"], r["turn"]): r["asr"] for r in rows}
    for dialog in dialogs:
        for index, turn in enumerate(dialog.turns):
            expected = heard[(dialog.external_id, index)] if turn.speaker == "user" else SYSTEM_REPLY
            assert turn.text == expected
    assert sum(r["asr"] != r["text"] for r in rows) > 0


def test_the_command_prints_the_user_turns_before_it_starts_and_the_achieved_wer(corpus_job, tmp_path, monkeypatch, capsys):
    use_fake_speech(monkeypatch)
    call_command("export_job", str(corpus_job.pk), "--out", str(tmp_path / "out"), "--speech-errors-wer", "0.3",
                 "--speech-errors-seed", "2")
    printed = capsys.readouterr().out
    speech = read_json(tmp_path / "out" / "manifest.json")["speech_errors"]
    assert printed.startswith(f"Speech errors: {len(USER_TURNS)} user turns to synthesise and recognise")
    assert f"speech_errors: corpus WER {speech['wer']:.3f} (target 0.3)" in printed
    assert "speech_errors/dialogs.jsonl" in printed and speech["seed"] == 2


def test_a_job_without_test_sets_is_refused_speech_errors(organizer_api):
    # QA paraphrases export qa_pairs.jsonl, no dialogs.
    pairs = [{"id": "p1", "question": "Is breakfast included?", "answer": "Yes."}]
    job = create_payload_job(name="para", task_type="qa_paraphrase", payloads=pairs, settings={"count": 3})
    refused = organizer_api.post(f"/api/jobs/{job.pk}/exports/", {"speech_errors_wer": 0.2}, format="json")
    assert refused.status_code == 400 and "writes no test sets" in json.dumps(refused.json())
    assert not ExportRun.objects.exists()


def test_speech_error_exports_run_one_at_a_time_per_job_and_a_repeat_is_the_same_run(corpus_job, django_capture_on_commit_callbacks):
    """Issue 25: three speech-error exports queued on one job held the worker for minutes. The same
    request again is answered with the run under way; a different one is refused until it ends."""
    from annotation.exporters import ExportError

    with django_capture_on_commit_callbacks() as queued:
        first = start_export(corpus_job, speech_errors_wer=0.2, speech_errors_seed=3)
        again = start_export(corpus_job, speech_errors_wer=0.2, speech_errors_seed=3)
    assert again.pk == first.pk and len(queued) == 1
    with pytest.raises(ExportError, match="under way"):
        start_export(corpus_job, speech_errors_wer=0.3)
    plain = start_export(corpus_job)  # an export without speech errors is cheap: never held back
    assert plain.pk != first.pk
    ExportRun.objects.filter(pk=first.pk).update(status=RunStatus.FAILED)
    assert start_export(corpus_job, speech_errors_wer=0.3).pk not in (first.pk, plain.pk)


def test_the_job_page_says_which_speech_error_export_is_under_way(corpus_job, organizer, django_capture_on_commit_callbacks):
    """The API answers this refusal with a 409 (tests/test_limits_hardening.py); the page keeps its message."""
    client = Client()
    client.force_login(organizer)
    with django_capture_on_commit_callbacks():  # not run: it stays under way
        first = start_export(corpus_job, speech_errors_wer=0.2, speech_errors_seed=3)
    response = client.post(reverse("organizer:job-export", args=[corpus_job.pk]), {"speech_errors_wer": "0.3"}, follow=True)
    page = response.content.decode()
    assert response.status_code == 200
    assert f"A speech-error export of this job is under way (run {first.pk}, pending); start another when it has finished." in page
    assert ExportRun.objects.filter(job=corpus_job).count() == 1
