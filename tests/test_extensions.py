"""The two ways Quorum extends: registries (`quorum.registry`) and background work asked for by name."""
import ast
from pathlib import Path

import pytest

from annotation import extensions
from quorum.background import after_commit, task_named
from quorum.registry import Registry

ROOT = Path(__file__).resolve().parents[1]
APPS = ("annotation", "hits", "evaluation", "quorum")


def test_a_registry_refuses_a_second_entry_under_a_taken_key_and_names_what_exists():
    registry: Registry[str] = Registry("colours", "colour")
    registry.register("red", "#f00")
    registry.register("red", "#f00")  # the same entry again: a ready() that runs twice
    with pytest.raises(ValueError, match="'red' is already registered"):
        registry.register("red", "#e00")
    with pytest.raises(LookupError, match="no colour registered as 'blue'; registered: red"):
        registry["blue"]
    assert registry.get("blue") is None and list(registry) == ["red"]


def test_override_puts_back_what_was_there():
    registry: Registry[int] = Registry("numbers", "number")
    registry.register("one", 1)
    with registry.override("one", 11), registry.override("two", 2):
        assert registry["one"] == 11 and registry["two"] == 2
    assert registry.items() == [("one", 1)]
    with registry.override("one", None):
        assert "one" not in registry
    assert registry["one"] == 1


def test_the_higher_apps_fill_annotations_registries():
    """What hits and evaluation register in their ready(), by name: a renamed entry fails here."""
    assert "hits.budget" in extensions.launch_checks
    assert "hits.workers_sign_in" in extensions.claim_watchers
    assert {"mturk", "prolific"} <= set(extensions.submit_redirects)
    assert "inhouse" not in extensions.submit_redirects  # signed-in annotators go on to their next item
    assert "systems" in extensions.chat_relays
    assert "spoken_readings" in extensions.upload_stores
    assert "run_interactive_demo" in extensions.demo_parts


# The calls that name a task, and which positional argument is its name: an `AttemptRecord`
# (services.attempts) queues its task through `after_commit` with the name it was made with.
NAMING_CALLS = {"after_commit": 0, "task_named": 0, "AttemptRecord": 2}


def _queued_task_names() -> list[tuple[str, str]]:
    """(file, name) of every `after_commit("...")` / `task_named("...")` / `AttemptRecord(model, owner, "...")` call in the apps' code."""
    found = []
    for app in APPS:
        for path in (ROOT / app).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
                if not isinstance(node, ast.Call):
                    continue
                position = NAMING_CALLS.get(getattr(node.func, "id", getattr(node.func, "attr", None)))
                if position is not None and len(node.args) > position:
                    name = node.args[position]
                    if isinstance(name, ast.Constant) and isinstance(name.value, str):
                        found.append((str(path.relative_to(ROOT)), name.value))
    return found


def test_every_task_asked_for_by_name_is_a_registered_task():
    names = _queued_task_names()
    assert len(names) >= 3  # the reader finds the calls (start_import, start_export, readings)
    assert {"annotation.tasks.apply_worker_flags", "evaluation.tasks.compute_campaign_results"} <= {name for _, name in names}
    for path, name in names:
        assert task_named(name).name == name, path


def test_an_unknown_task_name_is_refused_before_anything_is_queued():
    with pytest.raises(LookupError, match="no background task 'annotation.tasks.nope'; registered: .*annotation.tasks.run_import"):
        after_commit("annotation.tasks.nope", 1)
