"""A static FED file whose names differ only by spaces around them is refused with the line named,
not imported with one response silently lost: names are stored trimmed, so " bot-a" and "bot-a" (or
context ids "c1" and "c1 ") would become one."""
import json

import pytest

from evaluation.fed.dataset import StaticSetError, parse

CONTEXT = '[{"speaker": "user", "text": "Hi!"}]'


def test_two_system_names_that_are_one_once_trimmed_are_refused():
    raw = ('{"context_id": "c1", "context": ' + CONTEXT + ', "responses": {"bot-a": "Hello!", " bot-a": "Hey!"}}').encode()
    with pytest.raises(StaticSetError, match=r"line 1: .*'bot-a'.*more than once"):
        parse(raw)


def test_two_context_ids_that_are_one_once_trimmed_are_refused():
    raw = "\n".join(
        json.dumps({"context_id": cid, "context": [{"speaker": "user", "text": "Hi!"}], "responses": {"bot-a": "Hello!"}}) for cid in ("c1", "c1 ")
    ).encode()
    with pytest.raises(StaticSetError, match=r"line 2: context_id 'c1' is used on line 1 already"):
        parse(raw)
