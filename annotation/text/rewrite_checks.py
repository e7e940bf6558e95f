"""Automatic checks of a RADDLE-style rewrite. Pure: no Django import.

Each check returns Problems that tell the annotator what to fix. The same code serves the live
feedback while typing (through the check endpoint) and the server's final verdict.
"""

from rapidfuzz.distance import Levenshtein  # a maintained C implementation; no need for our own

from . import text_units
from .problems import Problem

VARIANTS = ("paraphrase", "typos", "verbose", "simplified")
VARIANT_LABELS = {
    "paraphrase": "Paraphrase",
    "typos": "Typos",
    "verbose": "Verbose",
    "simplified": "Simplified",
}
DEFAULT_TYPO_MAX_EDIT_RATIO = 0.3


def check_rewrite(
    variant: str,
    source: str,
    rewrite: str,
    slot_values: list[str],
    typo_max_edit_ratio: float = DEFAULT_TYPO_MAX_EDIT_RATIO,
) -> list[Problem]:
    """All problems of one rewrite of `source` for `variant`; an empty list means it passes."""
    label = VARIANT_LABELS.get(variant, variant)
    if not rewrite or not rewrite.strip():
        return [Problem(variant, "required", f"{label}: write a rewrite of the user's utterance.")]

    unspaced = text_units.is_unspaced(source)
    problems = []
    for value in slot_values:
        if not text_units.contains_value(rewrite, value, unspaced):
            problems.append(
                Problem(variant, "slot_value_missing", f'{label}: keep the slot value "{value}" exactly as written.')
            )
    # Case, spacing and punctuation alone do not make a rewrite ("hi , i'm after" is the source).
    if text_units.comparable(rewrite) == text_units.comparable(source):
        # Say what is true: a worker who fixed the spacing did edit, and "the same" would read as a bug.
        if rewrite.strip() == source.strip():
            message = f"{label}: the rewrite is the same as the original; change its wording."
        else:
            message = f"{label}: the rewrite differs from the original only in case, spacing or punctuation; change the wording."
        problems.append(Problem(variant, "unchanged", message))
        return problems

    src_len, new_len = text_units.length(source, unspaced), text_units.length(rewrite, unspaced)
    if variant == "verbose" and new_len <= src_len:
        problems.append(
            Problem(
                variant,
                "not_longer",
                f"{label}: use more {text_units.unit_name(unspaced, 2)} than the original "
                f"({new_len} now, the original has {src_len}).",
            )
        )
    if variant == "simplified" and new_len >= src_len:
        problems.append(
            Problem(
                variant,
                "not_shorter",
                f"{label}: use fewer {text_units.unit_name(unspaced, 2)} than the original "
                f"({new_len} now, the original has {src_len}).",
            )
        )
    if variant == "typos":
        limit = max(2, round(typo_max_edit_ratio * len(source)))
        distance = Levenshtein.distance(text_units.normalize(source), text_units.normalize(rewrite))
        if distance > limit:
            problems.append(
                Problem(
                    variant,
                    "too_different",
                    f"{label}: keep the original wording and only add typing mistakes "
                    f"({distance} characters changed, at most {limit}).",
                )
            )
    return problems


def check_all(
    source: str,
    answers: dict[str, str],
    slot_values: list[str],
    variants=VARIANTS,
    typo_max_edit_ratio: float = DEFAULT_TYPO_MAX_EDIT_RATIO,
) -> list[Problem]:
    problems = []
    for variant in variants:
        problems.extend(check_rewrite(variant, source, answers.get(variant, ""), slot_values, typo_max_edit_ratio))
    return problems
