"""Sessions come from the cache only when every process shares it (issue 26): with CACHE_URL set to
Redis a work page reads its session without a query; with the per-process default cache a logout
must reach every worker, so sessions stay in the database. Settings are read once per process, so
each case loads them in a process of its own with its own environment (tests/fresh_python.py)."""
import json
import os

from tests import fresh_python

PRINT = "import json, django; django.setup(); from django.conf import settings as s; print(json.dumps(s.SESSION_ENGINE))"


def _engine(**values) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("CACHE_URL", "QUORUM_SESSION_ENGINE")}
    env.update(DJANGO_SETTINGS_MODULE="quorum.settings", QUORUM_ENV="test", **values)
    done = fresh_python.run(PRINT, env)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_shared_cache_serves_sessions_and_a_per_process_one_does_not():
    assert _engine(CACHE_URL="redis://127.0.0.1:6379/2") == "quorum.sessions.cached_db"
    assert _engine() == "quorum.sessions.db"
    assert _engine(CACHE_URL="locmemcache://") == "quorum.sessions.db"


def test_the_engine_can_be_chosen():
    chosen = "django.contrib.sessions.backends.signed_cookies"
    assert _engine(CACHE_URL="redis://127.0.0.1:6379/2", QUORUM_SESSION_ENGINE=chosen) == chosen
