"""The shared data folder is found through QUORUM_SHARED_DATA from any checkout, and every test and
benchmark that reads it goes through `tests.shared_data` (one place to point)."""
import re
from pathlib import Path

from tests import shared_data as shared

ROOT = Path(__file__).resolve().parent.parent
# A path to the shared folder built by hand: "shared" / "data", "../shared/data", or parents[...] / "..".
OWN_PATH = re.compile(r"""["']shared["']\s*/\s*["']data["']|["']\.\./shared/data|parents\[\d\]\s*/\s*["']\.\.["']""")


def test_the_variable_names_the_folder_from_a_checkout_anywhere(monkeypatch, tmp_path):
    monkeypatch.setenv(shared.VARIABLE, str(tmp_path))
    assert shared.shared_data(shared.DSTC9_HUMAN_EVAL, "results") == tmp_path / "dstc9-track1-human-eval" / "results"


def test_unset_or_empty_it_is_the_shared_data_folder_beside_the_checkout(monkeypatch):
    for value in (None, "  "):
        if value is None:
            monkeypatch.delenv(shared.VARIABLE, raising=False)
        else:
            monkeypatch.setenv(shared.VARIABLE, value)
        assert shared.shared_data("x.zip") == ROOT.parent / "shared" / "data" / "x.zip"


def test_a_skip_names_where_it_looked_and_the_variable(tmp_path):
    reason = shared.missing(tmp_path / "absent")
    assert str(tmp_path / "absent") in reason and "QUORUM_SHARED_DATA" in reason


def test_no_test_or_benchmark_builds_the_shared_folder_path_itself():
    offenders = [
        str(path.relative_to(ROOT))
        for folder in ("tests", "perf")
        for path in (ROOT / folder).rglob("*.py")
        if path.name not in ("shared_data.py", "test_shared_data.py") and OWN_PATH.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []
