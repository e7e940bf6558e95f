"""Typing-process features and flags (annotation/quality/typing.py, pure), and their place in the
worker flags (`flags.compute_flags` with a `typing` column)."""
import random

import pandas as pd

from annotation.quality import flags
from annotation.quality.typing import TypingThresholds, features, field_flags, summary, timeline
from annotation.text import typing_log

TEXT = "could you please find me a cheap italian restaurant somewhere in the centre of town"


def composed(seed=0):
    rng = random.Random(seed)
    events = [("f", 1500, None)]
    for i, ch in enumerate(TEXT):
        gap = rng.lognormvariate(5.3, 0.45)
        if ch == " " and rng.random() < 0.3:
            gap += rng.uniform(2000, 5000)
        events.append(("k", gap, None))
        if i % 17 == 16:
            events += [("k", 220, None), ("d", 500, None)]
    return typing_log.build_record(events)


def flags_of(record, text=TEXT, **t):
    return field_flags(features(record, text), TypingThresholds(**t))


def test_composing_raises_no_flag():
    for seed in range(20):
        assert flags_of(composed(seed)) == {}


def test_transcription_is_steady_typing_without_pauses():
    rng = random.Random(1)
    record = typing_log.build_record([("f", 900, None)] + [("k", rng.lognormvariate(5.2, 0.25), None) for _ in TEXT])
    found = flags_of(record)
    assert set(found) == {"transcription_rhythm"}
    assert "0 hesitations of 1 s or more" in found["transcription_rhythm"]


def test_paste_after_leaving_the_page():
    record = typing_log.build_record([("f", 500, None), ("h", 1000, None), ("v", 40000, None), ("p", 800, len(TEXT))])
    found = flags_of(record)
    assert set(found) == {"paste_dominant", "composed_offscreen"}
    assert "40 s away" in found["composed_offscreen"] and "100%" in found["paste_dominant"]


def test_a_value_set_by_script_is_text_no_edit_made():
    found = flags_of(typing_log.build_record([("f", 500, None)]))
    assert "synthetic_input" in found and f"{len(TEXT)} characters of the text no recorded edit made" in found["synthetic_input"]
    found = flags_of(typing_log.build_record([("f", 500, None), ("x", 10, len(TEXT))]))
    assert "no key pressed" in found["synthetic_input"]


def test_machine_speed():
    record = typing_log.build_record([("f", 500, None)] + [("k", 10, None) for _ in TEXT])
    found = flags_of(record)
    assert "implausible_speed" in found and "10 ms a key" in found["implausible_speed"]


def test_long_text_without_a_correction():
    long_text = (TEXT + " ") * 3
    rng = random.Random(2)
    events = [("f", 500, None)] + [("k", rng.lognormvariate(5.3, 0.5) + (3000 if i % 9 == 0 else 0), None) for i, _ in enumerate(long_text)]
    assert set(flags_of(typing_log.build_record(events), long_text)) == {"revision_free"}
    assert flags_of(typing_log.build_record(events), long_text, revision_free_min_chars=1000) == {}


def test_malformed_and_thresholds_per_job():
    assert "malformed_log" in field_flags(features({"malformed": "not JSON"}, TEXT))
    assert "malformed_log" in field_flags(features({"v": 1, "e": "K1", "c": {}}, TEXT))
    record = typing_log.build_record([("f", 500, None)] + [("k", 10, None) for _ in TEXT])
    assert "implausible_speed" not in flags_of(record, implausible_iki_ms=5)


def test_summary_and_timeline_for_a_reviewer():
    record = typing_log.build_record([("f", 500, None), ("k", 200, None), ("w", 100, None), ("g", 9000, None), ("p", 500, 30)])
    f = features(record, "a" + "b" * 30)
    assert "1 typed" in summary(f) and "30 pasted" in summary(f) and "9 s away" in summary(f)
    cells = [c["what"] for c in timeline(record, width=20)]
    assert "away" in cells and cells[-1] == "paste" and "typing" in cells


def test_compute_flags_reads_the_typing_column():
    responses = pd.DataFrame({"response": [1, 2], "worker": [10, 20], "job": [1, 1], "item": [5, 6], "seconds": [30.0, 31.0]})
    machine = typing_log.build_record([("f", 500, None)] + [("k", 10, None) for _ in TEXT])
    texts = pd.DataFrame({
        "response": [1, 2], "worker": [10, 20], "item": [5, 6], "field": ["paraphrase"] * 2, "text": [TEXT, TEXT],
        "source": ["", ""], "order": [0, 1], "pasted_chars": [0, 0], "typed_chars": [0, 0], "typing": [composed(), machine],
    })
    report = flags.compute_flags(responses, texts=texts)
    assert report.responses.get(1) is None
    assert "implausible_speed" in report.responses[2]
    assert report.evidence[2]["implausible_speed"].startswith("paraphrase: ")
    assert [f.code for f in report.workers[20]] == ["implausible_speed"]
    assert report.measures[10]["implausible_speed_share"] == 0.0
    assert report.measures[10]["typing_logged_fields"] == 1 and report.measures[10]["typing_pasted_share"] == 0.0
    assert report.measures[20]["typing_median_iki_ms"] == 10.0
