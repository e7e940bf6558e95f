"""The measuring side of perf/bench_cycle.py, run in its own interpreter with the perf settings:
`python -m perf.cycle_worker JOB_ID CYCLES [USERNAME]` prints one JSON object (with
QUORUM_BENCH_TWO_REQUESTS=1, the cycle without the page script: submit, redirect, next page; with
QUORUM_BENCH_STATEMENTS=1, a second run of as many cycles after the measured one gives the PostgreSQL
CPU of each kind of statement, `postgres_by_statement`). Each run
needs an annotator with no work done yet in the job: a worker's own history makes the claim and
the page read slower as it grows, which would be measured too.

Requests go straight to the WSGI application (as gunicorn calls it), not through Django's test
client, whose template-rendered signal copies every context and would be measured too.
"""
import cProfile
import io
import json
import os
import random
import sys
import time
from urllib.parse import urlsplit

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "perf.settings")
django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402

from annotation.demo.annotators import parse_task_page  # noqa: E402
from annotation.demo.rewriter import careful_answers  # noqa: E402
from perf.wsgi_app import application  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def _backend_cpu(pid: int) -> float:
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def _environ(method: str, url: str, cookie: str, body: bytes = b"", headers=None) -> dict:
    parts = urlsplit(url)
    environ = {
        "REQUEST_METHOD": method, "PATH_INFO": parts.path, "QUERY_STRING": parts.query, "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "80", "SERVER_PROTOCOL": "HTTP/1.1", "HTTP_HOST": "127.0.0.1", "HTTP_COOKIE": cookie,
        "wsgi.input": io.BytesIO(body), "wsgi.url_scheme": "http", "wsgi.errors": sys.stderr,
        "wsgi.multithread": False, "wsgi.multiprocess": True, "wsgi.run_once": False, "wsgi.version": (1, 0),
        "CONTENT_LENGTH": str(len(body)), "CONTENT_TYPE": "application/x-www-form-urlencoded",
    }
    environ.update(headers or {})
    return environ


def _call(environ: dict) -> tuple[str, dict, bytes]:
    answer = {}

    def start_response(status, headers, exc_info=None):
        answer["status"], answer["headers"] = status, dict(headers)

    chunks = application(environ, start_response)
    try:
        body = b"".join(chunks)
    finally:
        if hasattr(chunks, "close"):
            chunks.close()  # request_finished: what gunicorn's close of the response sets off
    return answer["status"], answer["headers"], body


def _wal_position() -> int:
    """Bytes of write-ahead log the cluster has written: what every write of a cycle costs the
    disk and any replica. Cluster-wide, so other writers on the same server add to it."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_current_wal_insert_lsn() - '0/0'::pg_lsn")
        return int(cursor.fetchone()[0])


class _Counted:
    """Queries sent while measured (connection.execute_wrapper); with `backend`, also the PostgreSQL
    backend's CPU each statement took, by the statement's first words (`/proc/<pid>/schedstat`, in
    nanoseconds: the tick of /proc/<pid>/stat is too coarse for one statement). Reading it costs this
    process time, so it is asked for on its own (QUORUM_BENCH_STATEMENTS=1), not in the measured run."""

    def __init__(self, backend: int | None = None):
        self.n = 0
        self.backend = backend
        self.by_statement: dict[str, list[int]] = {}

    def _run_ns(self) -> int:
        return int(open(f"/proc/{self.backend}/schedstat").read().split()[0])

    def __call__(self, execute, sql, params, many, context):
        self.n += 1
        if self.backend is None:
            return execute(sql, params, many, context)
        started = self._run_ns()
        try:
            return execute(sql, params, many, context)
        finally:
            spent = self.by_statement.setdefault(" ".join(sql.split()[:8]), [0, 0])
            spent[0] += self._run_ns() - started
            spent[1] += 1


def _postgres_by_statement(cycles_of, cycles: int, backend: int) -> list[dict]:
    """A further `cycles` cycles, each statement's PostgreSQL CPU timed (`_Counted`)."""
    timed = _Counted(backend)
    with connection.execute_wrapper(timed):
        cycles_of(cycles, measured=False)
    return [  # a list, dearest first: the saved JSON sorts an object's keys
        {"statement": words, "postgres_ms_per_cycle": round(ns / cycles / 1e6, 3), "per_cycle": round(n / cycles, 2)}
        for words, (ns, n) in sorted(timed.by_statement.items(), key=lambda item: -item[1][0])
    ]


def main(job_id: int, cycles: int, username: str = "bench0", two_requests: bool = False) -> dict:
    from urllib.parse import urlencode

    user = get_user_model().objects.get(username=username)
    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(user)
    cookie = "; ".join(f"{k}={v.value}" for k, v in client.cookies.items())
    claimed = client.post(f"/jobs/{job_id}/next/")
    url = claimed["Location"]
    _status, _headers, page = _call(_environ("GET", url, cookie))
    rng = random.Random(0)
    counted = _Counted()
    # The page script's cycle is one request; without it (no script, or the peers' harness) the
    # submit redirects and the browser asks for the next page: two.
    headers = {} if two_requests else {"HTTP_X_QUORUM_CYCLE": "page", "HTTP_ACCEPT": "text/html"}
    profile = cProfile.Profile(time.process_time) if os.environ.get("QUORUM_BENCH_PROFILE") else None

    def cycles_of(n, measured):
        nonlocal url, page
        spent = 0.0
        for _ in range(n):
            task = parse_task_page(page.decode())
            body = urlencode({**careful_answers(task.utterance, task.slot_values, rng), "active_seconds": "30"}).encode()
            environ = _environ("POST", url, cookie, body, headers)
            t = time.process_time()
            if measured and profile:
                profile.enable()
            status, answer_headers, page = _call(environ)
            if two_requests and status.startswith("302"):
                url = answer_headers["Location"]
                status, answer_headers, page = _call(_environ("GET", url, cookie))
                answer_headers["X-Quorum-Location"] = url
            if measured and profile:
                profile.disable()
            spent += time.process_time() - t
            if not status.startswith("200") or "X-Quorum-Location" not in answer_headers:
                raise RuntimeError(f"cycle answered {status}: {page[:500]!r}")
            url = answer_headers["X-Quorum-Location"]
        return spent

    def baseline_of(n):
        spent = 0.0
        for _ in range(n):
            environ = _environ("POST", "/perf/baseline/", "", b"paraphrase=hello")
            t = time.process_time()
            status, _h, _b = _call(environ)
            spent += time.process_time() - t
            if not status.startswith("200"):
                raise RuntimeError(f"baseline answered {status}")
        return spent

    cycles_of(20, measured=False)  # warm-up: templates, URL resolvers, per-process caches
    baseline_of(20)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        backend = cursor.fetchone()[0]
    wal0 = _wal_position()
    with connection.execute_wrapper(counted):
        pg0 = _backend_cpu(backend)
        python_s = cycles_of(cycles, measured=True)
        pg_s = _backend_cpu(backend) - pg0
        queries = counted.n
        wal_bytes = _wal_position() - wal0
        counted.n = 0
        pg0 = _backend_cpu(backend)
        base_python_s = baseline_of(cycles)
        base_pg_s = _backend_cpu(backend) - pg0
        base_queries = counted.n
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        if cursor.fetchone()[0] != backend:
            raise RuntimeError("the connection was replaced while measuring: PostgreSQL CPU not attributable")
    if profile:
        profile.dump_stats(os.environ["QUORUM_BENCH_PROFILE"])
    by_statement = _postgres_by_statement(cycles_of, cycles, backend) if os.environ.get("QUORUM_BENCH_STATEMENTS") == "1" else []
    cycle_ms = (python_s + pg_s) / cycles * 1000
    base_ms = (base_python_s + base_pg_s) / cycles * 1000
    return {
        "cycles": cycles,
        "cycle_cpu_ms": round(cycle_ms, 2), "cycle_python_ms": round(python_s / cycles * 1000, 2),
        "cycle_postgres_ms": round(pg_s / cycles * 1000, 2), "cycle_queries": round(queries / cycles, 2),
        "cycle_wal_bytes": round(wal_bytes / cycles),
        "baseline_cpu_ms": round(base_ms, 2), "baseline_python_ms": round(base_python_s / cycles * 1000, 2),
        "baseline_postgres_ms": round(base_pg_s / cycles * 1000, 2), "baseline_queries": round(base_queries / cycles, 2),
        "ratio_to_baseline": round(base_ms / cycle_ms, 3),
        "target_cycle_cpu_ms": 16, "target_ratio": 0.25,
        **({"postgres_by_statement": by_statement} if by_statement else {}),
    }


if __name__ == "__main__":
    print(json.dumps(main(int(sys.argv[1]), int(sys.argv[2]), *sys.argv[3:4], two_requests=os.environ.get("QUORUM_BENCH_TWO_REQUESTS") == "1")))
