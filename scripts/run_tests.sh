#!/usr/bin/env bash
# Runs the suite against the real PostgreSQL and Redis when they answer on 127.0.0.1, on SQLite
# otherwise. With CI=true the tests that need PostgreSQL, Redis or Chromium fail instead of skipping.
#
# The tests run in parallel on the machine's cores (pytest-xdist, at most 8 workers): each worker
# has its own test database (test_<name>_gw0, ...), its own Redis database (the base URL's number
# plus the worker's, or one from QUORUM_TEST_REDIS_WORKER_DBS), its own temporary and var folders
# (tests/workers.py). The longest test files run first and an idle worker takes half of a busy one's
# remaining tests (--dist worksteal; tests/ordering.py, which --store-durations refreshes from a run).
# QUORUM_TEST_WORKERS=0 runs them in this one process; any pytest option
# may follow, e.g. `scripts/run_tests.sh tests/hits -x`. The run ends with how long it took.
set -u
cd "$(dirname "$0")/.."
PY=.venv/bin/python
port_open() { $PY - "$1" "$2" <<'PYEOF'
import socket, sys
s = socket.socket(); s.settimeout(1)
sys.exit(0 if s.connect_ex((sys.argv[1], int(sys.argv[2]))) == 0 else 1)
PYEOF
}
if [ -z "${DATABASE_URL:-}" ] && port_open 127.0.0.1 5432; then
  export DATABASE_URL="postgres://postgres@127.0.0.1:5432/quorum"
fi
if [ -z "${QUORUM_TEST_REDIS_URL:-}" ] && port_open 127.0.0.1 6379; then
  # Workers gw0..gw7 take databases 8..15.
  export QUORUM_TEST_REDIS_URL="redis://127.0.0.1:6379/8"
fi
# Bytecode is written (to __pycache__, which git ignores) even where the environment says not to
# (PYTHONDONTWRITEBYTECODE): the suite starts many Python processes (its workers, the demo,
# settings cases, Celery, gunicorn), and each compiled Quorum's modules and pytest's rewritten test
# modules again from source (docs/measurements.md, session 25).
unset PYTHONDONTWRITEBYTECODE
WORKERS="${QUORUM_TEST_WORKERS:-auto}"
echo "Test database: ${DATABASE_URL:-SQLite (no PostgreSQL on 127.0.0.1:5432)}"
echo "Test broker:   ${QUORUM_TEST_REDIS_URL:-none (no Redis on 127.0.0.1:6379)}"
echo "Workers:       ${WORKERS} (QUORUM_TEST_WORKERS; 0 runs the tests in one process)"
started=$SECONDS
$PY -m pytest -n "$WORKERS" --maxprocesses 8 --dist worksteal "$@"
status=$?
took=$((SECONDS - started))
echo "Test suite took $((took / 60)) min $((took % 60)) s (exit status $status)"
exit $status
