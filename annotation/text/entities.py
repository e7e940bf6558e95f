"""RADDLE "unseen entities": slot values of user turns replaced by new values from an entity list
before the turns are rewritten. Pure: no Django import.

The entity list is a CSV file with the header `slot,value`, one entity a line. In a dialog, each
distinct (slot, value) of its user turns is replaced by a value drawn from the list's values of that
slot (never the old value itself), by a generator seeded with (seed, dialog, slot, old value): the
same value is replaced the same way in every turn of the dialog, and the same seed gives the same
replacements. Values of slots the list does not name are kept.
"""
import csv
import io
import random
import re
from collections.abc import Iterable, Mapping

from . import text_units

MAX_ENTITIES = 100_000
MAX_VALUE_CHARS = 200


class EntityListError(ValueError):
    """An entity list that cannot be used; the message names the line and what to fix."""


def read_csv(text: str, name: str) -> list[dict]:
    """[{slot, value}] of an entity list's text; `name` is the file's name in messages."""
    rows = csv.reader(io.StringIO(text))
    header = next(rows, None)
    if header is None or [cell.strip().lower() for cell in header] != ["slot", "value"]:
        raise EntityListError(f'{name} line 1: the header must be "slot,value"')
    entities, seen = [], set()
    for number, row in enumerate(rows, start=2):
        if not row or all(not cell.strip() for cell in row):
            continue
        if len(row) != 2:
            raise EntityListError(f"{name} line {number}: expected 2 cells (slot, value), found {len(row)}")
        slot, value = row[0].strip(), row[1].strip()
        if not slot:
            raise EntityListError(f"{name} line {number}: the slot is empty")
        if not value:
            raise EntityListError(f'{name} line {number}: the value of slot "{slot}" is empty')
        if len(value) > MAX_VALUE_CHARS:
            raise EntityListError(f"{name} line {number}: the value is longer than {MAX_VALUE_CHARS} characters")
        if (slot, value) not in seen:
            seen.add((slot, value))
            entities.append({"slot": slot, "value": value})
        if len(entities) > MAX_ENTITIES:
            raise EntityListError(f"{name}: more than {MAX_ENTITIES} entities")
    if not entities:
        raise EntityListError(f"{name}: no entities under the header")
    return entities


def clean_entities(value) -> list[dict]:
    """The `entities` setting checked: a list of {slot, value} with non-empty texts."""
    if not isinstance(value, list):
        raise EntityListError('a list of {"slot", "value"} objects')
    if len(value) > MAX_ENTITIES:
        raise EntityListError(f"at most {MAX_ENTITIES} entities")
    out = []
    for index, entry in enumerate(value):
        if not isinstance(entry, Mapping) or set(entry) != {"slot", "value"}:
            raise EntityListError(f'entity {index}: must be {{"slot", "value"}}')
        slot, val = entry["slot"], entry["value"]
        if not isinstance(slot, str) or not slot.strip() or not isinstance(val, str) or not val.strip():
            raise EntityListError(f"entity {index}: slot and value must be non-empty texts")
        out.append({"slot": slot.strip(), "value": val.strip()})
    return out


def by_slot(entities: Iterable[Mapping]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for entry in entities:
        out.setdefault(entry["slot"], []).append(entry["value"])
    return out


def dialog_mapping(slot_values: Iterable[Mapping], values_by_slot: Mapping[str, list[str]], *, seed: int, dialog_key) -> dict:
    """{(slot, old value): new value} for the slot values of one dialog's user turns."""
    mapping = {}
    for sv in slot_values:
        key = (sv["slot"], sv["value"])
        if key in mapping or sv["slot"] not in values_by_slot:
            continue
        old = text_units.normalize(sv["value"])
        candidates = [v for v in values_by_slot[sv["slot"]] if text_units.normalize(v) != old]
        if candidates:
            rng = random.Random(f"quorum-entities:{seed}:{dialog_key}:{key[0]}:{key[1]}")
            mapping[key] = rng.choice(candidates)
    return mapping


def substitute(text: str, slot_values: list[Mapping], mapping: Mapping) -> tuple[str, list[dict], list[dict]]:
    """(new text, new slot values, [{slot, old, new}]) of one turn. Each old value is replaced where
    it stands in the text (as whole words in scripts written with spaces), all values in one pass
    so that a new value is never replaced again."""
    # One new text per old text: where two slots share a value ("centre" for hotel and restaurant
    # area) the text can only say one thing, and the slot values and changes say the same.
    replace = {sv["value"]: mapping[(sv["slot"], sv["value"])] for sv in slot_values if (sv["slot"], sv["value"]) in mapping}
    changes = [{"slot": sv["slot"], "old": sv["value"], "new": replace[sv["value"]]}
               for sv in slot_values if (sv["slot"], sv["value"]) in mapping]
    new_values = [{"slot": sv["slot"], "value": replace.get(sv["value"], sv["value"])} for sv in slot_values]
    if not replace:
        return text, new_values, []
    unspaced = text_units.is_unspaced(text)
    parts = []
    for old in sorted(replace, key=len, reverse=True):  # longest first: "4 people" before "4"
        body = re.escape(old)
        if not unspaced and old[0].isalnum():
            body = r"(?<!\w)" + body
        if not unspaced and old[-1].isalnum():
            body += r"(?!\w)"
        parts.append(f"({body})")
    pattern = re.compile("|".join(parts))
    olds = sorted(replace, key=len, reverse=True)
    new_text = pattern.sub(lambda m: replace[olds[m.lastindex - 1]], text)
    return new_text, new_values, changes
