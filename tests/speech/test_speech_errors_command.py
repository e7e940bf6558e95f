"""`manage.py speech_errors`: the real pipeline (flite -> noise -> adapted pocketsphinx) and its refusals."""
import json

import pytest
from django.core.management import CommandError, call_command

from annotation.speech.wer import corpus_wer, normalize_words

from .fakes import FakeRecogniser, fake_tts
from .utterances import UTTERANCES

# Twelve utterances (~110 words) keep a run under a minute; WER still moves in steps of about 1%.
SMALL_SET = UTTERANCES[:12]


def write_lines(path, lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def utterance_file(tmp_path, texts):
    return write_lines(tmp_path / "in.jsonl", [json.dumps({"id": f"u{i}", "text": t}) for i, t in enumerate(texts)])


@pytest.mark.speech
@pytest.mark.slow
def test_target_twenty_percent_is_reached_on_synthesised_speech(tmp_path, capsys):
    out = tmp_path / "out.jsonl"
    call_command("speech_errors", str(utterance_file(tmp_path, SMALL_SET)), "--target-wer", "0.2", "--out", str(out),
                 "--seed", "3", "--engine", "flite")
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [row["id"] for row in rows] == [f"u{i}" for i in range(len(SMALL_SET))]
    assert all(set(row) == {"id", "text", "asr", "wer"} for row in rows)
    assert [row["text"] for row in rows] == SMALL_SET
    achieved = corpus_wer((row["text"], row["asr"]) for row in rows)  # recomputed from the file, not trusted
    assert abs(achieved - 0.2) <= 0.05
    assert any(row["wer"] > 0 for row in rows) and any(row["wer"] == 0 for row in rows)
    printed = capsys.readouterr().out
    assert f"Achieved corpus WER {achieved:.3f}" in printed
    assert "clean floor: SNR 50.00 dB" in printed and "search step 1: SNR" in printed


def test_a_target_below_the_floor_is_refused_with_the_floor_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr("annotation.speech.simulate.synthesize", fake_tts)
    monkeypatch.setattr("annotation.management.commands.speech_errors.asr_backend",
                        lambda: FakeRecogniser(SMALL_SET, min_deleted=1))
    floor = len(SMALL_SET) / sum(len(normalize_words(t)) for t in SMALL_SET)
    out = tmp_path / "out.jsonl"
    with pytest.raises(CommandError, match=f"below what clean speech already gives: the floor is {floor:.3f}"):
        call_command("speech_errors", str(utterance_file(tmp_path, SMALL_SET)), "--target-wer", "0.01",
                     "--tolerance", "0.02", "--out", str(out))
    assert not out.exists() and list(tmp_path.iterdir()) == [tmp_path / "in.jsonl"]


@pytest.mark.parametrize(
    ("lines", "says"),
    [
        (['{"id": 1, "text": "hello there"}', '{"id": 2, "text": "hi", "lang": "en"}'],
         "Line 2 has unknown field(s) lang; the accepted fields are: id, text"),
        (['{"id": 1, "text": "hello there"}', '{"id": 2, "text": '], "Line 2 is not valid JSON"),
    ],
)
def test_bad_input_lines_are_refused_naming_the_line(tmp_path, lines, says):
    out = tmp_path / "out.jsonl"
    with pytest.raises(CommandError, match=None) as refused:
        call_command("speech_errors", str(write_lines(tmp_path / "in.jsonl", lines)), "--target-wer", "0.2", "--out", str(out))
    assert says in str(refused.value)
    assert not out.exists()


def test_missing_input_and_output_directory_are_named(tmp_path):
    with pytest.raises(CommandError, match="Cannot read"):
        call_command("speech_errors", str(tmp_path / "absent.jsonl"), "--target-wer", "0.2", "--out", str(tmp_path / "o"))
    with pytest.raises(CommandError, match="does not exist"):
        call_command("speech_errors", str(utterance_file(tmp_path, SMALL_SET)), "--target-wer", "0.2",
                     "--out", str(tmp_path / "nowhere" / "o.jsonl"))
