#!/usr/bin/env bash
# Runs the suite against the real PostgreSQL and Redis when they answer on 127.0.0.1, on SQLite
# otherwise. With CI=true the tests that need PostgreSQL, Redis or Chromium fail instead of skipping.
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
  export QUORUM_TEST_REDIS_URL="redis://127.0.0.1:6379/15"
fi
echo "Test database: ${DATABASE_URL:-SQLite (no PostgreSQL on 127.0.0.1:5432)}"
echo "Test broker:   ${QUORUM_TEST_REDIS_URL:-none (no Redis on 127.0.0.1:6379)}"
$PY -m pytest "$@"
