"""Helpers shared by the benchmarks: isolated Django environments in subprocesses, peak memory."""
import json
import os
import resource
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "perf" / "results"


def peak_rss_mb() -> float:
    """Peak resident set size of this process, in MB (Linux reports ru_maxrss in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_json_subprocess(module: str, args: list[str], env_extra: dict[str, str]) -> dict:
    """Run `python -m module args` in a fresh interpreter; it prints one JSON object as its last line."""
    env = {**os.environ, "QUORUM_ENV": "test", **env_extra}
    proc = subprocess.run(
        [sys.executable, "-m", module, *args], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise RuntimeError(f"{module} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


PG = os.environ.get("QUORUM_BENCH_PG", "postgres://postgres@127.0.0.1:5432")


def free_port() -> int:
    """A port the OS picks on 127.0.0.1, for a server a benchmark starts."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until_serving(base: str, tries: int = 150) -> None:
    """Wait (up to tries x 0.2 s) until the server at `base` answers its login page."""
    import time

    import requests

    for _ in range(tries):
        try:
            requests.get(base + "/accounts/login/", timeout=1)
            return
        except requests.RequestException:
            time.sleep(0.2)


def server_env(db_name: str) -> dict:
    """The environment of a benchmark's gunicorn and set-up processes: perf settings on PostgreSQL database `db_name`."""
    return {
        **os.environ, "QUORUM_ENV": "test", "DJANGO_SETTINGS_MODULE": "perf.settings",
        "DATABASE_URL": f"{PG}/{db_name}?conn_max_age=600", "ALLOWED_HOSTS": "127.0.0.1,localhost", "LOG_LEVEL": "WARNING",
        "QUORUM_SYSTEM_ALLOWED_HOSTS": "127.0.0.1",  # bench_chat's systems run on this machine
    }


def fresh_database(db_name: str) -> None:
    """Drop and create PostgreSQL database `db_name` (a benchmark's own name keeps parallel runs apart)."""
    import psycopg

    with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {db_name} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {db_name}")


def save(name: str, figures: dict) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(figures, indent=2, sort_keys=True))
    return path


def median_render(client, url: str, renders: int, must_contain: bytes = b"") -> tuple[float, int]:
    """(median seconds, queries of the last render) of `renders` GETs of `url` by a Django test
    client, after one to warm up; each answer must be a 200 holding `must_contain`."""
    import statistics
    import time

    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    assert client.get(url).status_code == 200  # warm
    times = []
    for _ in range(renders):
        started = time.perf_counter()
        with CaptureQueriesContext(connection) as queries:
            response = client.get(url)
        times.append(time.perf_counter() - started)
        assert response.status_code == 200 and must_contain in response.content
    return statistics.median(times), len(queries)
