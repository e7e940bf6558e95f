"""The SNR search and its refusals, against a recogniser whose WER is a closed-form function of the SNR."""
import pytest

from annotation.speech.simulate import SimulationError, read_utterances, simulate
from annotation.speech.wer import corpus_wer, normalize_words

from .fakes import FakeRecogniser, fake_tts, snr_for
from .utterances import UTTERANCES

PAIRS = [(f"u{i}", text) for i, text in enumerate(UTTERANCES)]


def run(target, **options):
    backend = FakeRecogniser(UTTERANCES, min_deleted=options.pop("min_deleted", 0))
    return simulate(PAIRS, target_wer=target, backend=backend, tts=fake_tts, **options)


@pytest.mark.parametrize("target", [0.1, 0.2, 0.3])
def test_search_lands_within_tolerance_at_the_snr_the_closed_form_gives(target):
    result = run(target, tolerance=0.05)
    assert abs(result.wer - target) <= 0.05
    assert result.wer == pytest.approx(corpus_wer((u.text, u.asr) for u in result.utterances))
    # Per utterance, round(fraction * words) words go, so the corpus WER is the fraction within rounding.
    assert result.snr_db == pytest.approx(snr_for(result.wer), abs=1.5)
    assert [u.id for u in result.utterances] == [ident for ident, _ in PAIRS]
    assert result.steps[0][0] == 50.0  # the clean floor is measured first


def test_a_target_below_the_clean_floor_is_refused_naming_the_floor():
    # The recogniser always loses at least one word an utterance: the floor is utterances / words.
    floor = len(UTTERANCES) / sum(len(normalize_words(t)) for t in UTTERANCES)
    with pytest.raises(SimulationError, match=f"the floor is {floor:.3f}"):
        run(0.0, tolerance=0.02, min_deleted=1)


def test_the_same_seed_gives_the_same_output():
    first, again = run(0.2, seed=7), run(0.2, seed=7)
    assert [u.asr for u in first.utterances] == [u.asr for u in again.utterances] and first.snr_db == again.snr_db


def test_babble_noise_also_reaches_the_target():
    assert abs(run(0.2, noise="babble").wer - 0.2) <= 0.05


@pytest.mark.parametrize(
    ("options", "says"),
    [({"target": 1.5}, "between 0 and 1"), ({"target": 0.2, "tolerance": 0}, "tolerance must be between"),
     ({"target": 0.2, "noise": "pink"}, "Unknown noise 'pink'")],
)
def test_bad_options_are_refused(options, says):
    with pytest.raises(SimulationError, match=says):
        run(options.pop("target"), **options)


@pytest.mark.parametrize(
    ("lines", "says"),
    [
        (['{"id": 1, "text": "hi"}', "{not json"], "Line 2 is not valid JSON"),
        (['{"id": 1, "text": "hi", "speaker": "user"}'], "Line 1 has unknown field(s) speaker; the accepted fields are: id, text"),
        (['{"text": "hi"}'], "Line 1 lacks id"),
        (['{"id": 1, "text": ""}'], "Line 1: text must be a non-empty string"),
        (['{"id": 1, "text": "a"}', '{"id": 1, "text": "b"}'], "Line 2: id 1 appears twice"),
        (["[1, 2]"], "Line 1 must be a JSON object"),
        (["", "  "], "no utterances"),
    ],
)
def test_bad_input_lines_are_refused_naming_the_line(lines, says):
    with pytest.raises(SimulationError, match=None) as refused:
        read_utterances(lines)
    assert says in str(refused.value)


def test_blank_lines_are_skipped():
    assert read_utterances(['{"id": "a", "text": "hi"}', "", '{"id": 2, "text": "yo"}']) == [("a", "hi"), (2, "yo")]
