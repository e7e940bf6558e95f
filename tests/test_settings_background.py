"""Background work is explicit (issue 8): outside development and tests Quorum refuses to start
without a Celery broker, unless QUORUM_TASKS_INLINE=true says to run tasks in-process on purpose.

Settings are read once per process, so each case loads them in a process of its own with its own
environment (tests/fresh_python.py), as gunicorn, `manage.py` and `celery` would; `manage.py` and the
worker themselves are started as they are.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import fresh_python

ROOT = Path(__file__).resolve().parents[1]
PRINT_CELERY = (
    "import json, django; django.setup(); from django.conf import settings as s; "
    "print(json.dumps({'eager': s.CELERY_TASK_ALWAYS_EAGER, 'broker': s.CELERY_BROKER_URL, 'inline': s.QUORUM_TASKS_INLINE}))"
)


def _env(**values):
    """The test process's environment without anything that decides the outcome, plus `values`."""
    env = {k: v for k, v in os.environ.items() if k not in ("CELERY_BROKER_URL", "QUORUM_TASKS_INLINE", "QUORUM_ENV")}
    env.update(DJANGO_SETTINGS_MODULE="quorum.settings", SECRET_KEY="not-a-real-secret", **values)
    return env


def _run(args, **values):
    return subprocess.run(args, cwd=ROOT, env=_env(**values), capture_output=True, text=True, timeout=120)


def _load(**values):
    """The settings loaded in a process of their own, printing the Celery ones."""
    return fresh_python.run(PRINT_CELERY, _env(**values))


def _celery_settings(**values) -> dict:
    done = _load(**values)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _assert_refused(done):
    assert done.returncode != 0
    message = done.stderr.strip().splitlines()[-1]
    assert message.startswith("django.core.exceptions.ImproperlyConfigured: No Celery broker")
    # It says what to set, with an example, and names the escape hatch.
    assert "CELERY_BROKER_URL=redis://127.0.0.1:6379/0" in message
    assert "QUORUM_TASKS_INLINE=true" in message


@pytest.mark.parametrize("quorum_env", ["production", "staging"])
def test_settings_refuse_to_load_without_a_broker_outside_development(quorum_env):
    _assert_refused(_load(QUORUM_ENV=quorum_env))


def test_an_in_memory_broker_is_no_broker_in_production():
    _assert_refused(_load(QUORUM_ENV="production", CELERY_BROKER_URL="memory://localhost/"))


@pytest.mark.slow
@pytest.mark.parametrize(
    "command",
    [
        [sys.executable, "manage.py", "check"],
        [sys.executable, "-m", "celery", "-A", "quorum", "worker", "--pool=solo", "--without-heartbeat", "--without-gossip", "--without-mingle"],
    ],
    ids=["manage.py", "celery worker"],
)
def test_manage_and_the_worker_refuse_to_start_without_a_broker(command):
    _assert_refused(_run(command, QUORUM_ENV="production"))


def test_a_broker_runs_tasks_on_the_worker():
    assert _celery_settings(QUORUM_ENV="production", CELERY_BROKER_URL="redis://127.0.0.1:6379/0") == {
        "eager": False, "broker": "redis://127.0.0.1:6379/0", "inline": False,
    }


@pytest.mark.parametrize("inline", ["true", "1", "yes"])
def test_inline_on_purpose_runs_tasks_in_process_in_production(inline):
    found = _celery_settings(QUORUM_ENV="production", QUORUM_TASKS_INLINE=inline)
    assert found["eager"] is True and found["inline"] is True


def test_inline_wins_over_a_broker():
    found = _celery_settings(QUORUM_ENV="production", QUORUM_TASKS_INLINE="true", CELERY_BROKER_URL="redis://127.0.0.1:6379/0")
    assert found["eager"] is True


@pytest.mark.parametrize("quorum_env", ["development", "test"])
def test_development_and_tests_run_tasks_in_process_without_a_broker(quorum_env):
    found = _celery_settings(QUORUM_ENV=quorum_env)
    assert found["eager"] is True and found["broker"].startswith("memory://") and found["inline"] is False


def test_development_with_a_broker_uses_it():
    assert _celery_settings(QUORUM_ENV="development", CELERY_BROKER_URL="redis://127.0.0.1:6379/0")["eager"] is False


def test_false_inline_is_still_refused():
    _assert_refused(_load(QUORUM_ENV="production", QUORUM_TASKS_INLINE="false"))
