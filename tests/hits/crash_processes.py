"""The Quorum processes of the crash tests, forked from a server that has Django set up.

Each step of `tests/hits/crash_scenario.py` runs in a process of its own, so that a test can
SIGKILL it midway and the next step starts from what the database holds. Started as
`python -m tests.hits.crash_scenario`, most of a step's time went to starting Python, importing
SciPy, pandas, Celery and boto3, and setting Django up, once per step (about six steps per test).
Here none of that is repeated per step:

- multiprocessing's "forkserver" start method (standard library) gives one server process per test
  process that imports those libraries once (`tests.fresh_python.PRELOAD`, none of which reads Django's settings);
- from it, a step server (`_StepServer`) is forked per environment, that is per test (the
  environment names the test's database and fakes): it takes that environment and sets Django up,
  which imports Quorum's apps, and opens no database connection;
- every step is a new process forked from the step server, which runs the step and reports how it
  ended. A step is still a separate process with its own connections, killed with SIGKILL.
"""
import os
import signal
import sys
import traceback
from pathlib import Path

from tests.fresh_python import exit_status, forkserver_context

ROOT = Path(__file__).resolve().parents[2]

# --- in the step server and its steps ----------------------------------------------------------------


def _serve(env, conn):
    """The step server: the environment and Django once, then a forked process per step asked for,
    answering ("started", pid) and then ("ended", exit code as multiprocessing gives it)."""
    os.environ.clear()
    os.environ.update(env)
    os.chdir(ROOT)
    try:
        from tests.hits.crash_scenario import setup_django

        setup_django()
    except BaseException:
        conn.send(("failed", traceback.format_exc()))
        return
    while True:
        try:
            argv, stdout_path, stderr_path = conn.recv()
        except EOFError:  # the test process is done with this environment
            return
        pid = os.fork()
        if pid == 0:
            conn.close()
            os._exit(_run_step_here(argv, stdout_path, stderr_path))
        conn.send(("started", pid))
        _, status = os.waitpid(pid, 0)
        conn.send(("ended", os.waitstatus_to_exitcode(status)))


def _run_step_here(argv, stdout_path, stderr_path) -> int:
    """In the forked step: its output files, the step, and its exit code."""
    for fd, path in ((1, stdout_path), (2, stderr_path)):
        target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(target, fd)
        os.close(target)
    code = 0
    try:
        from tests.hits.crash_scenario import main

        main(argv)
    except SystemExit as exc:
        code = exit_status(exc)
    except BaseException:
        traceback.print_exc()
        code = 1
    # A forked process ends with os._exit, which closes no database connection and flushes no
    # output: both are done as the end of a Python process does, or SQLite leaves the step's
    # writes in its write-ahead log.
    from django.db import connections

    connections.close_all()
    sys.stdout.flush()
    sys.stderr.flush()
    return code


# --- in the test process -----------------------------------------------------------------------------


class _StepServer:
    def __init__(self, env):
        self.env = dict(env)
        self.conn, theirs = forkserver_context().Pipe()
        # Daemonic: ended with the test process, which never waits for it.
        self.process = forkserver_context().Process(target=_serve, args=(self.env, theirs), daemon=True)
        self.process.start()
        theirs.close()
        self.step = None

    def receive(self, expected):
        kind, value = self.conn.recv()
        if kind == "failed":
            raise AssertionError(f"the step server could not set Django up: {value}")
        assert kind == expected, (kind, value)
        return value

    def close(self):
        if self.step is not None and self.step.wait(0) is None:
            self.step.kill()
            self.step.wait()
        self.conn.close()
        self.process.join(10)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()


_server: _StepServer | None = None


def _server_for(env) -> _StepServer:
    """The step server of `env`: the one of the previous step when the environment is the same
    (the steps of one test), else a new one, the previous one ended."""
    global _server
    if _server is not None and (_server.env != env or not _server.process.is_alive()):
        _server.close()
        _server = None
    if _server is None:
        _server = _StepServer(env)
    return _server


class Step:
    """One step running in its own process: `alive()`, `kill()` (SIGKILL), `wait()`, and what it printed."""

    def __init__(self, env, argv, folder):
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        name = f"{argv[0]}-{os.urandom(4).hex()}"
        self.stdout_path, self.stderr_path = folder / f"{name}.out", folder / f"{name}.err"
        self.server = _server_for(dict(env))
        if self.server.step is not None:  # a step a failed test left running
            self.server.step.kill()
            self.server.step.wait()
        self.server.conn.send((list(argv), str(self.stdout_path), str(self.stderr_path)))
        self.pid = self.server.receive("started")
        self.exitcode = None
        self.server.step = self

    def alive(self):
        return self.wait(0) is None

    def kill(self):
        if self.alive():
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:  # ended meanwhile
                pass

    def wait(self, timeout=None):
        """The exit code (negative: the signal that ended it); None if the step is still running after `timeout` seconds."""
        if self.exitcode is None and self.server.conn.poll(timeout):
            self.exitcode = self.server.receive("ended")
            self.server.step = None
        return self.exitcode

    @property
    def stdout(self):
        return self.stdout_path.read_text(errors="replace") if self.stdout_path.exists() else ""

    @property
    def stderr(self):
        return self.stderr_path.read_text(errors="replace") if self.stderr_path.exists() else ""


def run_step(env, argv, folder, timeout=240):
    """Run a step to its end; its standard output. Fails the test with the step's error output."""
    step = Step(env, argv, folder)
    code = step.wait(timeout)
    if code is None:
        step.kill()
        step.wait()
        raise AssertionError(f"step {' '.join(argv)} still running after {timeout} s: {step.stderr[-3000:]}")
    assert code == 0, step.stderr[-3000:]
    return step.stdout
