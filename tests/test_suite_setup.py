"""The suite's running order (tests/ordering.py), and the migrated template its test databases are copied from (tests/db_template.py)."""
import json

from tests.ordering import DurationRecorder, longest_files_first, read_record


def test_the_longest_files_run_first_and_each_files_tests_keep_their_order():
    nodeids = ["tests/a.py::one", "tests/a.py::two", "tests/new.py::x", "tests/b.py::one", "tests/b.py::two", "tests/c.py::z"]
    seconds = {"tests/a.py": 3.0, "tests/b.py": 120.0, "tests/c.py": 40.0}
    ordered = [nodeids[i] for i in longest_files_first(nodeids, seconds)]
    assert ordered == ["tests/b.py::one", "tests/b.py::two", "tests/c.py::z", "tests/a.py::one", "tests/a.py::two", "tests/new.py::x"]


def test_without_a_record_the_collected_order_stays(tmp_path):
    assert read_record(tmp_path / "missing.json") == {}
    (tmp_path / "bad.json").write_text("[1, 2")
    assert read_record(tmp_path / "bad.json") == {}
    nodeids = ["tests/z.py::a", "tests/a.py::b"]
    assert longest_files_first(nodeids, {}) == [0, 1]


class _Report:
    def __init__(self, nodeid, duration):
        self.nodeid, self.duration = nodeid, duration


class _Session:
    class config:  # noqa: N801 - stands in for pytest's config object, a controller's (no workerinput)
        pass


def test_a_run_records_its_files_and_keeps_the_others(tmp_path):
    path = tmp_path / "durations.json"
    path.write_text(json.dumps({"tests/kept.py": 9.0, "tests/a.py": 100.0}))
    recorder = DurationRecorder(path)
    for nodeid, seconds in [("tests/a.py::one", 1.5), ("tests/a.py::one", 0.25), ("tests/a.py::two", 2.0), ("tests/b.py::x", 30.0)]:
        recorder.pytest_runtest_logreport(_Report(nodeid, seconds))
    recorder.pytest_sessionfinish(_Session(), 0)
    written = json.loads(path.read_text())
    assert written == {"tests/b.py": 30.0, "tests/kept.py": 9.0, "tests/a.py": 3.8}
    assert list(written) == ["tests/b.py", "tests/kept.py", "tests/a.py"]  # longest first, to read at a glance


def test_the_template_database_is_named_after_the_migrations_so_a_changed_one_is_built_again(tmp_path):
    from tests.db_template import PREFIX, template_name

    migration = tmp_path / "annotation" / "migrations" / "0001_initial.py"
    migration.parent.mkdir(parents=True)
    migration.write_text("operations = []\n")
    first = template_name(tmp_path)
    assert first.startswith(PREFIX) and template_name(tmp_path) == first
    migration.write_text("operations = ['changed']\n")
    changed = template_name(tmp_path)
    assert changed != first
    (tmp_path / "hits" / "migrations").mkdir(parents=True)
    (tmp_path / "hits" / "migrations" / "0002_more.py").write_text("operations = []\n")
    assert template_name(tmp_path) not in (first, changed)  # a new migration too
