"""Which accepted rewrite goes into a test set. Pure: no Django import.

With redundancy above 1 a turn may have several accepted rewrites. A test set holds one, so it
takes the earliest accepted response (by submission time, then id, so the choice is stable); if
that response has no text for a variant (the job's variants changed), the next accepted one that
has is used. The raw CSV keeps every response.
"""
from collections.abc import Iterable, Sequence


def earliest_accepted_rewrites(accepted_responses: Iterable, variants: Sequence[str]) -> dict[str, str]:
    """Variant -> rewrite text, from responses that are all accepted (with .answers, .submitted_at, .id)."""
    chosen: dict[str, str] = {}
    for response in sorted(accepted_responses, key=lambda r: (r.submitted_at, r.id)):
        answers = response.answers if isinstance(response.answers, dict) else {}
        for variant in variants:
            text = answers.get(variant)
            if variant not in chosen and isinstance(text, str) and text.strip():
                chosen[variant] = text
        if len(chosen) == len(variants):
            break
    return chosen


def values_heard(slot_values: list, heard: str) -> tuple[list, list]:
    """(kept, dropped): a turn's slot values split by whether they still occur verbatim in an ASR
    text `heard`. The importers anchor every value in its turn's text, so a test set made of ASR
    text keeps only the values the recogniser heard (a reading may say "two" where the value is "2")."""
    kept = [v for v in slot_values if isinstance(v, dict) and str(v.get("value", "")) in heard]
    return kept, [v for v in slot_values if v not in kept]
