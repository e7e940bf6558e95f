"""The offensive-word filter run over dialogs and responses before they are rated (PROTOCOLS.md
section 4: offensive dialogs are filtered out before evaluation). Pure: no Django.

A word list, matched as whole words, case-insensitively, with an optional trailing "s" (so "idiots"
is caught by "idiot"); a list entry of several words matches that phrase. It flags, it does not
decide: an organizer keeps or drops each flagged dialog in the review queue.
"""
import re
from collections.abc import Iterable
from pathlib import Path

#: A small default list of English profanity and insults. Organizers of a real campaign give their
#: own (a list, or a file with one word per line) in QUORUM_OFFENSIVE_WORDS.
DEFAULT_WORDS = (
    "asshole", "bastard", "bitch", "bullshit", "crap", "cunt", "damn", "dick", "dumbass", "fuck", "fucking",
    "idiot", "moron", "piss", "shit", "slut", "stupid", "whore", "kill yourself", "shut up",
)


class WordListError(ValueError):
    """The configured word list cannot be read (str() says which line or file, and why)."""


def load_words(setting) -> list[str]:
    """The word list from the setting: a list of words, or the path of a UTF-8 file with one word
    (or phrase) per line, '#' starting a comment. Empty entries are ignored."""
    if isinstance(setting, (list, tuple)):
        raw = list(setting)
    elif isinstance(setting, (str, Path)) and str(setting).strip():
        path = Path(setting)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise WordListError(f"the offensive-word file {path.name!r} cannot be read ({type(exc).__name__})") from None
        raw = [line.split("#", 1)[0] for line in text.splitlines()]
    else:
        raise WordListError("QUORUM_OFFENSIVE_WORDS must be a list of words or the path of a word-list file")
    words = []
    for number, word in enumerate(raw, start=1):
        if not isinstance(word, str):
            raise WordListError(f"entry {number} of the offensive-word list is not text")
        word = " ".join(word.lower().split())
        if word:
            words.append(word)
    return sorted(set(words))


def matcher(words: Iterable[str]):
    """A function text -> sorted list of the list's words found in it."""
    words = list(words)
    if not words:
        return lambda text: []
    alternatives = "|".join(r"\s+".join(re.escape(part) for part in w.split()) for w in sorted(words, key=len, reverse=True))
    pattern = re.compile(rf"(?<!\w)({alternatives})s?(?!\w)", re.IGNORECASE)

    def found(text: str) -> list[str]:
        return sorted({" ".join(m.group(1).lower().split()) for m in pattern.finditer(text or "")})

    return found


def flagged_words(texts: Iterable[str], find) -> list[str]:
    """Every listed word found in any of the texts (one dialog's turns), sorted."""
    return sorted({word for text in texts for word in find(text)})
