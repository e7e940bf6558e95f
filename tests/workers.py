"""What each test process gets of its own, so the suite can run on every core at once.

`make test` runs the suite in parallel with pytest-xdist: worker processes gw0, gw1, ... each take
a share of the tests. pytest-django already gives each worker its own test database
(`test_<name>_gw0`, ...), and pytest its own `tmp_path` folders. The rest is set here, once per
process, by `tests/conftest.py`:

- a Redis database of its own (`redis_url_for_worker`): the Celery test flushes its broker's
  database and the gunicorn test caches in it, so two workers must never share one;
- a temporary folder of its own for everything that asks the system for one (`tempfile`, and the
  `TMPDIR` its subprocesses inherit): unpacked uploads, the speech recognizer's model cache, and
  tests that look for what was left behind in the temporary folder would otherwise see another
  worker's (or another checkout's) files;
- a `QUORUM_VAR_DIR` of its own inside it, for the settings' var folder (static files, the demo's
  work folder) and for the Quorum processes tests start (Celery, gunicorn).

Live servers (pytest-django's, the fake providers', the hostile systems', gunicorn) listen on
ephemeral ports, and the concurrency tests' extra connections open the worker's own test database,
so neither needs more than the above.
"""
import os
import re
from urllib.parse import urlsplit, urlunsplit

WORKER_DBS_VARIABLE = "QUORUM_TEST_REDIS_WORKER_DBS"


def worker_number(worker_id):
    """0 for xdist's `gw0`, 1 for `gw1`, ...; None in a run without workers."""
    found = re.fullmatch(r"gw(\d+)", worker_id or "")
    return int(found.group(1)) if found else None


def redis_url_for_worker(url, number, worker_dbs=""):
    """The Redis URL worker `number` uses: database `worker_dbs[number]` when the comma-separated
    list is given (QUORUM_TEST_REDIS_WORKER_DBS, e.g. "9,10,11,12"), else the base URL's database
    plus `number`. Raises ValueError, naming the variable, when the list is too short or not numbers."""
    parts = urlsplit(url)
    if worker_dbs.strip():
        try:
            dbs = [int(db) for db in worker_dbs.split(",")]
        except ValueError:
            raise ValueError(f"{WORKER_DBS_VARIABLE}={worker_dbs!r} must be Redis database numbers separated by commas") from None
        if number >= len(dbs):
            raise ValueError(
                f"{WORKER_DBS_VARIABLE}={worker_dbs!r} names {len(dbs)} Redis databases but worker gw{number} needs one: "
                "name one per worker, or run fewer workers (-n)"
            )
        db = dbs[number]
    else:
        base = parts.path.strip("/") or "0"
        if not base.isdigit():
            raise ValueError(f"QUORUM_TEST_REDIS_URL={url!r} must end in a database number, e.g. redis://127.0.0.1:6379/8")
        db = int(base) + number
    return urlunsplit(parts._replace(path=f"/{db}"))


def isolate_process(worker_id, folder):
    """Point this process's temporary folder, var folder and Redis database at its own.
    `folder` is a fresh folder for this process; returns what was set, for the run's header."""
    import tempfile

    folder = str(folder)
    os.environ["TMPDIR"] = folder
    tempfile.tempdir = folder
    var_dir = os.path.join(folder, "var")
    os.makedirs(var_dir, exist_ok=True)
    os.environ["QUORUM_VAR_DIR"] = var_dir
    number = worker_number(worker_id)
    url = os.environ.get("QUORUM_TEST_REDIS_URL")
    if url and number is not None:
        os.environ["QUORUM_TEST_REDIS_URL"] = redis_url_for_worker(url, number, os.environ.get(WORKER_DBS_VARIABLE, ""))
    return {"tmp": folder, "var": var_dir, "redis": os.environ.get("QUORUM_TEST_REDIS_URL")}
