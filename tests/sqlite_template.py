"""A migrated SQLite file kept as a template, so that tests running Quorum in processes of its own on
SQLite (the demo's, the crash tests') copy it instead of migrating.

Migrating an empty SQLite file runs every migration of every app, table rebuilds included: 40 to 70
seconds of a loaded two-core machine, and the demo tests and the crash tests each did it once per
run, on different workers. The file is named after what decides its contents, like the PostgreSQL
template of `tests/db_template.py`: the Django version, every migration file, and `quorum/roles.py`
(its post_migrate receiver writes the organizers' group). It lives under the checkout's ignored
`var/`, outside any one worker's folders, so the workers of a run and later runs share it; the first
process to need it builds it under a file lock (the others wait rather than build it too), into a
temporary name renamed into place once complete, so a template is never half made. Earlier
templates are removed then.
"""
import fcntl
import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

from tests.db_template import ROOT, template_name

FOLDER = ROOT / "var" / "test-templates"
PREFIX = "sqlite_tmpl_"


def _name() -> str:
    digest = hashlib.sha256(template_name().encode() + (ROOT / "quorum" / "roles.py").read_bytes()).hexdigest()[:16]
    return f"{PREFIX}{digest}.sqlite3"


def migrated_sqlite() -> Path:
    """The template's path, built first if missing (by `manage.py migrate` with the project's test
    settings, as the demo and the crash tests' processes have them)."""
    FOLDER.mkdir(parents=True, exist_ok=True)
    path = FOLDER / _name()
    if path.exists():
        return path
    with open(FOLDER / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if path.exists():  # another process built it while this one waited
            return path
        building = path.with_name(f"{path.name}.building-{os.getpid()}")
        run_env = {k: v for k, v in os.environ.items() if k not in ("DJANGO_SETTINGS_MODULE", "CELERY_BROKER_URL")}
        run_env.update(QUORUM_ENV="test", DATABASE_URL=f"sqlite:///{building}")
        subprocess.run([sys.executable, "manage.py", "migrate", "-v0", "--noinput"], cwd=ROOT, env=run_env, check=True)
        # One self-contained file: whatever the write-ahead log still holds goes into it.
        conn = sqlite3.connect(building)
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.close()
        for suffix in ("-wal", "-shm"):
            Path(f"{building}{suffix}").unlink(missing_ok=True)
        os.replace(building, path)
        for old in FOLDER.glob(f"{PREFIX}*"):
            if old != path:
                old.unlink(missing_ok=True)
    return path


def copy_migrated_sqlite(target: Path) -> Path:
    """A freshly migrated SQLite database at `target`, copied from the template."""
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(migrated_sqlite(), target)
    return target
