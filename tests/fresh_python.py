"""`python -c CODE` in a new process with its own environment, without paying Python's and the
third-party libraries' start-up each time.

The settings tests load Quorum's settings in a process of their own per case (settings are read
once per process, as gunicorn, `manage.py` and `celery` read them). Started as `sys.executable -c`,
most of a case's CPU went to importing Django, Celery, DRF and their dependencies. Here a process
forked from multiprocessing's forkserver (standard library; one per test process), which imported
those libraries once (`PRELOAD`, none of which reads Django's settings or Quorum's environment),
takes the case's environment and working folder and runs the code as `python -c` would: as
`__main__`, an uncaught exception printed as a traceback with exit status 1, `SystemExit` honoured.
Nothing of Quorum's own is imported before the case's environment is in place.

Not for tests about what a fresh process imports (tests/test_web_imports.py): this one has the
preloaded libraries.
"""
import multiprocessing
import os
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Third-party libraries that Quorum's settings and apps import; importing them reads no settings.
PRELOAD = [
    "numpy", "scipy.signal", "scipy.stats", "pandas", "celery", "kombu", "boto3", "requests",
    "django.db.models", "django.http", "django.urls", "rest_framework", "pytest",
]


def forkserver_context():
    """The forkserver start method with `PRELOAD` (one server per test process, shared with
    tests/hits/crash_processes.py)."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(PRELOAD)
    return context


def exit_status(exc: SystemExit) -> int:
    """The status Python exits with for `exc`; a message instead of a number is printed, as Python does."""
    if isinstance(exc.code, int):
        return exc.code
    if exc.code is not None:
        print(exc.code, file=sys.stderr)
        return 1
    return 0


def _run_here(code: str, env: dict, cwd: str, stdout_path: str, stderr_path: str):
    """In the forked process: the environment, the output files, then the code as `python -c`."""
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    sys.argv = ["-c"]
    if "" not in sys.path:
        sys.path.insert(0, "")  # `python -c` looks in the working folder first
    for fd, path in ((1, stdout_path), (2, stderr_path)):
        target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(target, fd)
        os.close(target)
    status = 0
    try:
        exec(compile(code, "<string>", "exec"), {"__name__": "__main__", "__builtins__": __builtins__})
    except SystemExit as exc:
        status = exit_status(exc)
    except BaseException:
        traceback.print_exc()
        status = 1
    sys.stdout.flush()
    sys.stderr.flush()
    # multiprocessing would run its own exit handling and report an exception its way: end here.
    os._exit(status)


def run(code: str, env: dict, cwd=ROOT, timeout: float = 120) -> subprocess.CompletedProcess:
    """What `subprocess.run([sys.executable, "-c", code], env=env, cwd=cwd, capture_output=True,
    text=True)` gives: return code, standard output and error as text."""
    with tempfile.TemporaryDirectory(prefix="fresh-python-") as folder:
        out, err = os.path.join(folder, "out"), os.path.join(folder, "err")
        process = forkserver_context().Process(target=_run_here, args=(code, dict(env), str(cwd), out, err), daemon=True)
        process.start()
        process.join(timeout)
        if process.is_alive():
            process.kill()
            process.join()
            raise subprocess.TimeoutExpired(["python", "-c", code], timeout)
        stdout, stderr = (Path(path).read_text(errors="replace") if os.path.exists(path) else "" for path in (out, err))
    return subprocess.CompletedProcess(["python", "-c", code], process.exitcode, stdout, stderr)
