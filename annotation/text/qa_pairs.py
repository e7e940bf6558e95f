"""Knowledge question-answer pairs: read from a JSONL file, or taken from a DSTC9 knowledge base.
Pure: no Django import.

Used by the out-of-scope insertion type (the pairs a worker must not ask about) and the question
paraphrase type (the pairs whose questions are paraphrased). A file has one JSON object a line;
blank lines are skipped; a key outside `allowed` is refused, naming the line, so a misspelt key
(`questoin`) does not silently drop data.
"""
import json
from collections.abc import Mapping

MAX_TEXT = 2000
MAX_ABOUT = 200  # an entity's name and its domain


class QaPairsError(ValueError):
    """A QA pairs file or value that cannot be used; the message names the line or pair."""


def read_jsonl(text: str, name: str, *, with_id: bool = False) -> list[dict]:
    """The pairs of a JSONL text ({question, answer}, plus a unique `id` when `with_id`). `name` is
    how the file is called in messages (its upload name, never a server path)."""
    pairs, seen = [], set()
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{name} line {number}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise QaPairsError(f"{where}: not valid JSON ({exc.msg})") from None
        pair = clean_pair(record, where, with_id=with_id)
        if with_id:
            if pair["id"] in seen:
                raise QaPairsError(f'{where}: the id "{pair["id"]}" is used twice; ids must be unique')
            seen.add(pair["id"])
        pairs.append(pair)
    if not pairs:
        raise QaPairsError(f"{name}: no QA pairs; write one JSON object {{\"question\", \"answer\"}} a line")
    return pairs


def clean_pair(record, where: str, *, with_id: bool = False) -> dict:
    """One pair checked and stripped: {question, answer} (+ id, and the optional `about`: what the
    question is about, shown to the worker). QaPairsError names `where`."""
    allowed = {"id", "question", "answer", "about"} if with_id else {"question", "answer"}
    keys = '{"id", "question", "answer"}' if with_id else '{"question", "answer"}'
    if not isinstance(record, Mapping):
        raise QaPairsError(f"{where}: expected an object {keys}")
    unknown = sorted(set(record) - allowed)
    if unknown:
        raise QaPairsError(f"{where}: unknown key(s) {', '.join(unknown)} (allowed: {', '.join(sorted(allowed))})")
    pair = {}
    if with_id:
        pair_id = record.get("id")
        if isinstance(pair_id, bool) or not isinstance(pair_id, (str, int)) or not str(pair_id).strip():
            raise QaPairsError(f'{where}: "id" must be a non-empty text or a whole number')
        pair["id"] = str(pair_id).strip()
    for key in ("question", "answer"):
        value = record.get(key)
        if not isinstance(value, str) or not value.strip():
            raise QaPairsError(f'{where}: "{key}" must be a non-empty text')
        if len(value) > MAX_TEXT:
            raise QaPairsError(f'{where}: "{key}" is longer than {MAX_TEXT} characters')
        pair[key] = value.strip()
    if with_id and record.get("about") is not None:
        about = record["about"]
        if not isinstance(about, str) or len(about) > MAX_ABOUT:
            raise QaPairsError(f'{where}: "about" must be a text of at most {MAX_ABOUT} characters')
        if about.strip():
            pair["about"] = about.strip()
    return pair


def clean_pairs(value, *, limit: int) -> list[dict]:
    """A list of {question, answer} given as a setting (JSON), checked; at most `limit` pairs."""
    if not isinstance(value, list):
        raise QaPairsError('a list of {"question", "answer"} objects')
    if len(value) > limit:
        raise QaPairsError(f"at most {limit} QA pairs ({len(value)} given)")
    return [clean_pair(record, f"pair {index}") for index, record in enumerate(value)]


def from_knowledge(knowledge) -> list[dict]:
    """The FAQ documents of a DSTC9 `knowledge.json` ({domain: {entity_id: {"name", "docs": {doc_id:
    {"title", "body"}}}}}) as pairs: the title is the question, the body the answer. The id is
    "domain/entity_id/doc_id"; `about` names the entity and its domain for showing ("Avalon (hotel)").
    Documents without both texts are skipped."""
    pairs = []
    if not isinstance(knowledge, Mapping):
        return pairs
    for domain, entities in knowledge.items():
        if not isinstance(entities, Mapping):
            continue
        for entity_id, entity in entities.items():
            if not isinstance(entity, Mapping) or not isinstance(entity.get("docs"), Mapping):
                continue
            for doc_id, doc in entity["docs"].items():
                if not isinstance(doc, Mapping):
                    continue
                title, body = doc.get("title"), doc.get("body")
                if isinstance(title, str) and title.strip() and isinstance(body, str) and body.strip():
                    pairs.append({
                        "id": f"{domain}/{entity_id}/{doc_id}",
                        "question": title.strip()[:MAX_TEXT],
                        "answer": body.strip()[:MAX_TEXT],
                        "about": _about(entity.get("name"), domain),
                    })
    return pairs


def _about(name, domain) -> str:
    name = str(name or "").strip()
    return (f"{name} ({domain})" if name else str(domain))[:MAX_ABOUT]
