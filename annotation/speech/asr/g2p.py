"""Pronunciations for words the bundled CMU dictionary lacks, from espeak-ng's IPA mapped to CMU phones.

The mapping covers the symbols espeak-ng's English voices print; a word whose IPA holds a symbol
outside it gets no pronunciation (the caller leaves it out of the language model and says so).
"""
from __future__ import annotations

import shutil
import subprocess
import unicodedata

# Longest symbols first so diphthongs and affricates win over their parts.
IPA_TO_CMU = {
    "aɪə": "AY ER", "aɪ": "AY", "aʊ": "AW", "eɪ": "EY", "oʊ": "OW", "əʊ": "OW", "ɔɪ": "OY",
    "ɪə": "IH R", "eə": "EH R", "ʊə": "UH R", "tʃ": "CH", "dʒ": "JH",
    "ɑ": "AA", "ɒ": "AA", "æ": "AE", "ʌ": "AH", "ə": "AH", "ɐ": "AH", "ɚ": "ER", "ɝ": "ER", "ɜ": "ER",
    "ɔ": "AO", "ɛ": "EH", "e": "EH", "ɪ": "IH", "ᵻ": "IH", "i": "IY", "ʊ": "UH", "u": "UW", "o": "OW", "a": "AA",
    "b": "B", "d": "D", "ð": "DH", "f": "F", "ɡ": "G", "g": "G", "h": "HH", "k": "K", "l": "L", "m": "M",
    "n": "N", "ŋ": "NG", "p": "P", "ɹ": "R", "r": "R", "s": "S", "ʃ": "SH", "t": "T", "θ": "TH", "v": "V",
    "w": "W", "j": "Y", "z": "Z", "ʒ": "ZH", "ɾ": "T", "x": "K", "ʍ": "W", "ɬ": "L",
}
IGNORED = set("ˈˌːˑ-_ ʔ'") | {"\u0361", "\u0329", "\u032f", "\u0303"}  # stress, length, tie bars, syllabic marks
_SYMBOLS = sorted(IPA_TO_CMU, key=len, reverse=True)


def ipa_to_cmu(ipa: str) -> str | None:
    ipa = unicodedata.normalize("NFD", ipa)
    phones, i = [], 0
    while i < len(ipa):
        if ipa[i] in IGNORED or unicodedata.combining(ipa[i]):
            i += 1
            continue
        symbol = next((s for s in _SYMBOLS if ipa.startswith(s, i)), None)
        if symbol is None:
            return None
        phones.append(IPA_TO_CMU[symbol])
        i += len(symbol)
    return " ".join(phones) or None


def espeak_pronunciation(word: str, voice: str = "en-us") -> str | None:
    """CMU phones for `word` as espeak-ng would say it, or None (no espeak-ng, or an unmapped symbol)."""
    binary = shutil.which("espeak-ng")
    if binary is None:
        return None
    done = subprocess.run(  # noqa: S603 - fixed program, the word is one argument after "--"
        [binary, "-q", "-x", "--ipa", "-v", voice, "--", word], capture_output=True, timeout=30, check=False
    )
    if done.returncode != 0:
        return None
    return ipa_to_cmu(done.stdout.decode("utf-8", "replace").strip())
