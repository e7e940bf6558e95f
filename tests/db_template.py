"""A migrated PostgreSQL database kept as a template, so that test databases are copied, not migrated.

Every test process (each xdist worker of `make test`) needs its own test database. Migrating one from
empty runs every migration of every app, which took each worker most of a minute; PostgreSQL copies
a database with `CREATE DATABASE ... TEMPLATE` in about a second. Django's creation honours
`DATABASES[...]["TEST"]["TEMPLATE"]` and then runs migrate as usual, which finds nothing to apply.

The template is named after what decides its contents: the Django version and every migration file
of the project's apps (`quorum_tmpl_<hash>`). A process that finds it missing builds it under an
advisory lock (the other workers wait for it rather than build it too) by running `manage.py migrate`
against a building database, renamed into place once complete, so a template is never half made. An
earlier template of the same checkout is dropped then. Nothing here runs on SQLite.
"""
import hashlib
import os
import subprocess
import sys
from pathlib import Path

import django

ROOT = Path(__file__).resolve().parents[1]
APPS = ("annotation", "hits", "evaluation", "quorum")
PREFIX = "quorum_tmpl_"
LOCK_KEY = 7_262_026  # pg_advisory_lock's key for building templates; any constant the project owns


def template_name(root: Path = ROOT) -> str:
    digest = hashlib.sha256(django.get_version().encode())
    for app in APPS:
        for path in sorted((root / app).rglob("migrations/*.py")):
            digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return PREFIX + digest.hexdigest()[:16]


def _maintenance(db: dict):
    import psycopg

    return psycopg.connect(
        dbname="postgres", user=db.get("USER") or None, password=db.get("PASSWORD") or None,
        host=db.get("HOST") or None, port=db.get("PORT") or None, autocommit=True,
    )


def _exists(cursor, name: str) -> bool:
    cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name])
    return cursor.fetchone() is not None


def _url(db: dict, name: str) -> str:
    user = db.get("USER") or ""
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    at = "@" if user else ""
    return f"postgres://{user}{password}{at}{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}/{name}"


def ensure_template(db: dict) -> str:
    """The template's name, built first if missing. `db` is the DATABASES entry of the test run."""
    from psycopg import sql

    name = template_name()
    with _maintenance(db) as conn, conn.cursor() as cursor:
        if _exists(cursor, name):
            return name
        cursor.execute("SELECT pg_advisory_lock(%s)", [LOCK_KEY])
        try:
            if _exists(cursor, name):  # another process built it while this one waited
                return name
            building = f"{name}_building"
            cursor.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(building)))
            cursor.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(building)))
            env = {**os.environ, "DATABASE_URL": _url(db, building), "QUORUM_ENV": "test"}
            subprocess.run([sys.executable, "manage.py", "migrate", "-v0", "--noinput"], cwd=ROOT, env=env, check=True)
            cursor.execute(sql.SQL("ALTER DATABASE {} RENAME TO {}").format(sql.Identifier(building), sql.Identifier(name)))
            _drop_earlier(cursor, name)
        finally:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [LOCK_KEY])
    return name


def _drop_earlier(cursor, kept: str) -> None:
    """Earlier templates go; one another run is copying right now stays (PostgreSQL refuses)."""
    import psycopg
    from psycopg import sql

    cursor.execute("SELECT datname FROM pg_database WHERE datname LIKE %s AND datname <> %s", [PREFIX + "%", kept])
    for (old,) in cursor.fetchall():
        try:
            cursor.execute(sql.SQL("DROP DATABASE {}").format(sql.Identifier(old)))
        except psycopg.errors.ObjectInUse:
            pass
