"""Strict JSON for what comes from outside (dialog systems' replies, work pages' bodies, uploaded
files): Python's json module accepts NaN and Infinity, turns 1e999 into infinity, recurses until
RecursionError on deep nesting, and lets NUL and lone surrogates through, which PostgreSQL cannot
store. `loads` refuses each of them with a reason (StrictJSONError, a ValueError). Going out,
`json_safe` turns what the statistics compute (numpy scalars, NaN) into values JSON holds. Pure."""
import json
import math
import re

#: How deep a value may nest (objects and arrays).
MAX_JSON_DEPTH = 32
_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_BRACKETS = re.compile(r"[\[\]{}]")


class StrictJSONError(ValueError):
    """A JSON text refused by `loads`; str() is the reason."""


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise StrictJSONError(f"the number {text[:20]} is out of range")
    return value


def _no_constant(name: str):
    raise StrictJSONError(f"{name} is not JSON")


def _check_strings(value, depth: int = 0) -> None:
    if isinstance(value, str):
        if "\x00" in value:
            raise StrictJSONError("a string holds a NUL character")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise StrictJSONError("a string holds a lone surrogate (not valid Unicode)") from None
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_strings(key, depth + 1)
            _check_strings(item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _check_strings(item, depth + 1)


def loads(raw: bytes | str, max_depth: int = MAX_JSON_DEPTH):
    """The value of a JSON text, or StrictJSONError saying why it is refused (see the module's doc)."""
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes | bytearray) else raw
    except UnicodeDecodeError:
        raise StrictJSONError("the body is not valid UTF-8") from None
    depth = deepest = 0
    for bracket in _BRACKETS.findall(_STRINGS.sub("", text)):
        depth += 1 if bracket in "[{" else -1
        deepest = max(deepest, depth)
    if deepest > max_depth:
        raise StrictJSONError(f"the JSON nests deeper than {max_depth} levels")
    try:
        value = json.loads(text, parse_constant=_no_constant, parse_float=_finite)
    except StrictJSONError:
        raise
    except (ValueError, RecursionError) as exc:
        raise StrictJSONError(f"it is not JSON ({str(exc)[:80]})") from None
    _check_strings(value)
    return value


def check_text(value: str) -> str:
    """`value` if it has no NUL and no lone surrogate, else StrictJSONError."""
    _check_strings(value)
    return value


def json_safe(value):
    """NaN and infinities (not JSON) become null; numpy scalars become Python numbers."""
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
