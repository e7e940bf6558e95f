"""Every Python name a model's help text gives (shown in the admin and the API schema) still resolves.

Help texts of annotation, hits and evaluation name where a value is computed or declared, e.g.
`evaluation.stats.report.build_report`. Code moves; the text stayed behind twice (a report's
builder, the adaptive boundary). Here every dotted name of three parts or more in a help text, in
backticks or plain, must either import (a module, then attributes) or be a path of fields from the
model (`response.item.job`), and every source file a help text names must exist, so the next move
fails this test instead of leaving the text behind."""
import importlib
import re
from pathlib import Path

import pytest
from django.apps import apps
from django.core.exceptions import FieldDoesNotExist

APPS = ("annotation", "hits", "evaluation")
ROOT = Path(__file__).resolve().parent.parent

# Three or more identifiers joined by dots; not the tail of a longer dotted run or a path.
DOTTED = re.compile(r"(?<![\w./])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*){2,}")
# A source file named by its path, e.g. annotation/text/typing_log.py; <provider> stands for any folder.
SOURCE_FILE = re.compile(r"(?<![\w/])(?:[\w<>]+/)+[\w<>]+\.py\b")


def resolve(dotted: str):
    """The object a dotted name names: the longest prefix that imports, then attributes."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            target = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attribute in parts[cut:]:
            target = getattr(target, attribute)  # AttributeError: the text names what is not there
        return target
    raise ImportError(f"no module in {dotted!r}")


def is_field_path(model, dotted: str) -> bool:
    """Whether `dotted` walks the model's relations to a field, like `response.item.job`."""
    *relations, last = dotted.split(".")
    try:
        for name in relations:
            model = model._meta.get_field(name).related_model
            if model is None:
                return False
        model._meta.get_field(last)
    except FieldDoesNotExist:
        return False
    return True


def _help_texts():
    for label in APPS:
        for model in apps.get_app_config(label).get_models():
            for field in model._meta.get_fields():
                text = str(getattr(field, "help_text", "") or "")
                if text:
                    yield f"{model.__name__}.{field.name}", model, text


def unresolved_names() -> list[str]:
    problems = []
    for where, model, text in _help_texts():
        for name in DOTTED.findall(text):
            if is_field_path(model, name):
                continue
            try:
                resolve(name)
            except (ImportError, AttributeError) as error:
                problems.append(f"{where}: {name} ({error})")
        for path in SOURCE_FILE.findall(text):
            if not list(ROOT.glob(re.sub(r"<\w+>", "*", path))):
                problems.append(f"{where}: {path} (no such file)")
    return problems


def test_every_name_in_a_help_text_resolves():
    assert unresolved_names() == []


def test_the_check_finds_names_in_every_app():
    """The three apps' help texts are read: each names at least one thing this test checks."""
    named = {model._meta.app_label for _, model, text in _help_texts() if DOTTED.search(text) or SOURCE_FILE.search(text)}
    assert named == set(APPS)


def test_a_stale_name_is_caught():
    with pytest.raises((ImportError, AttributeError)):
        resolve("evaluation.report.build_report")
    with pytest.raises(AttributeError):
        resolve("evaluation.stats.versions.NOT_A_KIND")
    spoken_reading = apps.get_model("annotation", "SpokenReading")
    assert is_field_path(spoken_reading, "response.item.job")
    assert not is_field_path(spoken_reading, "response.item.nothing")
