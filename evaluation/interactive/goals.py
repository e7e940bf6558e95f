"""User goals and success with grounding (PROTOCOLS.md section 3). Pure: no Django.

A goal has MultiWOZ's shape: {domain: {"info": {slot: value}, "reqt": [...], "book": {...}},
"message": [...]}. Workers cannot see the database, so DSTC9 Track 2 reports success twice: as the
worker judged it, and with grounding — the entity the system offered in each of the goal's domains
is a record of the database that satisfies the goal's constraints.
"""
import io
import re
from collections.abc import Mapping

from quorum import strict_json
from quorum.archives import ArchiveError, copy_member, open_archive, unpacking_plan

NOT_DOMAINS = {"message", "topic"}
ANY = {"dontcare", "any", "don't care", ""}
#: Offered keys that are about the booking, not the entity (not looked up in the database).
BOOKING_KEYS = {"domain", "people", "reference", "ref", "day", "time", "stay"}


class GoalError(ValueError):
    """A goals file Quorum cannot read; the message names the dialog or line."""


#: What a goals file may be, as the upload form and the errors say it.
GOALS_FILE_KINDS = "a MultiWOZ data.json, a JSONL of {\"id\", \"goal\"} lines, or a .zip holding one such file"
#: The most a zipped goals file may hold once unpacked (MultiWOZ 2.1's whole data.json is about 90 MB).
MAX_UNZIPPED_BYTES = 200 * 1024 * 1024
_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")


def _unzipped(raw: bytes) -> bytes:
    """The one .json/.jsonl file of a zipped goals file (as MultiWOZ ships), read safely."""
    try:
        archive, members = open_archive(io.BytesIO(raw), "the goals file")
        plan = [(parts, m) for parts, m in unpacking_plan(members) if not m.is_dir() and parts[0] != "__MACOSX"]
        files = [(parts, m) for parts, m in plan if parts[-1].lower().endswith((".json", ".jsonl"))]
        if len(files) != 1:
            names = ", ".join("/".join(parts) for parts, _m in plan[:5]) or "nothing"
            raise GoalError(f"the .zip must hold exactly one .json or .jsonl goals file; it holds {names}")
        member = files[0][1]
        if member.file_size > MAX_UNZIPPED_BYTES:
            raise GoalError(f"{member.filename} is {member.file_size:,} bytes unpacked; at most {MAX_UNZIPPED_BYTES:,}")
        out = io.BytesIO()
        copy_member(archive, member, out)
    except ArchiveError as exc:
        raise GoalError(f"the goals .zip cannot be read: {exc}") from None
    return out.getvalue()


def constraints(goal: Mapping) -> dict:
    """{domain: {slot: value}} of the goal's informable constraints ('dontcare' left out)."""
    out = {}
    for domain, spec in goal.items():
        if domain in NOT_DOMAINS or not isinstance(spec, Mapping) or not spec:
            continue
        info = spec.get("info") or {}
        if not isinstance(info, Mapping):  # refused on upload (`shape_problem`); never a crash on a page
            continue
        out[domain] = {str(k).lower(): str(v).lower() for k, v in info.items() if str(v).lower() not in ANY}
    return out


def shape_problem(goal: Mapping) -> str | None:
    """What is wrong with the shape of a goal's domains, or None: a domain's `info` and `book` are
    objects and its `reqt` a list, when given (found by tests/test_fuzz_hardening.py: a 500 before)."""
    for domain, spec in goal.items():
        if domain in NOT_DOMAINS or not isinstance(spec, Mapping):
            continue
        for key, kind, name in (("info", Mapping, "an object"), ("book", Mapping, "an object"), ("reqt", list, "a list")):
            if spec.get(key) not in (None, "") and not isinstance(spec[key], kind):
                return f"the {str(domain)[:50]!r} goal's {key!r} must be {name}"
    return None


def goal_text(goal: Mapping) -> list[str]:
    """The goal as sentences for the worker: MultiWOZ's `message` (its HTML spans removed), else
    sentences made from the constraints, requests and booking."""
    message = goal.get("message")
    if isinstance(message, str):
        message = [message]
    if isinstance(message, list) and message:
        return [re.sub(r"<[^>]+>", "", str(line)).strip() for line in message if str(line).strip()]
    lines = []
    for domain, spec in goal.items():
        if domain in NOT_DOMAINS or not isinstance(spec, Mapping) or not spec:
            continue
        info = " ".join(_phrase(INFO_PHRASES, k, v) for k, v in (spec.get("info") or {}).items())
        lines.append(f"You are looking for a {domain}" + (f" {info}." if info else "."))
        if spec.get("reqt"):
            lines.append(f"Ask for its {', '.join(map(str, spec['reqt']))}.")
        if spec.get("book"):
            book = " ".join(_phrase(BOOK_PHRASES, k, v) for k, v in spec["book"].items() if k not in ("invalid", "pre_invalid"))
            lines.append(f"Book it {book}.")
    return lines


#: How a MultiWOZ constraint reads in a sentence ("serving chinese food", "in the centre"); others
#: read "with <slot> <value>".
INFO_PHRASES = {
    "food": "serving {} food", "area": "in the {}", "pricerange": "in the {} price range", "name": "called {}",
    "stars": "with {} stars", "type": "of type {}", "departure": "from {}", "destination": "to {}",
    "leaveAt": "leaving after {}", "arriveBy": "arriving by {}", "day": "on {}",
}
BOOK_PHRASES = {"people": "for {} people", "day": "on {}", "time": "at {}", "stay": "for {} nights"}


def _phrase(phrases: Mapping, slot: str, value) -> str:
    if slot in ("people", "stay") and str(value) == "1":
        return "for 1 person" if slot == "people" else "for 1 night"
    if slot in ("parking", "internet"):
        what = "free parking" if slot == "parking" else "free wifi"
        return f"with {what}" if str(value).lower() in ("yes", "free") else f"without {what}"
    return phrases.get(slot, "with " + slot + " {}").format(value)


def _is_goal(goal) -> bool:
    return isinstance(goal, Mapping) and bool(constraints(goal)) or isinstance(goal, Mapping) and bool(goal.get("message"))


def _text(raw: bytes | str) -> str:
    if isinstance(raw, bytes) and raw.startswith(_ZIP_MAGIC):
        raw = _unzipped(raw)
    try:
        return raw.decode("utf-8-sig") if isinstance(raw, bytes) else raw
    except UnicodeDecodeError as exc:
        raise GoalError(f"the goals file is not UTF-8 text (byte {exc.start}); it must be {GOALS_FILE_KINDS}") from None


def parse_goals(raw: bytes) -> list[tuple[str, dict]]:
    """[(key, goal)] from a MultiWOZ data.json (a dict of dialog id -> {goal, log}) or a JSONL of
    {"id": str, "goal": {...}}, either of them possibly zipped alone. All or nothing: a bad dialog or line is named in the error."""
    stripped = _text(raw).strip()
    if not stripped:
        raise GoalError("the goals file is empty")
    try:
        whole = strict_json.loads(stripped)
    except ValueError:
        whole = None
    is_data_json = isinstance(whole, Mapping) and "id" not in whole  # MultiWOZ data.json, else JSONL
    goals = _goals_of_data_json(whole) if is_data_json else _goals_of_lines(stripped)
    keys = [key for key, _ in goals]
    duplicates = sorted({key for key in keys if keys.count(key) > 1})
    if duplicates:
        raise GoalError(f"goal id(s) given twice: {', '.join(duplicates[:5])}")
    return goals


def _goals_of_data_json(whole: Mapping) -> list[tuple[str, dict]]:
    goals = []
    for dialog_id, dialog in whole.items():
        goal = dialog.get("goal") if isinstance(dialog, Mapping) else None
        if isinstance(goal, Mapping) and shape_problem(goal):
            raise GoalError(f"dialog {str(dialog_id)[:100]}: {shape_problem(goal)}")
        if not isinstance(goal, Mapping) or not _is_goal(goal):
            raise GoalError(f"dialog {dialog_id}: no 'goal' with a domain's 'info' or a 'message'")
        goals.append((str(dialog_id), dict(goal)))
    return goals


def _goals_of_lines(text: str) -> list[tuple[str, dict]]:
    goals = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = strict_json.loads(line)
        except ValueError as exc:
            raise GoalError(f"line {number}: {exc}") from None
        unknown = sorted(set(row) - {"id", "goal"}) if isinstance(row, Mapping) else []
        if unknown:
            raise GoalError(f"line {number}: unknown key(s) {', '.join(map(repr, unknown))}; a line has \"id\" and \"goal\" only")
        goal = row.get("goal") if isinstance(row, Mapping) else None
        if isinstance(goal, Mapping) and shape_problem(goal):
            raise GoalError(f"line {number}: {shape_problem(goal)}")
        if not isinstance(row, Mapping) or not isinstance(row.get("id"), (str, int)) or not _is_goal(goal):
            raise GoalError(f"line {number}: expected {{\"id\": ..., \"goal\": {{domain: {{info: ...}}}}}}")
        goals.append((str(row["id"]), dict(row["goal"])))
    return goals


def parse_database(domain: str, raw: bytes) -> list[dict]:
    """A MultiWOZ-style db file (a JSON list of records) for one domain."""
    try:
        records = strict_json.loads(raw)  # NaN, NUL, deep nesting: refused, not stored (issue 25)
    except ValueError as exc:
        raise GoalError(f"database {domain}: {exc}; it must be one JSON list of records (a MultiWOZ db file), not JSONL") from None
    if not isinstance(records, list) or not all(isinstance(r, Mapping) for r in records):
        raise GoalError(f"database {domain}: expected a JSON list of records")
    return [dict(r) for r in records]


def _norm(value) -> str:
    return str(value).strip().lower()


def last_offers(offers: list[Mapping], domains: list[str]) -> dict:
    """{domain: the last offer in it}; an offer without 'domain' counts for a single-domain goal."""
    out = {}
    for offer in offers:
        domain = offer.get("domain") or (domains[0] if len(domains) == 1 else None)
        if domain:
            out[domain] = offer
    return out


def grounded_success(goal: Mapping, offers: list[Mapping], database: Mapping) -> bool:
    """Whether, in every domain of the goal with constraints, the last offered entity is a record
    of that domain's database (every offered entity slot the record has, equal) that satisfies the
    goal's constraints. No constraints or no offer in a domain: not grounded."""
    wanted = constraints(goal)
    if not wanted:
        return False
    offered = last_offers(offers, list(wanted))
    for domain, needed in wanted.items():
        offer = offered.get(domain)
        if not offer:
            return False
        entity = {_norm(k): _norm(v) for k, v in offer.items() if _norm(k) not in BOOKING_KEYS}
        if not entity:
            return False
        records = [{_norm(k): _norm(v) for k, v in r.items()} for r in database.get(domain, [])]
        if not any(
            all(r.get(k) == v for k, v in entity.items() if k in r) and any(k in r for k in entity)
            and all(r.get(k) == v for k, v in needed.items())
            for r in records
        ):
            return False
    return True
