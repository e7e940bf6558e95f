#!/bin/sh
# `make serve`: the UI on 127.0.0.1:8000 (PORT to change it) with a background worker beside it
# (quorum/local_worker.py, writing to var/worker.log), so exports, imports and planner runs leave the
# page at once and show their progress there. Stopping this script (Ctrl+C, or a TERM to it) stops both.
set -eu
PY=${PY:-.venv/bin/python}
export QUORUM_LOCAL_WORKER=true
"$PY" -m quorum.local_worker &
worker=$!
"$PY" manage.py runserver "127.0.0.1:${PORT:-8000}" &
server=$!
trap 'kill "$worker" "$server" 2>/dev/null || true' EXIT INT TERM
wait "$server"
