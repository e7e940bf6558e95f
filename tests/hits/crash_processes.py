"""The Quorum processes of the crash tests, forked from one server that has the libraries loaded.

Each step of `tests/hits/crash_scenario.py` runs in a process of its own, so that a test can
SIGKILL it midway and the next step starts from what the database holds. Started as
`python -m tests.hits.crash_scenario`, most of a step's time went to starting Python and
importing SciPy, pandas, Celery and boto3, once per step (about six steps per test). Here they
come from multiprocessing's "forkserver" start method (standard library): one server process per
test process imports those libraries once (`PRELOAD`, none of which reads Django's settings), and
every step is a new process forked from it that takes the step's own environment, then sets Django
up against the step's database and runs the step. A step is still a separate process with its own
connections, killed with SIGKILL.
"""
import multiprocessing
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Third-party libraries Quorum's apps import, loaded before any settings exist. Nothing of Quorum's
# own is here: its modules read the settings, which differ per step (DATABASE_URL above all).
PRELOAD = [
    "numpy", "scipy.signal", "scipy.stats", "pandas", "celery", "kombu", "boto3", "requests",
    "django.db.models", "django.http", "django.urls", "rest_framework", "pytest",
]


def _context():
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(PRELOAD)
    return context


def _step(env, argv, stdout_path, stderr_path):
    """In the forked process: the step's environment and output files, then the step itself."""
    os.environ.clear()
    os.environ.update(env)
    os.chdir(ROOT)
    for fd, path in ((1, stdout_path), (2, stderr_path)):
        target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(target, fd)
        os.close(target)
    from tests.hits.crash_scenario import main

    main(argv)
    # A forked process ends with os._exit, which closes no database connection: close them as the
    # end of a Python process does, or SQLite leaves the step's writes in its write-ahead log.
    from django.db import connections

    connections.close_all()


class Step:
    """One step running in its own process: `alive()`, `kill()` (SIGKILL), `wait()`, and what it printed."""

    def __init__(self, env, argv, folder):
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        name = f"{argv[0]}-{os.urandom(4).hex()}"
        self.stdout_path, self.stderr_path = folder / f"{name}.out", folder / f"{name}.err"
        self.process = _context().Process(target=_step, args=(dict(env), list(argv), str(self.stdout_path), str(self.stderr_path)))
        self.process.start()

    def alive(self):
        return self.process.is_alive()

    def kill(self):
        self.process.kill()

    def wait(self, timeout=None):
        """The exit code; None if the step is still running after `timeout` seconds."""
        self.process.join(timeout)
        return self.process.exitcode

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
