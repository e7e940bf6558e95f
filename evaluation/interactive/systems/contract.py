"""The shapes of the system contract's replies (docs/system-contract.md). Pure: each check returns
the list of what is wrong, in words an organizer can act on; an empty list is a conforming reply."""
from collections.abc import Mapping

CONTRACT_VERSION = "1.0"
END_REASONS = ("success", "fail", "abandoned", "timeout")
LOCALE = "en-US"
#: The longest reply text a worker is shown (characters).
MAX_TEXT_CHARS = 5000


def health_problems(body) -> list[str]:
    if not isinstance(body, Mapping):
        return ["health: the reply is not a JSON object"]
    problems = []
    if body.get("status") != "ok":
        problems.append(f"health: 'status' must be \"ok\", got {body.get('status')!r}")
    for name in ("system", "version"):
        if not isinstance(body.get(name), str):
            problems.append(f"health: '{name}' must be a string")
    return problems


def reply_problems(body, where: str) -> list[str]:
    """Problems of an opening or turn reply: {text: str, state: any, end: bool, offered?: object}."""
    if not isinstance(body, Mapping):
        return [f"{where}: the reply is not a JSON object"]
    problems = []
    if not isinstance(body.get("text"), str):
        problems.append(f"{where}: 'text' must be a string")
    elif len(body["text"]) > MAX_TEXT_CHARS:
        problems.append(f"{where}: 'text' is longer than {MAX_TEXT_CHARS} characters")
    if "state" not in body:
        problems.append(f"{where}: 'state' is missing (send null for none)")
    if not isinstance(body.get("end"), bool):
        problems.append(f"{where}: 'end' must be true or false")
    elif where == "opening" and body["end"]:
        # Ending before the user said anything would leave the worker nothing to judge.
        problems.append("opening: the system may not end the conversation before the user speaks")
    if body.get("offered") is not None and not isinstance(body.get("offered"), Mapping):
        problems.append(f"{where}: 'offered' must be an object of slot values when given")
    return problems
