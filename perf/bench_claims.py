"""Benchmark (b) of the foundation issue: claim-and-submit throughput over HTTP.

32 concurrent clients (4 processes x 8 threads, so the client is not the bottleneck of one GIL)
against gunicorn and PostgreSQL. One cycle is what an annotator does per item: post the four
rewrites (validated, stored, the item's completion decided under row locks) and follow the
redirect to the next claimed item's page. Baseline: the same clients calling a bare Django view
that does one SELECT and one INSERT, on the same server. Target: at least half the baseline's
rate, zero errors; p50/p99 latency reported.
"""
import json
import multiprocessing
import os
import random
import subprocess
import sys
import time
from contextlib import nullcontext
from pathlib import Path
from urllib.parse import urljoin

from .common import ROOT, free_port, fresh_database, save, server_env, wait_until_serving
from .cpu import CpuSampler
from .memory import server_memory

CLIENT_PROCESSES, THREADS_PER_PROCESS = 4, 8
CLIENTS = CLIENT_PROCESSES * THREADS_PER_PROCESS
DURATION = float(os.environ.get("QUORUM_BENCH_SECONDS", "15"))
DB_NAME = os.environ.get("QUORUM_BENCH_CLAIMS_DB", "quorum_bench_claims")  # another name keeps parallel runs apart




def _prepare(db_name=DB_NAME):
    """A fresh database with a live job of 20,000 items and 32 annotators."""
    fresh_database(db_name)
    code = r"""
import django, json, sys
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
from django.db import connection
from django.contrib.auth import get_user_model
from annotation.demo.corpus import generate_corpus
from quorum.roles import make_annotator
from annotation.services.imports import import_corpus
from annotation.services.jobs import create_job, launch_job
from pathlib import Path
import tempfile
with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
    json.dump(generate_corpus(5000, seed=3, follow_ups=1), f)
corpus = import_corpus(name="bench", source_format="multiwoz", files={"data": Path(f.name)})
job = launch_job(create_job(corpus=corpus, name="bench", redundancy=1, claim_timeout_minutes=60))
User = get_user_model()
for i in range(%d):
    u = User.objects.create_user(f"bench{i}", password="bench-pass")
    make_annotator(u)
with connection.cursor() as c:
    c.execute("CREATE TABLE perf_baseline (id bigserial primary key, item_id bigint, body text)")
print(json.dumps({"job": job.pk, "items": job.items.count()}))
""" % CLIENTS  # noqa: UP031  (a code template with braces of its own)
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=server_env(db_name), capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def _client_process(args):
    """One client process: THREADS_PER_PROCESS threads, each looping until the deadline."""
    import threading

    import requests

    from annotation.demo.annotators import parse_task_page
    from annotation.demo.rewriter import careful_answers

    mode, base, job_id, first_user, duration = args
    results = []
    lock = threading.Lock()
    # The clock starts once every thread of this process has logged in and claimed: on a busy
    # machine starting the processes alone can take longer than a phase.
    ready = threading.Barrier(THREADS_PER_PROCESS)
    deadline = [0.0]

    def start():
        if ready.wait() == 0:
            deadline[0] = time.time() + duration
        ready.wait()
        return deadline[0]

    window = {}

    def run(user_index):
        session = requests.Session()
        latencies, errors, done_at = [], [], []
        rng = random.Random(user_index)
        try:
            if mode == "baseline":
                deadline = start()
                while time.time() < deadline:
                    t = time.perf_counter()
                    r = session.post(f"{base}/perf/baseline/", data="paraphrase=hello", timeout=30)
                    (latencies if r.status_code == 200 else errors).append(time.perf_counter() - t if r.status_code == 200 else r.status_code)
                    done_at.append(time.time())
            else:
                session.get(f"{base}/accounts/login/", timeout=30)
                csrf = session.cookies.get("csrftoken")
                session.post(f"{base}/accounts/login/", data={"username": f"bench{user_index}", "password": "bench-pass", "csrfmiddlewaretoken": csrf},
                             headers={"Referer": f"{base}/accounts/login/"}, timeout=30)
                csrf = session.cookies.get("csrftoken")
                page = session.post(f"{base}/jobs/{job_id}/next/", data={"csrfmiddlewaretoken": csrf}, headers={"Referer": base + "/"}, timeout=30)
                url = page.url
                deadline = start()
                # "one_request": what the page's script does (static/annotate.js): the submit is
                # answered with the next item's page, whose URL comes in X-Quorum-Location.
                headers = {"X-Quorum-Cycle": "page", "Accept": "text/html"} if mode == "one_request" else {}
                while time.time() < deadline and "/work/" in url:
                    task = parse_task_page(page.text)
                    answers = careful_answers(task.utterance, task.slot_values, rng)
                    t = time.perf_counter()
                    nxt = session.post(url, data={**answers, "active_seconds": "30"}, headers={"Referer": url, **headers}, timeout=30)
                    elapsed = time.perf_counter() - t
                    following = urljoin(nxt.url, nxt.headers.get("X-Quorum-Location", nxt.url))
                    if nxt.status_code == 200 and following != url and (mode != "one_request" or not nxt.history):
                        latencies.append(elapsed)
                        done_at.append(time.time())
                    else:
                        errors.append(f"{nxt.status_code} {parse_task_page(nxt.text).problems[:1]}")
                    page, url = nxt, following.split("#")[0]
        except Exception as exc:  # noqa: BLE001 - counted as an error
            ready.abort()  # the other threads stop waiting for this one
            errors.append(repr(exc))
        with lock:
            results.append((latencies, errors, done_at))

    threads = [threading.Thread(target=run, args=(first_user + i,)) for i in range(THREADS_PER_PROCESS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    window.update(start=deadline[0] - duration, end=deadline[0])
    return results, window


def _load(mode, base, job_id, duration=None, server=None):
    """Run the clients; with `server` (its gunicorn process and database name), also the CPU per
    cycle of the server and its PostgreSQL backends over the clients' measured window."""
    duration = duration or DURATION
    sampler = CpuSampler(server[0].pid, server[1]) if server else nullcontext()
    with sampler, multiprocessing.get_context("spawn").Pool(CLIENT_PROCESSES) as pool:
        ran = pool.map(_client_process, [(mode, base, job_id, p * THREADS_PER_PROCESS, duration) for p in range(CLIENT_PROCESSES)])
    chunks = [[(lat, errs) for lat, errs, _done in results] for results, _window in ran]
    elapsed = duration  # each process measured this long from its own start
    latencies = sorted(x for chunk in chunks for lat, _ in chunk for x in lat)
    errors = [e for chunk in chunks for _, errs in chunk for e in errs]
    def pct(q):
        return round(latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000, 1) if latencies else None
    figures = {"ops": len(latencies), "rate": len(latencies) / elapsed, "p50_ms": pct(0.50), "p99_ms": pct(0.99), "errors": len(errors), "error_examples": errors[:3]}
    if server and latencies:
        # While every client process is in its measured loop (each starts once its own clients
        # have logged in, and logins cost the server far more CPU than a cycle): the CPU of those
        # seconds over the requests or cycles finished in them.
        start, end = max(w["start"] for _r, w in ran), min(w["end"] for _r, w in ran)
        finished = sum(start <= t <= end for results, _w in ran for _l, _e, done in results for t in done)
        if finished:
            server_s, postgres_s = sampler.between(start, end)
            figures.update(server_cpu_ms=server_s * 1000 / finished, postgres_cpu_ms=postgres_s * 1000 / finished)
    return figures


def _merged(loads: list[dict]) -> dict:
    """Phases of one mode as one: cycles/s over their total time, the worst p50/p99, errors summed,
    CPU per cycle over all their cycles."""
    ops = sum(load["ops"] for load in loads)
    cpu = {
        key: round(sum(load[key] * load["ops"] for load in loads) / ops, 2)
        for key in ("server_cpu_ms", "postgres_cpu_ms") if ops and all(key in load for load in loads)
    }
    if cpu:
        cpu["cpu_ms_per_cycle"] = round(cpu["server_cpu_ms"] + cpu["postgres_cpu_ms"], 2)
    return {**cpu,
        "ops": ops, "rate": ops / (len(loads) * DURATION / 2),
        "p50_ms": max(load["p50_ms"] or 0 for load in loads), "p99_ms": max(load["p99_ms"] or 0 for load in loads),
        "errors": sum(load["errors"] for load in loads), "error_examples": [e for load in loads for e in load["error_examples"]][:3],
    }


INTEGRITY_CHECKS = {
    # Each a count that must be 0 after the loads.
    "responses_on_unsubmitted_slots": "SELECT count(*) FROM annotation_response r JOIN annotation_slot s ON s.id = r.slot_id "
    "WHERE s.state <> 'submitted'",
    "submitted_slots_without_response": "SELECT count(*) FROM annotation_slot s WHERE s.state = 'submitted' "
    "AND NOT EXISTS (SELECT 1 FROM annotation_response r WHERE r.slot_id = s.id)",
    "items_over_redundancy": "SELECT count(*) FROM (SELECT item_id, count(*) AS n FROM annotation_response GROUP BY item_id) x "
    "JOIN annotation_item i ON i.id = x.item_id JOIN annotation_job j ON j.id = i.job_id WHERE x.n > j.redundancy",
    "worker_twice_on_an_item": "SELECT count(*) FROM (SELECT item_id, worker_id FROM annotation_response "
    "GROUP BY item_id, worker_id HAVING count(*) > 1) x",
}


def integrity(db_name: str, acknowledged: int) -> dict:
    """What PostgreSQL holds after the loads: every fault count (0 when sound), the responses stored,
    and whether every acknowledged submission is among them (stored >= acknowledged: warm-ups add more)."""
    import psycopg

    from .common import PG

    with psycopg.connect(f"{PG}/{db_name}") as conn:
        faults = {name: conn.execute(sql).fetchone()[0] for name, sql in INTEGRITY_CHECKS.items()}
        stored = conn.execute("SELECT count(*) FROM annotation_response").fetchone()[0]
    return {"integrity_faults": sum(faults.values()), "integrity": faults, "responses_stored": stored,
            "acknowledged_all_stored": stored >= acknowledged}


def start_server(db_name, app="perf.wsgi_app:application"):
    """gunicorn as measured (4 sync workers, preloaded) on a port the OS picked; (process, base URL)."""
    port = free_port()
    gunicorn = Path(sys.executable).with_name("gunicorn")
    server = subprocess.Popen(
        [str(gunicorn), app, "--bind", f"127.0.0.1:{port}", "--workers", "4", "--preload", "--log-level", "warning"],
        cwd=ROOT, env=server_env(db_name),
    )
    base = f"http://127.0.0.1:{port}"
    wait_until_serving(base)
    return server, base


def run() -> dict:
    prepared = _prepare()
    server, base = start_server(DB_NAME)
    try:
        # Warm up both paths first: each gunicorn worker imports some modules on first use.
        _load("baseline", base, prepared["job"], duration=3)
        _load("claims", base, prepared["job"], duration=5)
        _load("one_request", base, prepared["job"], duration=3)
        baseline = _merged([_load("baseline", base, prepared["job"], server=(server, DB_NAME))])
        # The two cycles alternate in halves (A B A B), so drifting load on a shared machine falls
        # on both alike.
        halves = [
            (mode, _load(mode, base, prepared["job"], DURATION / 2, server=(server, DB_NAME)))
            for _ in range(2) for mode in ("claims", "one_request")
        ]
        ours = _merged([load for mode, load in halves if mode == "claims"])
        single = _merged([load for mode, load in halves if mode == "one_request"])
        memory = server_memory(server.pid)
        checked = integrity(DB_NAME, ours["ops"] + single["ops"])
    finally:
        server.terminate()
        server.wait(timeout=30)
    figures = {
        "clients": CLIENTS,
        "seconds_per_phase": DURATION,
        "server": "gunicorn, 4 sync workers, PostgreSQL",
        "baseline_rate_per_s": round(baseline["rate"], 1),
        "baseline_p50_ms": baseline["p50_ms"], "baseline_p99_ms": baseline["p99_ms"], "baseline_errors": baseline["errors"],
        # CPU per request or cycle: the server's processes and its PostgreSQL backends (perf/cpu.py),
        # over the clients' measured seconds; target for the one-request cycle at most 16 ms.
        "baseline_cpu_ms": baseline.get("cpu_ms_per_cycle"),
        "claim_submit_cpu_ms": ours.get("cpu_ms_per_cycle"),
        "one_request_cpu_ms": single.get("cpu_ms_per_cycle"),
        "one_request_server_cpu_ms": single.get("server_cpu_ms"), "one_request_postgres_cpu_ms": single.get("postgres_cpu_ms"),
        "one_request_cpu_ratio_to_baseline": round(baseline["cpu_ms_per_cycle"] / single["cpu_ms_per_cycle"], 3)
        if baseline.get("cpu_ms_per_cycle") and single.get("cpu_ms_per_cycle") else None,
        "target_one_request_cpu_ms": 16,
        "claim_submit_rate_per_s": round(ours["rate"], 1),
        "claim_submit_p50_ms": ours["p50_ms"], "claim_submit_p99_ms": ours["p99_ms"],
        "claim_submit_errors": ours["errors"], "error_examples": ours["error_examples"] + baseline["error_examples"],
        "ratio": round(ours["rate"] / baseline["rate"], 3) if baseline["rate"] else None,
        "target_ratio": 0.5,
        # The page script's cycle (issue 26): one request, the submit answered with the next page.
        "one_request_rate_per_s": round(single["rate"], 1),
        "one_request_p50_ms": single["p50_ms"], "one_request_p99_ms": single["p99_ms"],
        "one_request_errors": single["errors"], "one_request_error_examples": single["error_examples"],
        "one_request_ratio": round(single["rate"] / baseline["rate"], 3) if baseline["rate"] else None,
        "one_request_vs_two": round(single["rate"] / ours["rate"], 3) if ours["rate"] else None,
        "one_request_target_ratio": 0.25,
        # Proportional set size after the three loads (perf/memory.py): the master and each worker.
        **memory,
        **checked,
    }
    save("claims", figures)
    return figures
