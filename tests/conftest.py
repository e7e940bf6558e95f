"""Shared fixtures, and the rule for tests that need real services.

Tests marked `postgres`, `redis`, `browser` or `speech` run against the machine's PostgreSQL, Redis,
Debian chromium and Debian's espeak-ng/flite. Where one is missing they are skipped with a reason that says so, except under
CI=true, where a missing service fails the test: CI must exercise the real parts.

Each test process (the one process of a plain run, or each pytest-xdist worker of `make test`) gets
its own temporary folder, var folder and Redis database (`tests/workers.py`).
"""
import multiprocessing.util
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from django.db import connection

from tests import db_template, fast_flush, ordering
from tests.workers import isolate_process

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
SPEECH_PROGRAMS = ("espeak-ng", "flite")


def pytest_addoption(parser):
    parser.addoption(
        "--store-durations", action="store_true",
        help="write each test file's seconds into tests/durations.json, the order the next runs take (tests/ordering.py)",
    )


def pytest_collection_modifyitems(config, items):
    """The longest test files first (tests/ordering.py), so that no long test is left to run alone at the end."""
    order = ordering.longest_files_first([item.nodeid for item in items], ordering.read_record())
    items[:] = [items[i] for i in order]


def pytest_configure(config):
    if config.getoption("--store-durations"):
        config.pluginmanager.register(ordering.DurationRecorder(), "quorum-durations")
    worker = getattr(config, "workerinput", {}).get("workerid")
    folder = tempfile.mkdtemp(prefix=f"quorum-tests-{worker or 'run'}-")
    config.quorum_tmp = folder
    try:
        own = isolate_process(worker, folder)
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None
    from django.conf import settings

    if settings.configured:
        var = Path(own["var"])
        settings.VAR_DIR, settings.STATIC_ROOT, settings.MEDIA_ROOT = var, var / "staticfiles", var / "media"
        settings.QUORUM_EXPORT_DIR, settings.QUORUM_IMPORT_DIR = var / "exports", var / "imports"
    fast_flush.install()


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix):
    """On PostgreSQL the test database is copied from a migrated template (tests/db_template.py)."""
    from django.conf import settings

    db = settings.DATABASES["default"]
    if db["ENGINE"] == "django.db.backends.postgresql":
        db.setdefault("TEST", {})["TEMPLATE"] = db_template.ensure_template(db)


def pytest_sessionfinish(session, exitstatus):
    session.config.quorum_keep_tmp = exitstatus != 0


def pytest_unconfigure(config):
    """The process's temporary folder goes, unless its tests failed: then it is kept to look into.
    It goes at the process's exit, after multiprocessing has removed its own folder inside it
    (the crash tests' fork server keeps its socket there)."""
    folder = getattr(config, "quorum_tmp", None)
    if folder and not getattr(config, "quorum_keep_tmp", False):
        multiprocessing.util.Finalize(None, shutil.rmtree, args=(folder,), kwargs={"ignore_errors": True}, exitpriority=-200)


def _missing(reason):
    if IN_CI:
        pytest.fail(f"CI needs this service: {reason}")
    pytest.skip(reason)


@pytest.fixture(autouse=True)
def _require_services(request):
    if request.node.get_closest_marker("postgres") and connection.vendor != "postgresql":
        _missing("needs PostgreSQL: set DATABASE_URL=postgres://... or start PostgreSQL on 127.0.0.1:5432")
    if request.node.get_closest_marker("redis") and not os.environ.get("QUORUM_TEST_REDIS_URL"):
        _missing("needs Redis: start redis-server on 127.0.0.1:6379 or set QUORUM_TEST_REDIS_URL")
    if request.node.get_closest_marker("browser") and not CHROMIUM:
        _missing("needs Debian's chromium package (apt-get install chromium)")
    if request.node.get_closest_marker("speech"):
        absent = [name for name in SPEECH_PROGRAMS if not shutil.which(name)]
        if absent:
            _missing(f"needs Debian's {' and '.join(absent)} (scripts/ensure_speech.sh)")


@pytest.fixture(autouse=True)
def _fresh_cache():
    """Primary keys repeat across rolled-back tests, so cached per-job figures must not."""
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


@pytest.fixture(autouse=True)
def _loopback_systems_allowed(settings):
    """The tests' dialog systems run on 127.0.0.1, which the address policy refuses by default
    (issue 25): allowed here on purpose; the SSRF tests set the setting themselves."""
    settings.QUORUM_SYSTEM_ALLOWED_HOSTS = ["127.0.0.1"]


@pytest.fixture(autouse=True)
def _isolated_dirs(settings, tmp_path):
    settings.QUORUM_EXPORT_DIR = tmp_path / "exports"
    settings.QUORUM_IMPORT_DIR = tmp_path / "imports"
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def organizer(django_user_model):
    from quorum.roles import make_organizer

    user = django_user_model.objects.create_user("olga", password="organizer-pass-1")
    make_organizer(user)
    return user


@pytest.fixture
def organizer_api(organizer):
    """A DRF test client signed in as the organizer."""
    from rest_framework.test import APIClient

    client = APIClient()
    client.force_authenticate(organizer)
    return client


@pytest.fixture
def make_annotator(django_user_model):
    from quorum.roles import make_annotator as _make

    def factory(name):
        user = django_user_model.objects.create_user(name, password=f"{name}-pass-1")
        return user, _make(user)

    return factory


class BrokerDown(ConnectionError):
    pass


@pytest.fixture
def broker_down(monkeypatch):
    """Celery as in production (not eager), with every send refused as by a stopped Redis; the
    arguments of each refused send, in order."""
    from quorum import background

    sent = []

    def refuse(*args, **kwargs):
        sent.append(args)
        raise BrokerDown("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(background, "runs_inline", lambda: False)
    monkeypatch.setattr("celery.app.task.Task.delay", lambda self, *a, **k: refuse(*a))
    return sent


@pytest.fixture
def queued_by_name(monkeypatch):
    """(task name, *args) of each task queued through `quorum.background.queue_now`, not run."""
    from quorum import background

    queued = []
    monkeypatch.setattr(background, "queue_now", lambda name, *args, **kw: queued.append((name, *args)) or True)
    return queued
