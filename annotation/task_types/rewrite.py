"""RADDLE "language variations": rewrite one user turn as paraphrase, typos, verbose, simplified.

PROTOCOLS.md section 1. Every rewrite must keep the turn's slot values exactly; the checks are in
`annotation.text.rewrite_checks`.

Unseen entities (RADDLE, PROTOCOLS.md 6c): with an entity list (`entities`, from a CSV file of
slot,value), each user turn's slot values are replaced by new values before it becomes an item
(`annotation.text.entities`: the same value the same way in every turn of a dialog, drawn by `entity_seed`).
The payload then holds the new text and values (the checks ask for the new values verbatim) and
`entities`, the turn's replacements [{slot, old, new}], and `dialog_entities`, the whole dialog's, so
the page can say how the earlier turns read now. The test sets carry the new text where a turn had
no accepted rewrite, and the manifest the replacements.
"""
import itertools
import json
from collections.abc import Mapping
from dataclasses import dataclass

from ..exporters.base import TurnRecord
from ..exporters.readme import DIALOGS_RULE, TestSetWords, earliest_rule
from ..exporters.selection import earliest_accepted_rewrites
from ..text import entities as entity_lists
from ..text import rewrite_checks
from ..text.rewrite_checks import VARIANT_LABELS, VARIANTS, Problem
from .base import TaskType, TaskTypeSettingsError, clean_text
from .capabilities import DiffsAgainstSubject, ExportsTestSets, FromCorpusTurns, SettingFiles, Votable
from .registration import register

#: What the length checks count (`text_units.length`), said where a worker reads "more" or "fewer".
COUNTED = (
    "words, or where the original is mostly in a script written without spaces (Chinese, Japanese, Thai) "
    "characters, punctuation and spaces not counted"
)
VARIANT_HELP = {
    "paraphrase": "The same meaning in other words.",
    "typos": "The utterance as it might be typed with mistakes: misspellings, illegitimate abbreviations; in Chinese, "
    "wrong characters of the same sound (错别字).",
    "verbose": f"The same intent with more than the original has, counting {COUNTED}.",
    "simplified": f"The same intent, concisely, with fewer than the original has, counting {COUNTED}.",
}
MAX_REWRITE_CHARS = 2000


@dataclass(frozen=True)
class ReplacedTurn:
    """A user turn with its slot values replaced, for `jobs.save_job` (`id` is the item's turn)."""

    id: int
    text: str
    slot_values: list
    source_text: str
    entities: list
    dialog_entities: list


def _variants_problem(variants) -> str | None:
    """What is wrong with a list of variants, naming the entries that are not variants."""
    if not isinstance(variants, list) or not variants:
        return f"choose one or more of {', '.join(VARIANTS)}"
    unknown = [json.dumps(v, ensure_ascii=False) for v in variants if v not in VARIANTS]
    if unknown:
        named = unknown[0] if len(unknown) == 1 else f"{', '.join(unknown[:-1])} and {unknown[-1]}"
        return f"{named} {'is not a variant' if len(unknown) == 1 else 'are not variants'}; choose from {', '.join(VARIANTS)}"
    if len(set(variants)) != len(variants):
        return "a variant is listed twice"
    return None


class RewriteTaskType(TaskType, FromCorpusTurns, Votable, ExportsTestSets, SettingFiles, DiffsAgainstSubject):
    key = "rewrite"
    source_speaker = "user"
    label = "Rewrite user turns (RADDLE language variations)"
    template = "annotation/tasks/rewrite.html"
    agreement_level = "nominal"  # rewrites are free text: no agreement table (agreement_values is empty)
    settings_help = {
        "variants": (
            list(VARIANTS),
            "Which rewrites each annotator writes, from paraphrase, typos, verbose, simplified (RADDLE asks for all four).",
        ),
        "typo_max_edit_ratio": (
            rewrite_checks.DEFAULT_TYPO_MAX_EDIT_RATIO,
            "Typos may change at most this share of the original's characters (edit distance / length).",
        ),
        "entities": (
            [],
            "Unseen entities (RADDLE): a list of entities, each a slot and a value; each slot value of a user turn whose slot is "
            "listed is replaced by another value of that slot before rewriting, and rewrites must keep the new "
            "values. Empty: the turns as they are.",
        ),
        "entity_seed": (0, "Seed of the replacements: the same corpus, list and seed give the same new values."),
    }
    setting_files = {"entities": "Entity list: a CSV file with the header slot,value, one entity a line."}

    def clean_settings(self, settings):
        cleaned = super().clean_settings(settings)
        variants = cleaned["variants"]
        errors = {}
        problem = _variants_problem(variants)
        if problem:
            errors["variants"] = problem
        ratio = cleaned["typo_max_edit_ratio"]
        if not isinstance(ratio, (int, float)) or isinstance(ratio, bool) or not 0 < ratio <= 1:
            errors["typo_max_edit_ratio"] = "a number above 0 and at most 1"
        try:
            cleaned["entities"] = entity_lists.clean_entities(cleaned["entities"])
        except entity_lists.EntityListError as exc:
            errors["entities"] = str(exc)
        seed = cleaned["entity_seed"]
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**31:
            errors["entity_seed"] = "a whole number from 0 to 2147483647"
        if errors:
            raise TaskTypeSettingsError(errors)
        cleaned["variants"] = [v for v in VARIANTS if v in variants]  # canonical order
        return cleaned

    def read_setting_file(self, setting, text, name):
        if setting != "entities":
            return super().read_setting_file(setting, text, name)
        try:
            return entity_lists.read_csv(text, name)
        except entity_lists.EntityListError as exc:
            raise TaskTypeSettingsError({setting: str(exc)}) from None

    def source_turns(self, turns, settings):
        if not settings.get("entities"):
            return list(turns)
        values = entity_lists.by_slot(settings["entities"])
        seed = settings.get("entity_seed", 0)
        out, seen_slots = [], set()
        for _dialog, rows in itertools.groupby(turns, key=lambda row: row.dialog_id):
            rows = list(rows)
            every = [sv for row in rows for sv in row.slot_values]
            seen_slots.update(sv["slot"] for sv in every)
            # Drawn by the dialog's id in its corpus file, not its row: the same corpus imported again
            # (or elsewhere) with the same list and seed gets the same new values.
            mapping = entity_lists.dialog_mapping(every, values, seed=seed, dialog_key=rows[0].dialog_external_id)
            dialog_entities = [{"slot": slot, "old": old, "new": new} for (slot, old), new in mapping.items()]
            for row in rows:
                text, slot_values, changes = entity_lists.substitute(row.text, row.slot_values, mapping)
                out.append(ReplacedTurn(row.id, text, slot_values, row.text, changes, dialog_entities))
        unknown = sorted(set(values) - seen_slots)
        if unknown:
            known = ", ".join(sorted(seen_slots)) or "none"
            raise TaskTypeSettingsError({"entities": (
                f"the entity list names slot(s) {', '.join(unknown)} that no selected user turn has (slots there: {known})"
            )})
        return out

    def build_payload(self, turn) -> dict:
        payload = {"utterance": turn.text, "slot_values": [sv["value"] for sv in turn.slot_values]}
        if isinstance(turn, ReplacedTurn):
            payload.update(source_utterance=turn.source_text, entities=turn.entities, dialog_entities=turn.dialog_entities)
        return payload

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
        """Per variant, the earliest accepted rewrite in place of the source turn; with unseen
        entities, the turn with its new values where no rewrite was accepted, and the new values as
        the turn's slot values. Each record names the source text (and the values renamed), so a
        format with positions (MultiWOZ `span_info`) can place the values in the new text."""
        variants = self.test_set_names(settings)
        rewrites = earliest_accepted_rewrites(accepted_responses, variants)
        slot_values = turn.slot_values
        renamed: dict[str, str] = {}
        if "entities" in payload:
            new = {(c["slot"], c["old"]): c["new"] for c in payload["entities"]}
            slot_values = [{**sv, "value": new.get((sv["slot"], sv["value"]), sv["value"])} for sv in turn.slot_values]
            renamed = {c["old"]: c["new"] for c in payload["entities"]}
            if payload["entities"]:
                rewrites = {v: rewrites.get(v, payload["utterance"]) for v in variants}
        return {
            v: [TurnRecord(turn.index, turn.speaker, text, slot_values, turn.raw, source_text=turn.text, renamed=renamed)]
            for v, text in rewrites.items()
        }

    def test_set_words(self, settings):
        return TestSetWords(
            sets="One directory per rewrite variant. Each is the source corpus in its own format with every user turn that "
            "has an accepted rewrite replaced by that rewrite; everything else is as imported.",
            slot_values="A changed turn keeps the source turn's slot values (with unseen entities, the new ones), which were "
            "required verbatim in every rewrite.",
            format_words={"multiwoz": (
                "A changed turn's `span_info` gives each value's place in the new text, counted as the corpus counted it "
                "(words, as in MultiWOZ 2.1, or characters where the corpus is written without spaces; `end` inclusive unless "
                "the corpus's was not); a span whose value the new text does not hold (a rewrite a reviewer accepted after "
                "all) is left out rather than given a wrong place, and with unseen entities a span names the new value. "
                "`dialog_act` is as imported (it has no positions)."
            )},
            selection=[DIALOGS_RULE, earliest_rule("rewrite"), "Turns of the job without an accepted rewrite keep their original text."],
            counts=("variant", "turns replaced", "turns without an accepted rewrite"),
        )

    def manifest_of(self, payload):
        """The replacements of an unseen-entities item: {"entities": [{slot, old, new}]}."""
        return {"entities": payload["entities"]} if payload.get("entities") else {}

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
