"""The order the suite runs in: the test files that take longest first.

`make test` runs on every core with pytest-xdist's `worksteal` scheduler: each worker starts with an
equal share of the tests, and one that runs out takes half of another's remaining ones. A minute-long
test collected last would still run alone at the end while the other cores wait; started first, it
runs beside the rest. So the files are ordered by how long their tests took (`tests/durations.json`,
seconds per file), longest first, and each file's tests keep their own order, so that a module's
fixtures are made once. Files not in the record (new ones) come last, in the order collected.

`scripts/run_tests.sh --store-durations` rewrites the record from the run (pytest-split keeps such a
record too, but to split a suite across CI jobs; it does not order one run's tests).
"""
import json
from collections import defaultdict
from pathlib import Path

RECORD = Path(__file__).with_name("durations.json")


def file_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def read_record(path: Path = RECORD) -> dict[str, float]:
    """Seconds per test file; empty when the record is missing or unreadable (the order then stays)."""
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return {str(k): float(v) for k, v in record.items() if isinstance(v, (int, float))} if isinstance(record, dict) else {}


def longest_files_first(nodeids: list[str], seconds: dict[str, float]) -> list[int]:
    """The positions of `nodeids` in running order: by their file's seconds, longest first; a stable
    sort, so the tests of a file stay together and in order, and unknown files keep theirs at the end."""
    return sorted(range(len(nodeids)), key=lambda i: -seconds.get(file_of(nodeids[i]), 0.0))


class DurationRecorder:
    """Sums each test file's setup, call and teardown seconds over a run (on xdist's controller the
    workers' reports arrive here too) and writes them into the record at the end: the files this run
    ran are replaced, the others kept, so a run of a few files does not forget the rest."""

    def __init__(self, path: Path = RECORD):
        self.path = path
        self.seconds: dict[str, float] = defaultdict(float)

    def pytest_runtest_logreport(self, report):
        self.seconds[file_of(report.nodeid)] += report.duration

    def pytest_sessionfinish(self, session, exitstatus):
        if getattr(session.config, "workerinput", None) is not None:
            return  # a worker: the controller writes the record
        merged = {**read_record(self.path), **{k: round(v, 1) for k, v in self.seconds.items()}}
        ordered = dict(sorted(merged.items(), key=lambda kv: -kv[1]))
        self.path.write_text(json.dumps(ordered, indent=1) + "\n")
