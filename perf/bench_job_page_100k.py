"""perf/bench_job_page.py at 100,000 responses (issue 26, item 3): 25,000 user turns x 4 workers,
against the same 12-response baseline job in the same run. Targets: the job page and the review
queue each under one second, and their query counts the baseline's (flat)."""
from .bench_job_page import WORKERS
from .bench_job_page import run as run_job_page

TURNS = 100_000 // WORKERS


def run() -> dict:
    return run_job_page(TURNS, "job_page_100k")
