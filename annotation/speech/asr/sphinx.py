"""The offline default: pocketsphinx with its bundled US English model, adapted to the job's text.

Adaptation: a trigram ARPA language model is built from the expected texts with pocketsphinx's own
builder (`pocketsphinx.lm.ArpaBoLM`, Katz-style back-off with a fixed discount), after the same
normalisation the word error rate uses. Words the bundled dictionary lacks get a pronunciation from
espeak-ng (`g2p.py`); words that still have none are left out of the model and listed in
`Adaptation.skipped_words`. Models are cached by a hash of the texts: in memory (the decoder's
searches, least recently used first out) and as files under the system temp directory.
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
DEFAULT_SEARCH = "_default"


@dataclass(frozen=True)
class Adaptation:
    key: str
    arpa_path: Path
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
            search = engine.search_for(adapt_to, self.cache_dir, self.max_models) if adapt_to else DEFAULT_SEARCH
            text, confidence = engine.decode(search, audio.pcm16())
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
    if not arpa_path.exists():
        drop = set(skipped)
        lines = "\n".join(" ".join(w for w in words if w not in drop) for words in sentences)
        model = ArpaBoLM(text=lines, add_start=True)
        model.compute()
        out = io.StringIO()
        model.write(out)
        cache_dir.mkdir(parents=True, exist_ok=True)
        # Write then rename, so a concurrent worker never reads half a file.
        partial = arpa_path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(out.getvalue(), encoding="utf-8")
        partial.replace(arpa_path)
    return Adaptation(key=key, arpa_path=arpa_path, pronunciations=pronunciations, skipped_words=tuple(skipped))


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
    """One decoder a process (loading the acoustic model is the costly part) with one search per adaptation."""

    def __init__(self):
        from pocketsphinx import Decoder

        self.lock = threading.Lock()  # a decoder decodes one utterance at a time
        self.decoder = Decoder(loglevel="FATAL")
        self.searches: OrderedDict[str, str] = OrderedDict()

    def search_for(self, texts: Sequence[str], cache_dir: Path, max_models: int) -> str:
        from pocketsphinx import NGramModel

        key = adaptation_key(texts)
        if key in self.searches:
            self.searches.move_to_end(key)
            return self.searches[key]
        adaptation = build_adaptation(texts, cache_dir)
        for word, phones in adaptation.pronunciations.items():
            if self.decoder.lookup_word(word) is None:
                self.decoder.add_word(word, phones, False)
        lm = NGramModel(self.decoder.config, self.decoder.logmath, str(adaptation.arpa_path))
        name = f"adapted_{key}"
        self.decoder.add_lm(name, lm)
        self.searches[key] = name
        while len(self.searches) > max_models:
            _, old = self.searches.popitem(last=False)
            self.decoder.remove_search(old)
        return name

    def decode(self, search: str, pcm: bytes) -> tuple[str, float | None]:
        self.decoder.activate_search(search)
        self.decoder.start_utt()
        self.decoder.process_raw(pcm, full_utt=True)
        self.decoder.end_utt()
        hypothesis = self.decoder.hyp()
        if hypothesis is None:
            return "", None
        # get_prob: the hypothesis' posterior probability from the lattice.
        confidence = float(np.clip(self.decoder.get_prob(), 0.0, 1.0))
        return hypothesis.hypstr, confidence


_ENGINE: _Engine | None = None
_ENGINE_LOCK = threading.Lock()


def _engine() -> _Engine:
    global _ENGINE
    with _ENGINE_LOCK:
        if _ENGINE is None:
            _ENGINE = _Engine()
        return _ENGINE
