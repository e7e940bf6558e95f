"""Split an utterance into plain and slot-value segments for display. Pure: no Django import.

The template renders each segment with autoescape on, wrapping slot values in <mark>, so user text
never passes through mark_safe. Matching follows the rewrite checks (annotation.text.text_units):
case-insensitive, and in scripts written with spaces a value must stand as whole words, so "3"
is not marked inside "13".
"""
import re

from . import text_units


def slot_segments(text: str, values) -> list[tuple[str, bool]]:
    """[(text, is_slot_value), ...] whose texts concatenate back to `text`."""
    text = text or ""
    unspaced = text_units.is_unspaced(text)
    patterns = []
    # Longest first, so that "4 people" wins over "4" where both start at the same place.
    for value in sorted({str(v).strip() for v in values or () if str(v).strip()}, key=len, reverse=True):
        body = r"\s+".join(re.escape(part) for part in value.split())
        if not unspaced and not text_units.is_unspaced(value):
            if value[0].isalnum():
                body = r"(?<!\w)" + body
            if value[-1].isalnum():
                body += r"(?!\w)"
        patterns.append(f"(?:{body})")
    if not patterns:
        return [(text, False)] if text else []

    segments, pos = [], 0
    for match in re.finditer("|".join(patterns), text, flags=re.IGNORECASE):
        if match.start() > pos:
            segments.append((text[pos : match.start()], False))
        segments.append((match.group(), True))
        pos = match.end()
    if pos < len(text):
        segments.append((text[pos:], False))
    return segments
