"""RADDLE "language variations": rewrite one user turn as paraphrase, typos, verbose, simplified.

PROTOCOLS.md section 1. Every rewrite must keep the turn's slot values exactly; the checks are in
`annotation.rewrite_checks`.
"""
from collections.abc import Mapping

from .. import rewrite_checks
from ..exporters.base import TurnRecord
from ..exporters.selection import earliest_accepted_rewrites
from ..rewrite_checks import VARIANT_LABELS, VARIANTS, Problem
from .base import TaskType, TaskTypeSettingsError, clean_text, register

VARIANT_HELP = {
    "paraphrase": "The same meaning in other words.",
    "typos": "The utterance as it might be typed with mistakes: misspellings, illegitimate abbreviations.",
    "verbose": "The same intent with more words than needed.",
    "simplified": "The same intent with fewer words, concisely.",
}
MAX_REWRITE_CHARS = 2000


class RewriteTaskType(TaskType):
    key = "rewrite"
    source_speaker = "user"
    label = "Rewrite user turns (RADDLE language variations)"
    template = "annotation/tasks/rewrite.html"
    agreement_level = "nominal"  # rewrites are free text: no agreement table (agreement_values is empty)
    supports_voting = True  # CGoDial: other workers vote on whether a rewrite is usable
    exports_test_sets = True
    diffs_against_subject = True  # the review queue shows each variant as a word diff against the source
    settings_help = {
        "variants": (
            list(VARIANTS),
            "Which rewrites each annotator writes, from paraphrase, typos, verbose, simplified (RADDLE asks for all four).",
        ),
        "typo_max_edit_ratio": (
            rewrite_checks.DEFAULT_TYPO_MAX_EDIT_RATIO,
            "Typos may change at most this share of the original's characters (edit distance / length).",
        ),
    }

    def clean_settings(self, settings):
        cleaned = super().clean_settings(settings)
        variants = cleaned["variants"]
        errors = {}
        if not isinstance(variants, list) or not variants or any(v not in VARIANTS for v in variants):
            errors["variants"] = f"choose one or more of {', '.join(VARIANTS)}"
        elif len(set(variants)) != len(variants):
            errors["variants"] = "a variant is listed twice"
        ratio = cleaned["typo_max_edit_ratio"]
        if not isinstance(ratio, (int, float)) or isinstance(ratio, bool) or not 0 < ratio <= 1:
            errors["typo_max_edit_ratio"] = "a number above 0 and at most 1"
        if errors:
            raise TaskTypeSettingsError(errors)
        cleaned["variants"] = [v for v in VARIANTS if v in variants]  # canonical order
        return cleaned

    def build_payload(self, turn) -> dict:
        return {"utterance": turn.text, "slot_values": [sv["value"] for sv in turn.slot_values]}

    def answer_fields(self, settings):
        return [
            {"name": v, "label": VARIANT_LABELS[v], "help": VARIANT_HELP[v]}
            for v in settings.get("variants", VARIANTS)
        ]

    def validate(self, payload: Mapping, settings: Mapping, answers: Mapping) -> tuple[dict, list[Problem]]:
        variants = settings.get("variants", list(VARIANTS))
        cleaned, problems = {}, []
        for variant in variants:
            value, found = clean_text(answers.get(variant, ""), variant, VARIANT_LABELS[variant], MAX_REWRITE_CHARS)
            problems.extend(found)
            if value is not None:
                cleaned[variant] = value
        problems.extend(
            rewrite_checks.check_all(
                payload["utterance"],
                cleaned,
                payload.get("slot_values", []),
                variants=[v for v in variants if v in cleaned],
                typo_max_edit_ratio=settings.get("typo_max_edit_ratio", rewrite_checks.DEFAULT_TYPO_MAX_EDIT_RATIO),
            )
        )
        return cleaned, problems

    def test_set_names(self, settings):
        variants = settings.get("variants", list(VARIANTS))
        return list(variants) if isinstance(variants, list) else []

    def test_set_turns(self, turn, payload, accepted_responses, settings):
        """Per variant, the earliest accepted rewrite in place of the source turn."""
        rewrites = earliest_accepted_rewrites(accepted_responses, self.test_set_names(settings))
        return {v: [TurnRecord(turn.index, turn.speaker, text, turn.slot_values, turn.raw)] for v, text in rewrites.items()}

    def vote_parts(self, settings):
        """Each variant is its own utterance of the test sets, so voters judge each one (CGoDial)."""
        return [{"name": v, "label": VARIANT_LABELS[v]} for v in settings.get("variants", VARIANTS)]

    def combine(self, answer_rows, settings):
        """The counted rewrites of an item, per variant, earliest first (the test set takes the first)."""
        variants = settings.get("variants", list(VARIANTS))
        out = {v: [row[v] for row in answer_rows if row.get(v)] for v in variants}
        out["responses"] = len(answer_rows)
        return out


register(RewriteTaskType())
