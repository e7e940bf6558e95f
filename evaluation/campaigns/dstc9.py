"""Checks for the DSTC9 Track 1 files (formats/README.md), pure: no Django.

Every problem is a `FormatProblem` that names the file and, where it applies, the instance index,
so the person importing knows exactly what to fix. Nothing here writes anything.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from annotation.importers.base import FormatError, check_json_value

HUMAN_EVAL_SUFFIX = ".human_eval.json"
SCORE_SUFFIX = ".score.json"


class FormatProblem(ValueError):
    def __init__(self, path, message, index=None):
        where = f"{path}" + (f", instance {index}" if index is not None else "")
        super().__init__(f"{where}: {message}")
        self.path, self.index = str(path), index


def _refuse_constant(name):
    raise ValueError(f"{name} is not a JSON number")


def load_json(path):
    """The file's JSON value, refused (FormatProblem) where it is not JSON Quorum can store: NaN
    or Infinity, nesting too deep, an integer beyond Python's digit limit, a string holding a NUL
    or a lone surrogate (the same rules as corpus imports, annotation.importers.base)."""
    path = Path(path)
    if not path.is_file():
        raise FormatProblem(path, "file not found")
    try:
        with path.open(encoding="utf-8-sig") as handle:
            value = json.load(handle, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        raise FormatProblem(path, f"not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from exc
    except UnicodeDecodeError as exc:
        raise FormatProblem(path, "not UTF-8 text") from exc
    except RecursionError:
        raise FormatProblem(path, "not valid JSON here (a value is nested too deeply)") from None
    except ValueError as exc:  # a NaN/Infinity, or int() refused a number with too many digits
        reason = str(exc) if "JSON number" in str(exc) else f"an integer with more than {sys.get_int_max_str_digits():,} digits"
        raise FormatProblem(path, f"not valid JSON here ({reason})") from None
    try:
        check_json_value(value, "")
    except FormatError as exc:
        raise FormatProblem(path, str(exc).removeprefix(": ")) from None
    return value


def check_knowledge(knowledge, path="knowledge.json"):
    if not isinstance(knowledge, dict):
        raise FormatProblem(path, "expected an object {domain: {entity_id: {name, docs}}}")
    for domain, entities in knowledge.items():
        if not isinstance(entities, dict):
            raise FormatProblem(path, f"domain {domain!r} must map entity ids to entities")
        for entity_id, entity in entities.items():
            # DSTC9/10 entities carry {name, docs: {doc_id: {title, body}}}; DSTC11 Track 5 adds
            # reviews and may have no 'docs' at all: accepted, with no doc ids to refer to.
            if not isinstance(entity, dict) or not isinstance(entity.get("docs", {}), dict):
                raise FormatProblem(path, f"entity {domain}/{entity_id} must be an object whose 'docs', if present, is an object")
    return knowledge


def check_logs(logs, path="logs.json", expected_length=None):
    """logs.json: a list of instances, each a non-empty list of {speaker: "U"|"S", text}."""
    if not isinstance(logs, list):
        raise FormatProblem(path, "expected a list with one conversation per instance")
    if expected_length is not None and len(logs) != expected_length:
        raise FormatProblem(path, f"has {len(logs)} instances but labels.json has {expected_length}; the lists must be aligned")
    for index, turns in enumerate(logs):
        if not isinstance(turns, list) or not turns:
            raise FormatProblem(path, "expected a non-empty list of {speaker, text}", index)
        for turn in turns:
            if not isinstance(turn, dict) or turn.get("speaker") not in ("U", "S") or not isinstance(turn.get("text"), str):
                raise FormatProblem(path, 'every turn must be {"speaker": "U" | "S", "text": "..."}', index)
    return logs


def _is_id(value) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _knowledge_ref_exists(knowledge, ref):
    entity = knowledge.get(ref.get("domain"), {}).get(str(ref.get("entity_id")))
    if entity is None:
        return False
    if "docs" not in entity:  # DSTC11 layout (faqs, reviews): the entity is what can be checked
        return True
    return str(ref.get("doc_id")) in entity["docs"]


def check_outputs(items, path, expected_length=None, knowledge=None, require_response=True):
    """A labels.json or an entry's output: a list of {target: bool, knowledge?, response?}."""
    if not isinstance(items, list):
        raise FormatProblem(path, "expected a list with one object per instance")
    if expected_length is not None and len(items) != expected_length:
        raise FormatProblem(path, f"has {len(items)} instances but the test set has {expected_length}; the lists must be aligned")
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise FormatProblem(path, "expected an object {target: true|false, ...}", index)
        if not isinstance(item.get("target"), bool):
            raise FormatProblem(path, "'target' must be true or false", index)
        if not item["target"]:
            continue
        _check_knowledge_refs(item.get("knowledge", []), path, index, knowledge)
        if require_response and not isinstance(item.get("response"), str):
            raise FormatProblem(path, "a knowledge-seeking instance needs a 'response' string", index)
    return items


def _check_knowledge_refs(refs, path, index: int, knowledge) -> None:
    """An instance's 'knowledge': a list of {domain, entity_id, doc_id}, each in knowledge.json when given."""
    if not isinstance(refs, list) or not all(isinstance(r, dict) and {"domain", "entity_id", "doc_id"} <= set(r) for r in refs):
        raise FormatProblem(path, "'knowledge' must be a list of {domain, entity_id, doc_id}", index)
    for ref in refs:
        # Looked up in knowledge.json by these: a list or object there could never match (and
        # is not hashable), a boolean only pretends to be a number.
        if not isinstance(ref["domain"], str) or not all(_is_id(ref[key]) for key in ("entity_id", "doc_id")):
            raise FormatProblem(path, "a 'knowledge' reference needs a string 'domain' and string or whole-number 'entity_id' and 'doc_id'", index)
    if knowledge is not None:
        for ref in refs:
            if not _knowledge_ref_exists(knowledge, ref):
                raise FormatProblem(path, f"knowledge {ref['domain']}/{ref['entity_id']}/{ref['doc_id']} is not in knowledge.json", index)


def check_human_eval(items, path, labels, outputs, questions):
    """A `<entry>.human_eval.json`: aligned with labels, null or {question: [1-5, ...]}.

    Only instances that are knowledge-seeking in the ground truth and detected by the entry may be
    rated (Eq. 1 counts only those); `outputs` None means the entry's own detection is unknown.
    Returns a list of (instance, question, position, value).
    """
    if not isinstance(items, list):
        raise FormatProblem(path, "expected a list aligned with labels.json (null or {question: [ratings]})")
    if len(items) != len(labels):
        raise FormatProblem(path, f"has {len(items)} instances but the test set has {len(labels)}; the lists must be aligned")
    rows = []
    for index, item in enumerate(items):
        if item is None:
            continue
        if not isinstance(item, dict) or not item:
            raise FormatProblem(path, "expected null or an object {question: [ratings]}", index)
        unknown = set(item) - set(questions)
        if unknown:
            raise FormatProblem(path, f"unknown question(s) {', '.join(sorted(unknown))}; the campaign rates {', '.join(questions)}", index)
        if not labels[index].get("target"):
            raise FormatProblem(path, "rated, but the instance is not knowledge-seeking in labels.json", index)
        if outputs is not None and not outputs[index].get("target"):
            raise FormatProblem(path, "rated, but the entry did not detect this instance as knowledge-seeking", index)
        for question, values in item.items():
            rows.extend((index, question, position, value) for position, value in _ratings(values, question, path, index))
    return rows


def _ratings(values, question: str, path, index: int) -> list[tuple[int, int]]:
    """(position, rating) of one question's ratings of one instance: whole numbers from 1 to 5."""
    if not isinstance(values, list) or not values:
        raise FormatProblem(path, f"{question!r} must be a non-empty list of ratings", index)
    ratings = []
    for position, value in enumerate(values, start=1):
        # DSTC10 Track 2 and DSTC11 Track 5 store ratings as floats (3.0): a whole number is a rating.
        whole = isinstance(value, float) and value.is_integer()
        if isinstance(value, bool) or not (isinstance(value, int) or whole) or not 1 <= value <= 5:
            raise FormatProblem(path, f"{question!r} rating {value!r} (rating {position}) is not a whole number from 1 to 5", index)
        ratings.append((position, int(value)))
    return ratings


def find_human_evals(directory):
    """Pairs (team_id, entry_id, entry_json_path or None, human_eval_path) under `directory`,
    laid out as <team>/<entry>.json + <team>/<entry>.human_eval.json. Sorted for reproducibility."""
    directory = Path(directory)
    if not directory.is_dir():
        raise FormatProblem(directory, "directory not found")
    found = []
    for human_eval in sorted(directory.glob(f"*/*{HUMAN_EVAL_SUFFIX}")):
        entry_id = human_eval.name[: -len(HUMAN_EVAL_SUFFIX)]
        entry_json = human_eval.with_name(f"{entry_id}.json")
        found.append((human_eval.parent.name, entry_id, entry_json if entry_json.is_file() else None, human_eval))
    if not found:
        raise FormatProblem(directory, f"no <team>/<entry>{HUMAN_EVAL_SUFFIX} files found")
    return found


def find_entries(directory):
    """(team_id, entry_id, path) for every <team>/<entry>.json that is a system output."""
    directory = Path(directory)
    if not directory.is_dir():
        raise FormatProblem(directory, "directory not found")
    return [
        (path.parent.name, path.name[: -len(".json")], path)
        for path in sorted(directory.glob("*/*.json"))
        if not path.name.endswith((HUMAN_EVAL_SUFFIX, SCORE_SUFFIX))
    ]
