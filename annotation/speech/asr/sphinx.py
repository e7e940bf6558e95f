"""The offline default: pocketsphinx with its bundled US English model, adapted to the job's text.

Adaptation: a trigram ARPA language model is built from the expected texts with pocketsphinx's own
builder (`pocketsphinx.lm.ArpaBoLM`, Katz-style back-off with a fixed discount), after the same
normalisation the word error rate uses. Words the bundled dictionary lacks get a pronunciation from
espeak-ng (`g2p.py`); words that still have none are left out of the model and listed in
`Adaptation.skipped_words`. Models are cached by a hash of the texts: in memory (one decoder per
model, least recently used first out) and as files under the system temp directory.

Each adapted model gets a decoder of its own whose dictionary holds only the model's words (their
bundled pronunciations, then espeak-ng's). A search over the model's words is what decodes either
way — a word outside the language model is never hypothesised — but pocketsphinx prepares every
dictionary word for a search it adds, so adding a small model to the one decoder with the whole
bundled dictionary cost seconds per model and far more memory than a small decoder
(docs/measurements.md, "Speech recognition").
"""
from __future__ import annotations

import hashlib
import io
import os
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from quorum.lazy_modules import lazy

from ..audio import read_wav, resample
from ..wer import normalize_words
from . import AsrBackend, AsrUnavailable, Transcript
from .g2p import espeak_pronunciation

if TYPE_CHECKING:
    import numpy as np
else:
    np = lazy("numpy")


SAMPLE_RATE = 16000  # the bundled acoustic model's rate
CACHE_VERSION = "1"  # bump when the model-building recipe changes, so old cached files are not reused


@dataclass(frozen=True)
class Adaptation:
    key: str
    arpa_path: Path
    dict_path: Path  # the pronunciations of the model's words, the dictionary of its decoder
    pronunciations: dict[str, str]  # words added to the dictionary, with their CMU phones
    skipped_words: tuple[str, ...]  # words with no pronunciation, left out of the model


def adaptation_key(texts: Sequence[str]) -> str:
    digest = hashlib.sha256(CACHE_VERSION.encode())
    for text in texts:
        digest.update(b"\0" + " ".join(normalize_words(text)).encode("utf-8"))
    return digest.hexdigest()[:32]


def default_cache_dir() -> Path:
    return Path(tempfile.gettempdir()) / "quorum-asr-cache"


class PocketsphinxBackend(AsrBackend):
    name = "pocketsphinx"

    def __init__(self, *, cache_dir: str | os.PathLike | None = None, max_models: int = 16, **_ignored):
        try:
            import pocketsphinx  # noqa: F401 - fail here, with a clear message, not at the first recording
        except ImportError as exc:
            raise AsrUnavailable("The pocketsphinx backend needs the Python package pocketsphinx (see requirements.txt).") from exc
        self.cache_dir = Path(cache_dir) if cache_dir else default_cache_dir()
        self.max_models = max_models

    def transcribe(self, wav: bytes, *, language: str = "en", adapt_to: Sequence[str] = ()) -> Transcript:
        if language.split("-")[0].lower() != "en":
            raise AsrUnavailable(
                f"No offline model for language {language!r}: pocketsphinx ships English only. "
                "Set QUORUM_ASR_BACKEND=whisper (with QUORUM_ASR_WHISPER_DIR) or QUORUM_ASR_HTTP_URL with QUORUM_ASR_BACKEND=http."
            )
        audio = resample(read_wav(wav), SAMPLE_RATE)
        engine = _engine()
        started = time.process_time()
        with engine.lock:
            decoder = engine.decoder_for(adapt_to, self.cache_dir, self.max_models) if adapt_to else engine.bundled()
            text, confidence = _decode(decoder, audio.pcm16())
        return Transcript(
            text=text,
            confidence=confidence,
            decode_seconds=time.process_time() - started,
            audio_seconds=audio.seconds,
            backend=self.name,
        )

    def adaptation(self, texts: Sequence[str]) -> Adaptation:
        """The language model for `texts` (built or read from the cache); exposed for reports and tests."""
        return build_adaptation(texts, self.cache_dir)


def build_adaptation(texts: Sequence[str], cache_dir: Path) -> Adaptation:
    from pocketsphinx.lm import ArpaBoLM

    key = adaptation_key(texts)
    sentences = [normalize_words(text) for text in texts]
    known = _dictionary()
    pronunciations: dict[str, str] = {}
    skipped: list[str] = []
    for word in sorted({w for words in sentences for w in words}):
        if word in known:
            continue
        phones = espeak_pronunciation(word)
        if phones:
            pronunciations[word] = phones
        else:
            skipped.append(word)
    # The skipped words are part of the name: they depend on whether espeak-ng was there when it was built.
    skipped_tag = hashlib.sha256("\0".join(skipped).encode()).hexdigest()[:8]
    arpa_path = cache_dir / f"{key}-{skipped_tag}.arpa"
    dict_path = arpa_path.with_suffix(".dict")
    if not (arpa_path.exists() and dict_path.exists()):
        drop = set(skipped)
        kept = [[w for w in words if w not in drop] for words in sentences]
        lines = "\n".join(" ".join(words) for words in kept)
        model = ArpaBoLM(text=lines, add_start=True)
        model.compute()
        out = io.StringIO()
        model.write(out)
        cache_dir.mkdir(parents=True, exist_ok=True)
        _write_whole(dict_path, _dictionary_lines({w for words in kept for w in words}, pronunciations))
        _write_whole(arpa_path, out.getvalue())  # last: its presence says the pair is complete
    return Adaptation(
        key=key, arpa_path=arpa_path, dict_path=dict_path, pronunciations=pronunciations, skipped_words=tuple(skipped),
    )


def _write_whole(path: Path, text: str) -> None:
    """Write then rename, so a concurrent worker never reads half a file."""
    partial = path.with_suffix(f"{path.suffix}.{os.getpid()}.tmp")
    partial.write_text(text, encoding="utf-8")
    partial.replace(path)


def _dictionary_lines(words: set[str], pronunciations: dict[str, str]) -> str:
    """The bundled dictionary's entries for `words` (every variant, e.g. `read(2)`), then the
    espeak-ng pronunciations of the words it lacks, in the dictionary's own format."""
    from pocketsphinx import get_model_path

    with open(get_model_path("en-us/cmudict-en-us.dict"), encoding="utf-8") as handle:
        bundled = [line for line in handle if line.split(" ", 1)[0].split("(", 1)[0] in words]
    added = [f"{word} {phones}\n" for word, phones in sorted(pronunciations.items())]
    return "".join(bundled + added)


_DICTIONARY: frozenset[str] | None = None


def _dictionary() -> frozenset[str]:
    """The words of the bundled CMU dictionary (read once a process)."""
    global _DICTIONARY
    if _DICTIONARY is None:
        from pocketsphinx import get_model_path

        with open(get_model_path("en-us/cmudict-en-us.dict"), encoding="utf-8") as handle:
            _DICTIONARY = frozenset(line.split(" ", 1)[0].split("(", 1)[0] for line in handle if line.strip())
    return _DICTIONARY


class _Engine:
    """The process's decoders (loading them is the costly part): the bundled model's, made on first
    use, and one per adapted model, the least recently used dropped past `max_models`."""

    def __init__(self):
        self.lock = threading.Lock()  # a decoder decodes one utterance at a time
        self._bundled = None
        self.adapted: OrderedDict[str, object] = OrderedDict()

    def bundled(self):
        from pocketsphinx import Decoder

        if self._bundled is None:
            self._bundled = Decoder(loglevel="FATAL")
        return self._bundled

    def decoder_for(self, texts: Sequence[str], cache_dir: Path, max_models: int):
        from pocketsphinx import Decoder

        key = adaptation_key(texts)
        if key in self.adapted:
            self.adapted.move_to_end(key)
            return self.adapted[key]
        adaptation = build_adaptation(texts, cache_dir)
        decoder = Decoder(lm=str(adaptation.arpa_path), dict=str(adaptation.dict_path), loglevel="FATAL")
        self.adapted[key] = decoder
        while len(self.adapted) > max_models:
            self.adapted.popitem(last=False)
        return decoder


def _decode(decoder, pcm: bytes) -> tuple[str, float | None]:
    decoder.start_utt()
    decoder.process_raw(pcm, full_utt=True)
    decoder.end_utt()
    hypothesis = decoder.hyp()
    if hypothesis is None:
        return "", None
    # get_prob: the hypothesis' posterior probability from the lattice.
    confidence = float(np.clip(decoder.get_prob(), 0.0, 1.0))
    return hypothesis.hypstr, confidence


_ENGINE: _Engine | None = None
_ENGINE_LOCK = threading.Lock()


def _engine() -> _Engine:
    global _ENGINE
    with _ENGINE_LOCK:
        if _ENGINE is None:
            _ENGINE = _Engine()
        return _ENGINE
