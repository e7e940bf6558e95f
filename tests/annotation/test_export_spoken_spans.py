"""Test sets made of ASR text (a spoken-reading job's `spoken_k` sets, the speech-error set): in
MultiWOZ a replaced user turn's `span_info` gives each value's place in the hypothesis, a span
whose value the recogniser did not hear is left out and counted, and each README says only what its
own format holds (no `span_info` in a JSONL README).

The spans of a hypothesis were those of the original text, and the JSONL README spoke of `span_info`.
"""
import json

import pytest
from django.utils import timezone

from annotation import task_types
from annotation.models import SpokenReading
from annotation.services.exports import export_job
from annotation.services.imports import import_corpus
from annotation.services.jobs import create_job
from annotation.speech.simulate import SimulatedUtterance, Simulation
from tests.annotation.test_export_readme_formats import _readme
from tests.annotation.test_exports import read_json, respond

pytestmark = pytest.mark.django_db

SOURCE = "I want a cheap place in the centre ."
SPANS = [["Restaurant-Inform", "Price", "cheap", 3, 3], ["Restaurant-Inform", "Area", "centre", 7, 7]]
#: Reading 1 heard both values at other places; reading 2 misheard "centre".
HEARD = ["a cheap place in the centre please", "i want a cheap place in the center"]


def _corpus(tmp_path):
    log = [
        {"text": SOURCE, "metadata": {}, "dialog_act": {"Restaurant-Inform": [["Price", "cheap"], ["Area", "centre"]]}, "span_info": SPANS},
        {"text": "Okay .", "metadata": {}, "dialog_act": {}, "span_info": []},
    ]
    path = tmp_path / "data.json"
    path.write_text(json.dumps({"D1.json": {"goal": {}, "log": log}}), encoding="utf-8")
    return import_corpus(name="spoken", source_format="multiwoz", files={"data": path})


def test_a_spoken_test_set_moves_the_spans_the_hypothesis_holds_and_drops_the_rest(tmp_path):
    job = create_job(corpus=_corpus(tmp_path), name="spoken", task_type="spoken_reading", settings={"readings": 2})
    item = job.items.get()
    response = respond(item, "reader", answers={f"reading_{k}": {"seconds": 2.0, "sample_rate": 16000} for k in (1, 2)})
    for index, heard in enumerate(HEARD):
        SpokenReading.objects.create(response=response, job=job, index=index, audio=f"r{index}.wav", seconds=2.0,
                                     sample_rate=16000, asr_text=heard, transcribed_at=timezone.now())
    out = tmp_path / "out"
    export_job(job, out)

    first = read_json(out / "spoken_1" / "data.json")["D1.json"]["log"][0]
    assert first["text"] == HEARD[0]
    assert first["span_info"] == [["Restaurant-Inform", "Price", "cheap", 1, 1], ["Restaurant-Inform", "Area", "centre", 5, 5]]
    second = read_json(out / "spoken_2" / "data.json")["D1.json"]["log"][0]
    assert second["span_info"] == [["Restaurant-Inform", "Price", "cheap", 3, 3]]  # "centre" was heard as "center"
    variants = read_json(out / "manifest.json")["variants"]
    assert (variants["spoken_1"]["span_info_moved"], variants["spoken_1"]["span_info_dropped"]) == (2, 0)
    assert (variants["spoken_2"]["span_info_moved"], variants["spoken_2"]["span_info_dropped"]) == (1, 1)
    readme = (out / "README.md").read_text(encoding="utf-8")
    assert "3 spans placed in the new text, 1 left out" in readme
    assert "refer to the source text" not in readme


def test_a_spoken_readme_speaks_of_span_info_in_multiwoz_only():
    assert "span_info" not in _readme("spoken_reading", "jsonl")
    assert "slot values" in _readme("spoken_reading", "jsonl")
    multiwoz = _readme("spoken_reading", "multiwoz")
    assert "span_info" in multiwoz and "refer to the source text" not in multiwoz


def test_the_default_test_set_words_keep_span_info_to_multiwoz():
    words = task_types.ExportsTestSets.test_set_words(task_types.get("rewrite"), {})
    assert "span_info" not in words.slot_values and "span_info" in words.format_words["multiwoz"]


def test_the_speech_error_set_moves_its_spans_too(tmp_path, monkeypatch):
    job = create_job(corpus=_corpus(tmp_path), name="rewrites", task_type="rewrite", settings={"variants": ["paraphrase"]})
    respond(job.items.get(), "w", answers={"paraphrase": "Something cheap in the centre, please."})
    heard = "want a cheap place in the center"

    def simulate(utterances, **_options):
        return Simulation([SimulatedUtterance(key, text, heard, 0.25) for key, text in utterances], 0.25, 10.0, 0.0, [(10.0, 0.25)])

    monkeypatch.setattr("annotation.services.exports.simulate", simulate)
    monkeypatch.setattr("annotation.services.exports.asr_backend", lambda: None)
    out = tmp_path / "out"
    export_job(job, out, speech_errors_wer=0.2)

    turn = read_json(out / "speech_errors" / "data.json")["D1.json"]["log"][0]
    assert turn["text"] == heard and turn["span_info"] == [["Restaurant-Inform", "Price", "cheap", 2, 2]]
    speech = read_json(out / "manifest.json")["speech_errors"]
    assert (speech["span_info_moved"], speech["span_info_dropped"]) == (1, 1)
    assert "`speech_errors/` user turns: 1 spans placed in the ASR text, 1 left out" in (out / "README.md").read_text(encoding="utf-8")
