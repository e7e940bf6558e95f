"""Hypothesis strategies shared by the import fuzzers: a well-formed JSON document with one or more
malformed pieces put in at places drawn from its own tree, written out as bytes that may also be
spoilt as bytes (a BOM, a cut, a byte that is not UTF-8).

The malformed pieces are the edges a fuzzer found before (issue 11): NUL characters, lone
surrogates, NaN and Infinity, integers around Python's 4,300-digit limit, nesting near and far past
the importers' 64 levels, wrong types where text or lists belong, keys removed or unknown keys added.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

#: Every fuzzer: the same cases on every run (CI), no example database on disk, no timing limit
#: (the first example pays for warming caches), function-scoped fixtures shared by the examples
#: on purpose (each example counts the rows itself).
FUZZ = settings(
    # QUORUM_FUZZ_SEED=random explores new cases (a deeper run by hand, with QUORUM_FUZZ_SCALE=10).
    derandomize=os.environ.get("QUORUM_FUZZ_SEED") != "random",
    database=None,
    deadline=None,
    print_blob=False,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)


@dataclass(frozen=True)
class Raw:
    """JSON text written as it is: what json.dumps cannot write (huge integers, deep nesting)."""

    text: str


def examples(n: int) -> int:
    """`n` examples, times QUORUM_FUZZ_SCALE for a longer run by hand (CI keeps the bound)."""
    return n * int(os.environ.get("QUORUM_FUZZ_SCALE", "1"))


def dumps(value) -> str:
    """JSON text of `value`, with Raw pieces verbatim, NaN/Infinity as Python writes them, and lone
    surrogates as \\ud800-style escapes (json.dumps with ensure_ascii does that)."""
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(str(k))}: {dumps(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(dumps(v) for v in value) + "]"
    return json.dumps(value)


NASTY_TEXT = st.sampled_from(["a\x00b", "\x00", "x\ud800y", "\udc00", "\ud83d", "\ufeffhi", "", " ", "\u202e", "a" * 5000])
DEPTHS = st.sampled_from([2, 63, 64, 65, 100, 1000, 5000])
NASTY = st.one_of(
    NASTY_TEXT,
    st.text(st.characters(categories=["L", "N", "P", "Z", "Cc", "Cs"]), max_size=20),
    st.builds(lambda n, sign: Raw(sign + "9" * n), st.sampled_from([4299, 4300, 4301, 5000]), st.sampled_from(["", "-"])),
    st.sampled_from([Raw("NaN"), Raw("Infinity"), Raw("-Infinity"), 1e308, -0.0, 2**63, -(2**63) - 1]),
    st.builds(lambda d, open_, close: Raw(open_ * d + ("1" if open_ == "[" else "") + close * d), DEPTHS, st.just("["), st.just("]")),
    st.builds(lambda d: Raw('{"a": ' * d + "1" + "}" * d), DEPTHS),
    st.none(), st.booleans(), st.integers(-3, 3), st.just([]), st.just({}),
    st.lists(st.text(max_size=5), max_size=3), st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
)


def places(value, path=()):
    """Every path into `value` (keys and indexes), the root included."""
    yield path
    if isinstance(value, dict):
        for key, child in value.items():
            yield from places(child, (*path, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from places(child, (*path, index))


def _replace(value, path, new):
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {k: (_replace(v, rest, new) if k == head else v) for k, v in value.items()}
    return [(_replace(v, rest, new) if i == head else v) for i, v in enumerate(value)]


def _drop(value, path):
    head, rest = path[0], path[1:]
    if rest:
        return _replace(value, (head,), _drop(value[head], rest))
    if isinstance(value, dict):
        return {k: v for k, v in value.items() if k != head}
    return [v for i, v in enumerate(value) if i != head]


@st.composite
def mutated(draw, document, max_mutations=3):
    """`document` with 1 to `max_mutations` changes: a value replaced by a nasty one, a key or list
    element removed, or an unknown key added to an object."""
    for _ in range(draw(st.integers(1, max_mutations))):
        paths = list(places(document))
        path = draw(st.sampled_from(paths))
        action = draw(st.sampled_from(["replace", "replace", "drop", "add"]))
        if action == "drop" and path:
            document = _drop(document, path)
        elif action == "add":
            target = _get(document, path)
            if isinstance(target, dict):
                document = _replace(document, path, {**target, draw(st.sampled_from(["extra", "slots", "\x00", ""])): draw(NASTY)})
        else:
            document = _replace(document, path, draw(NASTY))
    return document


def _get(value, path):
    for step in path:
        value = value[step]
    return value


@st.composite
def spoilt_bytes(draw, text: str):
    """The UTF-8 bytes of `text`, maybe with a BOM, cut short, or with a byte that is not UTF-8."""
    data = text.encode("utf-8", "surrogatepass")
    how = draw(st.sampled_from(["as is", "as is", "as is", "bom", "cut", "bad byte"]))
    if how == "bom":
        return b"\xef\xbb\xbf" + data
    if how == "cut" and data:
        return data[: draw(st.integers(0, len(data) - 1))]
    if how == "bad byte" and data:
        at = draw(st.integers(0, len(data) - 1))
        return data[:at] + draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80"])) + data[at + 1 :]
    return data
