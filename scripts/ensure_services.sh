#!/usr/bin/env bash
# Start the machine's PostgreSQL and Redis if they are installed but down. Never fails hard:
# the caller decides whether a missing service is an error.
set -u
if command -v pg_ctlcluster >/dev/null 2>&1 && ! pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; then
  ver=$(ls /etc/postgresql 2>/dev/null | head -n1)
  [ -n "$ver" ] && pg_ctlcluster --skip-systemctl-redirect "$ver" main start 2>/dev/null
  for _ in $(seq 1 20); do pg_isready -h 127.0.0.1 -p 5432 -q && break; sleep 0.5; done
fi
if command -v redis-server >/dev/null 2>&1 && ! (redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null | grep -q PONG); then
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no >/dev/null 2>&1
  for _ in $(seq 1 20); do redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null | grep -q PONG && break; sleep 0.5; done
fi
exit 0
