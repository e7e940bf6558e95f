"""CPU per annotation cycle, in one process (issue 26): the page script's one-request cycle (post an
item's answers with `X-Quorum-Cycle: page`, answered with the next item's page) through Django's full
handler and middleware, without a network or a server in between, against PostgreSQL.

CPU, not wall time, so that other load on a shared machine moves it little: this process's CPU
time plus that of its PostgreSQL backend (`/proc/<pg_backend_pid()>/stat`), divided by the cycles.
Baseline in the same run: the bare view of perf/baseline_view.py (one SELECT, one INSERT) through
the same handler, measured the same way; the ratio is baseline CPU / cycle CPU, so 0.25 means a
cycle costs four bare requests. Also counted: queries per cycle, and the write-ahead log a cycle
writes (what the disk and any replica take of it), and, in as many cycles again after the measured
ones, the PostgreSQL CPU of each kind of statement (`postgres_by_statement`). `QUORUM_BENCH_PROFILE=path` writes a cProfile of
the cycles there (read it with `python -m pstats`).

On the 20,000-item job of perf/bench_claims.py; QUORUM_BENCH_CYCLE_DB names its database.
"""
import os

from .bench_claims import _prepare
from .common import run_json_subprocess, save, server_env

DB_NAME = os.environ.get("QUORUM_BENCH_CYCLE_DB", "quorum_bench_cycle")
CYCLES = int(os.environ.get("QUORUM_BENCH_CYCLES", "400"))


def run() -> dict:
    prepared = _prepare(DB_NAME)
    env = {k: v for k, v in server_env(DB_NAME).items() if k in ("DJANGO_SETTINGS_MODULE", "DATABASE_URL", "ALLOWED_HOSTS", "LOG_LEVEL")}
    env["QUORUM_BENCH_STATEMENTS"] = "1"  # then as many cycles again, each statement's PostgreSQL CPU timed
    figures = run_json_subprocess("perf.cycle_worker", [str(prepared["job"]), str(CYCLES)], env)
    save("cycle", figures)
    return figures
