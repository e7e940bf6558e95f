"""Memory of the web server after an annotation run (issue 26, item 2): the proportional set size
(PSS, perf/memory.py) of gunicorn's master and 4 sync workers, preloaded, after 32 simulated
annotators have done the page script's one-request cycle for QUORUM_BENCH_SECONDS.

Baseline in the same run: the same server and load with the modules every worker carried before
(perf/wsgi_heavy.py: numpy, pandas, scipy, matplotlib, boto3 imported up front). Target: the four
workers' PSS together at most 400 MB.
"""
import os

from .bench_claims import _load, _prepare, start_server
from .common import save
from .memory import server_memory

DB_NAME = os.environ.get("QUORUM_BENCH_MEMORY_DB", "quorum_bench_memory")


def _measure(app: str, job_id: int) -> dict:
    server, base = start_server(DB_NAME, app)
    try:
        _load("one_request", base, job_id, duration=3)  # every worker serves the pages once
        load = _load("one_request", base, job_id)
        return {**server_memory(server.pid), "rate_per_s": round(load["rate"], 1), "errors": load["errors"], "error_examples": load["error_examples"]}
    finally:
        server.terminate()
        server.wait(timeout=30)


def run() -> dict:
    prepared = _prepare(DB_NAME)
    ours = _measure("perf.wsgi_app:application", prepared["job"])
    before = _measure("perf.wsgi_heavy:application", prepared["job"])
    figures = {
        "server": "gunicorn, 4 sync workers, --preload, PostgreSQL",
        "workers_pss_total_mb": ours["workers_pss_total_mb"],
        "server_pss_total_mb": ours["server_pss_total_mb"],
        "worker_pss_mb": ours["worker_pss_mb"],
        "master_pss_mb": ours["master_pss_mb"],
        "worker_rss_mb": ours["worker_rss_mb"],
        "cycles_per_s": ours["rate_per_s"], "errors": ours["errors"], "error_examples": ours["error_examples"],
        "baseline_workers_pss_total_mb": before["workers_pss_total_mb"],
        "baseline_server_pss_total_mb": before["server_pss_total_mb"],
        "baseline_worker_rss_mb": before["worker_rss_mb"],
        "ratio_workers_pss": round(ours["workers_pss_total_mb"] / before["workers_pss_total_mb"], 3),
        "target_workers_pss_total_mb": 400,
    }
    save("memory", figures)
    return figures
