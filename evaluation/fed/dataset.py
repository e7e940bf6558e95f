"""The static context/response sets of a FED questionnaire (DSTC9 Track 3 static evaluation: the
same contexts for every system). Pure: no Django. The format is documented in docs/formats.md:

    {"context_id": "c1", "context": [{"speaker": "user", "text": "Hi!"}, ...],
     "responses": {"system-a": "Hello!", "system-b": "Hey, how are you?"}}

one JSON object per line; every line has a response from the same systems.
"""
import json

KEYS = {"context_id", "context", "responses"}
SPEAKERS = ("user", "system")
MAX_LINES = 10_000
MAX_TEXT = 5000


class StaticSetError(ValueError):
    """A line that cannot be read; str() names the line and what to fix."""


def parse(raw: bytes) -> list[dict]:
    """[{context_id, context: [{speaker, text}], responses: {system: text}}], or StaticSetError
    naming the first bad line. Blank lines are skipped."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise StaticSetError("the file is not UTF-8 text") from None
    rows: list[dict] = []
    seen: dict[str, int] = {}
    systems: set[str] | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"line {number}"
        if len(rows) >= MAX_LINES:
            raise StaticSetError(f"{where}: more than {MAX_LINES} contexts; split the file")
        row = _object_of(line, where)
        context_id = _context_id(row["context_id"], where, seen)
        seen[context_id] = number
        context = _context(row["context"], where)
        responses = _responses(row["responses"], where)
        if systems is None:
            systems = set(responses)
        elif set(responses) != systems:
            diff = sorted(systems ^ set(responses))
            raise StaticSetError(
                f"{where}: every context needs a response from the same systems (DSTC9 Track 3 static); this line differs in {', '.join(map(repr, diff))}"
            )
        rows.append({
            "context_id": context_id.strip(),
            "context": [{"speaker": t["speaker"], "text": t["text"].strip()[:MAX_TEXT]} for t in context],
            "responses": {name.strip(): text.strip()[:MAX_TEXT] for name, text in sorted(responses.items())},
        })
    if not rows:
        raise StaticSetError("the file has no contexts")
    return rows


def _object_of(line: str, where: str) -> dict:
    """The line as a JSON object with exactly the fields KEYS."""
    try:
        row = json.loads(line, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:
        raise StaticSetError(f"{where}: not a JSON object ({str(exc)[:80]})") from None
    if not isinstance(row, dict):
        raise StaticSetError(f"{where}: must be an object {{context_id, context, responses}}")
    unknown = set(row) - KEYS
    if unknown:
        raise StaticSetError(f"{where}: unknown field(s) {', '.join(sorted(map(repr, unknown)))}; the fields are context_id, context, responses")
    missing = KEYS - set(row)
    if missing:
        raise StaticSetError(f"{where}: missing {', '.join(sorted(missing))}")
    return row


def _context_id(context_id: object, where: str, seen: dict[str, int]) -> str:
    if not isinstance(context_id, str) or not context_id.strip() or len(context_id) > 100:
        raise StaticSetError(f"{where}: 'context_id' must be a non-empty text of at most 100 characters")
    context_id = context_id.strip()  # stored trimmed: "c1" and "c1 " are one id
    if context_id in seen:
        raise StaticSetError(f"{where}: context_id {context_id!r} is used on line {seen[context_id]} already")
    return context_id


def _context(context: object, where: str) -> list[dict]:
    if not isinstance(context, list) or not context:
        raise StaticSetError(f"{where}: 'context' must be a non-empty list of {{speaker, text}}")
    for index, turn in enumerate(context):
        if not isinstance(turn, dict) or set(turn) != {"speaker", "text"} or turn["speaker"] not in SPEAKERS or not isinstance(turn["text"], str) or not turn["text"].strip():
            raise StaticSetError(f"{where}: context turn {index} must be {{speaker: user|system, text: non-empty text}}")
    return context


def _responses(responses: object, where: str) -> dict[str, str]:
    if not isinstance(responses, dict) or not responses:
        raise StaticSetError(f"{where}: 'responses' must be an object {{system name: response text}}")
    for system, response in responses.items():
        if not system.strip() or len(system) > 200 or not isinstance(response, str) or not response.strip():
            raise StaticSetError(f"{where}: response of {system[:50]!r} must be a non-empty text, under a system name of 1-200 characters")
    trimmed = [system.strip() for system in responses]
    twice = sorted({name for name in trimmed if trimmed.count(name) > 1})
    if twice:  # names are stored trimmed: " bot-a" and "bot-a" would be one system, a response lost
        raise StaticSetError(f"{where}: the system name(s) {', '.join(map(repr, twice))} appear more than once when the spaces around them are removed")
    return responses


def _no_constant(name):
    raise ValueError(f"{name} is not a number JSON allows")
