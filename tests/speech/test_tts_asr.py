"""Synthesis and recognition with the real Debian programs and the bundled pocketsphinx model."""
import pytest
import requests

from annotation.speech.asr import AsrFailed, AsrUnavailable, get_backend
from annotation.speech.audio import read_wav
from annotation.speech.tts import SpeechUnavailable, synthesize
from annotation.speech.wer import corpus_wer

SENTENCES = [
    "I need a cheap hotel in the north of town",
    "Book a table for two at seven pm",
    "What is the phone number of the restaurant",
    "I would like a taxi to the train station",
]


@pytest.mark.speech
@pytest.mark.parametrize("engine", ["espeak-ng", "flite"])
def test_synthesis_gives_wav_at_the_asked_rate(engine):
    audio = read_wav(synthesize("Book a table for two", engine=engine, sample_rate=16000))
    assert audio.sample_rate == 16000
    assert 0.8 < audio.seconds < 4.0
    assert audio.rms_dbfs() > -40


@pytest.mark.speech
def test_slower_speech_is_longer():
    fast = read_wav(synthesize("Book a table for two at seven", speed=220))
    slow = read_wav(synthesize("Book a table for two at seven", speed=110))
    assert slow.seconds > 1.5 * fast.seconds


def test_missing_engine_is_named(monkeypatch):
    monkeypatch.setattr("annotation.speech.tts.shutil.which", lambda name: None)
    with pytest.raises(SpeechUnavailable, match="'flite' is not installed; install the Debian package"):
        synthesize("hello", engine="flite")


@pytest.mark.speech
@pytest.mark.slow
def test_adapting_to_the_corpus_text_recognises_clean_synthetic_speech():
    backend = get_backend()
    recordings = [synthesize(text, engine="flite") for text in SENTENCES]
    adapted = [backend.transcribe(wav, adapt_to=SENTENCES) for wav in recordings]
    generic = [backend.transcribe(wav) for wav in recordings]
    adapted_wer = corpus_wer(zip(SENTENCES, (t.text for t in adapted), strict=False))
    generic_wer = corpus_wer(zip(SENTENCES, (t.text for t in generic), strict=False))
    assert adapted_wer <= 0.05
    assert generic_wer > adapted_wer
    first = adapted[0]
    assert first.backend == "pocketsphinx" and first.audio_seconds > 1.0 and first.decode_seconds > 0
    assert first.confidence is None or 0.0 <= first.confidence <= 1.0


@pytest.mark.speech
def test_words_missing_from_the_dictionary_get_a_pronunciation_from_espeak(tmp_path):
    backend = get_backend(cache_dir=tmp_path)
    adaptation = backend.adaptation(["Take me to Zizzi Quorumville please"])
    assert "quorumville" in adaptation.pronunciations
    assert adaptation.skipped_words == ()
    assert "\\data\\" in adaptation.arpa_path.read_text()  # an ARPA model was written


def test_languages_without_an_offline_model_say_so():
    with pytest.raises(AsrUnavailable, match="No offline model for language 'de'.*QUORUM_ASR_BACKEND"):
        get_backend("pocketsphinx").transcribe(b"", language="de")


def test_unknown_backend_and_missing_options_are_named(tmp_path):
    with pytest.raises(AsrUnavailable, match="Unknown ASR backend 'kaldi'"):
        get_backend("kaldi")
    with pytest.raises(AsrUnavailable, match="QUORUM_ASR_HTTP_URL"):
        get_backend("http")
    with pytest.raises(AsrUnavailable, match="QUORUM_ASR_WHISPER_DIR"):
        get_backend("whisper")
    with pytest.raises(AsrUnavailable, match="faster-whisper"):
        get_backend("whisper", whisper_dir=tmp_path)  # faster-whisper is not a dependency


class FakeResponse:
    def __init__(self, status, body):
        self.status_code, self._body = status, body

    def json(self):
        if isinstance(self._body, Exception):
            raise self._body
        return self._body


class FakeSession:
    def __init__(self, answer):
        self.answer, self.calls = answer, []

    def post(self, url, **kwargs):
        self.calls.append((url, kwargs))
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def _wav():
    import numpy as np

    from annotation.speech.audio import Audio, write_wav

    return write_wav(Audio.from_samples(np.full(16000, 0.1), 16000))


def test_http_backend_posts_the_wav_and_reads_text_and_confidence():
    session = FakeSession(FakeResponse(200, {"text": "book a table", "confidence": 0.9}))
    backend = get_backend("http", http_url="http://asr.example/transcribe", session=session)
    transcript = backend.transcribe(_wav(), language="en")
    assert (transcript.text, transcript.confidence, transcript.backend) == ("book a table", 0.9, "http")
    assert transcript.audio_seconds == pytest.approx(1.0)
    url, kwargs = session.calls[0]
    assert url == "http://asr.example/transcribe" and kwargs["headers"]["Content-Type"] == "audio/wav"
    assert kwargs["params"] == {"language": "en"} and kwargs["timeout"] == 30.0


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        (requests.Timeout(), "did not answer within 5 s"),
        (requests.ConnectionError(), "could not be reached"),
        (FakeResponse(503, {}), "answered HTTP 503"),
        (FakeResponse(200, ValueError("no json")), 'did not answer JSON'),
        (FakeResponse(200, {"confidence": 1}), 'did not answer JSON'),
    ],
)
def test_http_backend_failures_are_clear(answer, says):
    backend = get_backend("http", http_url="http://asr.example/", http_timeout=5, session=FakeSession(answer))
    with pytest.raises(AsrFailed, match=says):
        backend.transcribe(_wav())


def test_espeak_ipa_maps_to_cmu_phones():
    from annotation.speech.asr.g2p import ipa_to_cmu

    assert ipa_to_cmu("kˈɛɾəlz") == "K EH T AH L Z"  # espeak-ng's "kettles"
    assert ipa_to_cmu("tʃˈiːp hoʊtˈɛl") == "CH IY P HH OW T EH L"
    assert ipa_to_cmu("ʘ") is None  # a click: no CMU phone, so no pronunciation rather than a wrong one


@pytest.mark.speech
def test_an_adapted_model_is_built_once_and_reused_from_the_cache(tmp_path):
    backend = get_backend(cache_dir=tmp_path)
    first = backend.adaptation(SENTENCES)
    written = first.arpa_path.stat().st_mtime_ns
    again = backend.adaptation([s.upper() + "!" for s in SENTENCES])  # the same text after normalisation
    assert again.arpa_path == first.arpa_path and again.arpa_path.stat().st_mtime_ns == written
    assert backend.adaptation(SENTENCES[:2]).arpa_path != first.arpa_path
