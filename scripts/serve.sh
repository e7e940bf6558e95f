#!/bin/sh
# `make serve`: the UI on 127.0.0.1:8000 with a background worker beside it (quorum/local_worker.py),
# so exports, imports and planner runs leave the page at once and show their progress there.
# Stopping this script (Ctrl+C) stops the worker too.
set -eu
PY=${PY:-.venv/bin/python}
export QUORUM_LOCAL_WORKER=true
"$PY" -m quorum.local_worker &
worker=$!
trap 'kill "$worker" 2>/dev/null || true' EXIT INT TERM
"$PY" manage.py runserver 127.0.0.1:8000
