"""Every log line is printed once (issue 10): Django's default "django" console handler and the
root's console handler used to print each django.* record twice when DEBUG was on."""
import logging
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _stderr_of(env_name: str) -> str:
    code = (
        "import django, logging, os; os.environ['DJANGO_SETTINGS_MODULE']='quorum.settings'; django.setup();"
        "logging.getLogger('django.request').warning('once-django'); logging.getLogger('annotation.x').warning('once-app')"
    )
    env = {"QUORUM_ENV": env_name, "PATH": "/usr/bin:/bin", "DATABASE_URL": "sqlite:///:memory:"}
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True).stderr


def test_each_log_record_is_printed_once_with_debug_on():
    err = _stderr_of("development")
    assert err.count("once-django") == 1, err
    assert err.count("once-app") == 1, err


def test_the_django_logger_has_no_handler_of_its_own():
    assert logging.getLogger("django").handlers == []
