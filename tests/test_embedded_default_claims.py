"""The embedded default (SQLite, what `make demo` runs on) claims in the orders the suite checks on
PostgreSQL. The suite runs on PostgreSQL; these tests run again, in a child pytest, on SQLite,
where the transactional claim serves every ordered job and JSON keys read back differently."""
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

ON_SQLITE = [
    # A goal id such as "3" read back as the number 3 on SQLite matched no goal: a worker chatted
    # about the same goal every time.
    "tests/evaluation/test_chat_campaigns.py::test_a_chat_job_hands_out_interleaved_chats_and_never_the_same_goal_twice_in_a_row",
    "tests/evaluation/test_rater_order.py",  # its PostgreSQL-only concurrency test left out ("not postgres")
]


def test_ordered_claims_hold_on_sqlite(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "PYTEST_XDIST_WORKER", "PYTEST_XDIST_TESTRUNUID")}
    env["DATABASE_URL"] = f"sqlite:///{tmp_path / 'claims.sqlite3'}"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", *ON_SQLITE, "-m", "not postgres", "-q", "-p", "no:cacheprovider", "-x"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout and " skipped" not in proc.stdout and " error" not in proc.stdout, proc.stdout[-2000:]
