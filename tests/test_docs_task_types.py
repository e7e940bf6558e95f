"""docs/annotation.md names the task types Quorum ships with as examples, never as the list: every type
it names there exists, and a new type needs no line in it (`GET /api/task-types/` is the list)."""
import re
from pathlib import Path

from annotation import task_types

DOC = Path(__file__).resolve().parent.parent / "docs" / "annotation.md"


def test_every_type_the_docs_name_as_shipped_is_registered():
    text = DOC.read_text(encoding="utf-8")
    section = text.split("The types Quorum ships with", 1)[1].split("whose questions and scales are", 1)[0]
    modules = {path.stem for path in Path(task_types.__file__).parent.glob("*.py")}
    apps = {path.name for path in DOC.parents[1].iterdir() if path.is_dir()}
    named = set(re.findall(r"`([a-z][a-z0-9_]*)`", section)) - modules - apps
    assert named and named <= set(task_types.registry()), sorted(named - set(task_types.registry()))


def test_the_checklist_names_no_shared_list_a_type_must_join():
    text = DOC.read_text(encoding="utf-8")
    for gone in ("PAYLOADS", "CORPUS_SETTINGS", "COMPARISONS", "BAD_SETTING_FILES", "GOLD ="):
        assert gone not in text
    assert "tests/annotation/task_types/test_<key>.py" in text
