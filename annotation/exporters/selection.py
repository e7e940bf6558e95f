"""Which accepted response's text goes into a test set. Pure: no Django import.

With redundancy above 1, or after a reviewer accepted a voted-down response after all, a turn may
have several accepted responses. A test set holds one text per turn and set, by this rule (the
export README states it, `readme.earliest_rule`):

1. text that passed the vote (or was never voted on) first, the earliest accepted response first (by
   submission time, then id, so the choice is stable);
2. text that was voted down and then accepted by a reviewer after all only where no other accepted
   response has text for that set: the re-collection that passed the vote wins over it.

A response is voted down on a part when its vote listed that part (`checks["voted_down_parts"]`),
or, for a vote on the whole response, when its round ended voted down (`round_state`
"recollected" or "exhausted"). A response whose text is empty for a set gives way to the next. The
raw CSV keeps every response.
"""
from collections.abc import Iterable, Sequence

#: The review-round states of a response the vote turned down (annotation.models.ReviewRound.State).
VOTED_DOWN_STATES = frozenset({"recollected", "exhausted"})


def voted_down_on(response, part: str | None) -> bool:
    """Whether the vote turned down `response`'s `part` (None: the response as a whole). `response`
    has .checks and .round_state (its review round's state, None without one)."""
    checks = response.checks if isinstance(getattr(response, "checks", None), dict) else {}
    parts = checks.get("voted_down_parts") or []
    if parts:
        return part is None or part in parts
    return getattr(response, "round_state", None) in VOTED_DOWN_STATES


def passed_first(accepted_responses: Iterable, part: str | None) -> list:
    """Accepted responses in the order a test set takes their text for `part`: those whose `part`
    passed the vote (or had none) first, earliest first; then the ones voted down on it (accepted by
    a reviewer after all), earliest first."""
    return sorted(accepted_responses, key=lambda r: (voted_down_on(r, part), r.submitted_at, r.id))


def earliest_accepted_rewrites(accepted_responses: Iterable, variants: Sequence[str]) -> dict[str, str]:
    """Variant -> rewrite text, from responses that are all accepted (with .answers, .submitted_at,
    .id, .checks, .round_state), by the module's rule."""
    responses = list(accepted_responses)
    chosen: dict[str, str] = {}
    for variant in variants:
        for response in passed_first(responses, variant):
            answers = response.answers if isinstance(response.answers, dict) else {}
            text = answers.get(variant)
            if isinstance(text, str) and text.strip():
                chosen[variant] = text
                break
    return chosen


def values_heard(slot_values: list, heard: str) -> tuple[list, list]:
    """(kept, dropped): a turn's slot values split by whether they still occur verbatim in an ASR
    text `heard`. The importers anchor every value in its turn's text, so a test set made of ASR
    text keeps only the values the recogniser heard (a reading may say "two" where the value is "2")."""
    kept = [v for v in slot_values if isinstance(v, dict) and str(v.get("value", "")) in heard]
    return kept, [v for v in slot_values if v not in kept]
