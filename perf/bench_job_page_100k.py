"""perf/bench_job_page.py at 100,000 responses (issue 26, item 3): 25,000 user turns x 4 workers,
against the same 12-response baseline job in the same run, on SQLite (as bench_job_page) and on
PostgreSQL (as served). Targets: the job page and the review queue each under one second, and their
query counts the baseline's (flat)."""
import os

from .bench_job_page import WORKERS
from .bench_job_page import run as run_job_page
from .common import PG, fresh_database, save

TURNS = 100_000 // WORKERS
DB_NAME = os.environ.get("QUORUM_BENCH_JOB_PAGE_DB", "quorum_bench_job_page")


def run() -> dict:
    fresh_database(DB_NAME)
    figures = {"postgresql": run_job_page(TURNS, "job_page_100k_postgresql", f"{PG}/{DB_NAME}")}
    if os.environ.get("QUORUM_BENCH_JOB_PAGE_SQLITE", "1") == "1":
        figures["sqlite"] = run_job_page(TURNS, "job_page_100k_sqlite")
    save("job_page_100k", figures)
    return figures
