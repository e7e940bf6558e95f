"""HTTPS in production is configured from the environment (README, *Configuration*): behind a proxy
that ends TLS, its X-Forwarded-Proto is trusted only when QUORUM_BEHIND_TLS_PROXY says so; the
redirect to HTTPS and HSTS are set by their own variables, and with them Django's deployment check
has nothing left to warn about. Settings are read once per process, so each case runs in a process of its own
(tests/fresh_python.py for a setting's value; `manage.py check` itself for the deployment check)."""
import os
import subprocess
import sys
from pathlib import Path

from tests import fresh_python

ROOT = Path(__file__).resolve().parents[1]
PRODUCTION = {
    "QUORUM_ENV": "production", "SECRET_KEY": "a-production-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz-ABCDEFGHIJ",
    "ALLOWED_HOSTS": "quorum.example.org", "CELERY_BROKER_URL": "redis://127.0.0.1:6379/0", "DATABASE_URL": "sqlite:///unused.sqlite3",
}
HTTPS = ("QUORUM_BEHIND_TLS_PROXY", "SECURE_SSL_REDIRECT", "SECURE_HSTS_SECONDS", "SECURE_HSTS_INCLUDE_SUBDOMAINS", "SECURE_HSTS_PRELOAD")


def _env(**values) -> dict:
    # Not this test process's own settings; nor DJANGO_ALLOW_ASYNC_UNSAFE, which the browser tests
    # set in it and which the deployment check rightly refuses.
    env = {k: v for k, v in os.environ.items() if k not in (*HTTPS, "DJANGO_SETTINGS_MODULE", "DJANGO_ALLOW_ASYNC_UNSAFE")}
    env.update(PRODUCTION, **values)
    return env


def _run(args, **values) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=_env(**values), capture_output=True, text=True, timeout=120)


def _setting(name, **values) -> str:
    done = fresh_python.run(f"import django, os; os.environ['DJANGO_SETTINGS_MODULE'] = 'quorum.settings'; django.setup(); "
                            f"from django.conf import settings; print(repr(getattr(settings, {name!r})))", _env(**values))
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip().splitlines()[-1]


def test_the_proxy_header_is_trusted_only_when_asked():
    assert _setting("SECURE_PROXY_SSL_HEADER") == "None"
    assert _setting("SECURE_PROXY_SSL_HEADER", QUORUM_BEHIND_TLS_PROXY="true") == "('HTTP_X_FORWARDED_PROTO', 'https')"


def test_the_deployment_check_warns_until_https_is_configured():
    plain = _run(["manage.py", "check", "--deploy"])
    assert "security.W004" in plain.stderr and "security.W008" in plain.stderr  # HSTS, the redirect
    configured = _run(
        ["manage.py", "check", "--deploy"], QUORUM_BEHIND_TLS_PROXY="true", SECURE_SSL_REDIRECT="true", SECURE_HSTS_SECONDS="31536000",
        SECURE_HSTS_INCLUDE_SUBDOMAINS="true", SECURE_HSTS_PRELOAD="true",
    )
    assert configured.returncode == 0 and "security.W0" not in configured.stderr, configured.stderr[-2000:]
