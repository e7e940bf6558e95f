"""The embedded default's background worker: a real Celery worker process on a broker in files.

Without Redis, tasks used to run eagerly inside the request that queued them, so an export with
speech errors held its page for 100 s and the planner for 14 s. With QUORUM_LOCAL_WORKER=true
(`make serve`, `make demo`) settings point Celery at kombu's filesystem transport in
QUORUM_VAR_DIR/broker, and this module starts the worker that reads it: the same Celery worker
(with its beat, so the lost-work sweeps run) that PostgreSQL/Redis deployments run, only on a broker
that needs no service. A process rather than a thread in the web process: CPU-bound work (the
planner's simulations, speech synthesis) does not slow every page, a worker survives the
development server's reloads, and a crash of the work cannot take the web process with it.

`python -m quorum.local_worker` runs it in the foreground (scripts/serve.sh starts it beside
runserver); `start()` runs it as a child process (`manage.py demo`, once its scripted part is done).
Either way everything the worker writes goes to var/worker.log, its start-up banner and warnings
too, so the console beside it shows only the server's own lines.
"""
import contextlib
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from .celery import app

LOG_NAME = "worker.log"


def command(var_dir: Path) -> list[str]:
    """The worker's command line: one task at a time (`solo`: SQLite has one writer anyway), beat
    embedded (`-B`, its schedule file in var/), no broadcast chatter a single worker has no use for."""
    return [
        sys.executable, "-m", "celery", "-A", "quorum", "worker", "-B", "--pool=solo",
        "--without-mingle", "--without-gossip", "--loglevel=info",
        f"--schedule={var_dir / 'celerybeat-schedule'}", f"--logfile={var_dir / LOG_NAME}",
    ]


def environment() -> dict[str, str]:
    """This process's environment with the local broker asked for (the worker's settings then
    agree with the web process's on where the queue is)."""
    return {**os.environ, "QUORUM_LOCAL_WORKER": "true"}


def start(var_dir: Path) -> subprocess.Popen:
    """Start the worker as a child process writing all its output to var/worker.log."""
    with (var_dir / LOG_NAME).open("ab") as log:  # the child keeps its own copy of the file
        return subprocess.Popen(  # noqa: S603 - our own argv
            command(var_dir), env=environment(), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
        )


def stop(worker: subprocess.Popen) -> None:
    """Stop a worker `start` made (a warm shutdown: the task under way finishes first, up to 30 s)."""
    worker.terminate()
    try:
        worker.wait(timeout=30)
    except subprocess.TimeoutExpired:
        worker.kill()


@contextlib.contextmanager
def inline() -> Iterator[None]:
    """Run tasks in this process for the duration (the demo's scripted part reads each step's
    result before the next, as a test does), whatever the broker, without the worker's per-task log lines."""
    before = app.conf.task_always_eager
    app.conf.task_always_eager = True
    # The caller reports each step itself; a worker's "Task NAME[id] succeeded" lines would only
    # interleave its output (they stay on in a worker's own log, where nothing else reports).
    trace_log = logging.getLogger("celery.app.trace")
    trace_level = trace_log.level
    trace_log.setLevel(max(trace_log.getEffectiveLevel(), logging.WARNING))
    try:
        yield
    finally:
        app.conf.task_always_eager = before
        trace_log.setLevel(trace_level)


def main() -> None:
    import django
    from django.conf import settings

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "quorum.settings")
    os.environ["QUORUM_LOCAL_WORKER"] = "true"
    django.setup()
    var_dir = Path(settings.VAR_DIR)
    print(f"Background worker on the local broker in {var_dir / 'broker'}; its log: {var_dir / LOG_NAME}", flush=True)
    with (var_dir / LOG_NAME).open("ab") as log:  # the worker's output from here on: the log, not the console
        os.dup2(log.fileno(), sys.stdout.fileno())
        os.dup2(log.fileno(), sys.stderr.fileno())
    os.execve(sys.executable, command(var_dir), environment())  # noqa: S606 - replaces this process with the worker


if __name__ == "__main__":
    main()
