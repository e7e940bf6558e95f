"""The embedded default's background worker (quorum/local_worker.py, issue 23 item 4): with
QUORUM_LOCAL_WORKER the web process no longer runs tasks inside the request but writes them to a
broker in files, and the worker process `make serve`/`make demo` start takes them from there;
without it (tests, development) tasks still run in-process, and a configured broker is kept.

Each case reads the settings in a fresh interpreter, as a server would at start."""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from quorum import local_worker

ROOT = Path(__file__).resolve().parent.parent

SHOW = """
import json, django
django.setup()
from django.conf import settings
from quorum.background import queue_now, runs_inline
queued = queue_now({task!r}) if {task!r} else None
print(json.dumps({{"broker": settings.CELERY_BROKER_URL, "inline": runs_inline(), "options": settings.CELERY_BROKER_TRANSPORT_OPTIONS, "queued": queued}}))
"""


def settings_in(tmp_path, task="", **env):
    shown, environment, _console = settings_and_console_in(tmp_path, task, **env)
    return shown, environment


def settings_and_console_in(tmp_path, task="", **env):
    """What settings_in shows, and what the process wrote to its console (stderr) besides."""
    environment = {k: v for k, v in os.environ.items() if k not in ("CELERY_BROKER_URL", "QUORUM_LOCAL_WORKER", "QUORUM_TASKS_INLINE")}
    environment.update({"DJANGO_SETTINGS_MODULE": "quorum.settings", "QUORUM_ENV": "development", "QUORUM_VAR_DIR": str(tmp_path), **env})
    done = subprocess.run([sys.executable, "-c", SHOW.format(task=task)], cwd=ROOT, env=environment, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1]), environment, done.stderr


def messages_in(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.msg")) if folder.exists() else []


def test_development_without_the_flag_still_runs_tasks_in_process(tmp_path):
    shown, _ = settings_in(tmp_path)
    assert shown["inline"] is True and shown["options"] == {}
    assert not (tmp_path / "broker").exists()


def test_a_configured_broker_is_kept_and_tasks_go_to_it(tmp_path):
    shown, _ = settings_in(tmp_path, QUORUM_LOCAL_WORKER="true", CELERY_BROKER_URL="redis://127.0.0.1:6399/0")
    assert shown["broker"] == "redis://127.0.0.1:6399/0" and shown["inline"] is False and shown["options"] == {}


def test_the_flag_queues_work_in_files_and_the_worker_takes_it(tmp_path):
    shown, environment, console = settings_and_console_in(tmp_path, task="celery.backend_cleanup", QUORUM_LOCAL_WORKER="true")
    queue = tmp_path / "broker" / "queue"
    assert shown["broker"].startswith("filesystem://") and shown["inline"] is False and shown["queued"] is True
    assert "No hostname was supplied" not in console  # kombu's warning on a broker URL without a host
    assert shown["options"]["data_folder_in"] == shown["options"]["data_folder_out"] == str(queue)
    [message] = messages_in(queue)  # the request only wrote this file; nothing ran
    assert json.loads(message.read_text())["headers"]["task"] == "celery.backend_cleanup"

    worker = subprocess.Popen(local_worker.command(tmp_path), cwd=ROOT, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120  # a bound on waiting, not a speed requirement
        while messages_in(queue) and time.monotonic() < deadline and worker.poll() is None:
            time.sleep(0.5)
        assert messages_in(queue) == [], (tmp_path / "worker.log").read_text() if (tmp_path / "worker.log").exists() else "no log"
        assert "Task celery.backend_cleanup" in (tmp_path / "worker.log").read_text()
    finally:
        local_worker.stop(worker)


def test_inline_runs_tasks_here_for_its_duration_only(settings):
    from quorum.background import runs_inline
    from quorum.celery import app

    app.conf.task_always_eager = False
    try:
        with local_worker.inline():
            assert runs_inline()
        assert not runs_inline()
    finally:
        app.conf.task_always_eager = settings.CELERY_TASK_ALWAYS_EAGER


def test_the_worker_beside_the_served_demo_writes_to_its_log_not_the_console(tmp_path, monkeypatch, capfd):
    """`manage.py demo` prints "its log: var/worker.log": the banner and warnings go there too."""
    for name in ("CELERY_BROKER_URL", "QUORUM_TASKS_INLINE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("QUORUM_ENV", "development")
    monkeypatch.setenv("QUORUM_VAR_DIR", str(tmp_path))
    log = tmp_path / local_worker.LOG_NAME
    worker = local_worker.start(tmp_path)
    try:
        deadline = time.monotonic() + 120  # a bound on waiting, not a speed requirement
        while " ready." not in (log.read_text() if log.exists() else "") and time.monotonic() < deadline and worker.poll() is None:
            time.sleep(0.5)
    finally:
        local_worker.stop(worker)
    console = capfd.readouterr()
    assert " ready." in log.read_text() and "[config]" in log.read_text()  # Celery's banner
    assert console.out == "" and console.err == "", console
