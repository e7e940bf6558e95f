"""A word-level diff of a rewrite against its source, with slot values marked. Pure: no Django import.

difflib's SequenceMatcher is enough here: a rewrite and its source are one sentence each (tens of
tokens), so its quadratic worst case costs nothing, it is in the standard library, and a reviewer
needs to see which words changed, not a minimal edit script. `autojunk` is off because its
heuristic (ignore tokens that are frequent in long sequences) would hide repeated short words.

The template renders every segment with autoescape on (<ins>, <del>, <mark> around plain text),
so no user text passes through mark_safe.
"""
import re
from dataclasses import dataclass
from difflib import SequenceMatcher

from . import text_units
from .highlight import slot_segments

# Words (with inner apostrophes), single punctuation marks, and runs of spaces: spaces are kept as
# tokens so the rewrite is shown exactly as written.
_SPACED_TOKENS = re.compile(r"\w+(?:['’]\w+)*|\s+|[^\w\s]", re.UNICODE)


@dataclass(frozen=True)
class Segment:
    text: str
    op: str  # "same": in both; "added": only in the rewrite; "removed": only in the source
    slot: bool  # part of one of the source's slot values


def tokens(text: str) -> list[str]:
    """Word tokens in scripts written with spaces; characters in scripts written without
    (Chinese has no spaces to tell words apart, and a character is what a reader compares)."""
    if text_units.is_unspaced(text):
        return list(text)
    return _SPACED_TOKENS.findall(text)


def word_diff(source: str, rewrite: str, slot_values=()) -> list[Segment]:
    """The rewrite as segments against the source: what is kept, added and removed, in reading
    order (a removal comes before the addition that replaces it); slot values are marked in
    kept and added text."""
    source, rewrite = source or "", rewrite or ""
    a, b = tokens(source), tokens(rewrite)
    # Compare words case-sensitively: a case change is a change a reviewer should see.
    matcher = SequenceMatcher(None, a, b, autojunk=False)
    out: list[Segment] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op in ("delete", "replace"):
            removed = "".join(a[i1:i2])
            if removed.strip():
                out.append(Segment(removed, "removed", False))
        if op in ("insert", "replace", "equal"):
            kind = "same" if op == "equal" else "added"
            out.extend(Segment(text, kind, is_slot) for text, is_slot in slot_segments("".join(b[j1:j2]), slot_values))
    return _merge(out)


def _merge(segments: list[Segment]) -> list[Segment]:
    """Adjacent segments of the same kind as one, so the page has few elements."""
    merged: list[Segment] = []
    for seg in segments:
        if merged and merged[-1].op == seg.op and merged[-1].slot == seg.slot:
            merged[-1] = Segment(merged[-1].text + seg.text, seg.op, seg.slot)
        else:
            merged.append(seg)
    return merged
