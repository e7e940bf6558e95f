"""Post 10,000 HITs through Quorum's MTurk provider against a local fake endpoint that adds 50 ms of
latency and throttles 5% of calls; print one JSON line: throughput against the configured call
rate, and how many duplicate HITs were made (must be 0).

    python -m perf.bench_mturk [--hits 10000] [--rate 100] [--concurrency 8] [--latency 0.05] [--throttle 0.05]

It uses its own SQLite file in a temporary directory (or DATABASE_URL if set) and never reaches the
internet: the fake (hits/fakes/mturk_server.py) runs in a separate local process, so that its
work does not share this interpreter's CPU with Quorum's (--fake-in-process to compare).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[1]


def run(argv=None) -> dict:
    """For `python -m perf`: run in a fresh process (its own settings and database), return the figures."""
    done = subprocess.run(
        [sys.executable, "-m", "perf.bench_mturk", *(argv or [])], cwd=ROOT, capture_output=True, text=True, timeout=3600
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if not lines:
        raise RuntimeError(f"bench_mturk failed: {done.stderr[-2000:]}")
    figures = json.loads(lines[-1])
    if done.returncode != 0:
        raise RuntimeError(f"bench_mturk: HITs missing or duplicated: {figures}")
    return figures


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hits", type=int, default=10_000)
    parser.add_argument("--rate", type=float, default=100.0, help="configured MTurk calls per second")
    parser.add_argument("--concurrency", type=int, default=16, help="calls in flight at once")
    parser.add_argument("--latency", type=float, default=0.05, help="seconds the fake adds to every call")
    parser.add_argument("--throttle", type=float, default=0.05, help="share of calls the fake throttles")
    parser.add_argument("--fake-in-process", action="store_true", help="run the fake in this process")
    args = parser.parse_args(argv)

    sys.path.insert(0, str(ROOT))
    workdir = tempfile.mkdtemp(prefix="quorum-bench-mturk-")
    fake = _start_fake(args)
    os.environ.update(
        QUORUM_ENV=os.environ.get("QUORUM_ENV", "test"),
        DJANGO_SETTINGS_MODULE="tests.hits.process_settings",
        QUORUM_VAR_DIR=workdir,
        QUORUM_MTURK_ENDPOINT_URL=fake.url,
        QUORUM_MTURK_CALLS_PER_SECOND=str(args.rate),
        QUORUM_MTURK_CONCURRENCY=str(args.concurrency),
        AWS_ACCESS_KEY_ID=os.environ.get("AWS_ACCESS_KEY_ID", "AKIABENCHFAKE"),
        AWS_SECRET_ACCESS_KEY=os.environ.get("AWS_SECRET_ACCESS_KEY", "bench-fake-secret"),
    )
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{workdir}/bench.sqlite3")
    import django

    django.setup()
    import logging

    logging.getLogger("hits").setLevel(logging.ERROR)
    from django.core.management import call_command

    call_command("migrate", verbosity=0, skip_checks=True)

    from hits.models import Posting
    from hits.services.config import configure_crowd
    from hits.services.postings import post_job
    from hits.services.reconcile import reconcile_job
    from tests.hits.conftest import make_job

    job = make_job(turns=args.hits, name=f"bench {time.time():.0f}")
    configure_crowd(job, provider="mturk", budget="1000000", assignments_per_posting=1)

    started = time.perf_counter()
    post_job(job, concurrency=args.concurrency)
    posted_seconds = time.perf_counter() - started
    created_first_pass = Posting.objects.filter(job=job, state="created").count()
    passes = 0
    while Posting.objects.filter(job=job, state="intended").exists() and passes < 5:
        reconcile_job(job.pk, grace_seconds=0)  # what beat does with calls that stayed throttled
        passes += 1
    total_seconds = time.perf_counter() - started
    created = Posting.objects.filter(job=job, state="created").count()
    stats = fake.stats()
    fake.stop()

    throughput = created_first_pass / posted_seconds if posted_seconds else 0.0
    print(json.dumps({
        "bench": "mturk_post",
        "hits": args.hits,
        "created": created,
        "created_first_pass": created_first_pass,
        "seconds": round(posted_seconds, 2),
        "seconds_with_reconcile": round(total_seconds, 2),
        "throughput_per_s": round(throughput, 1),
        "configured_rate_per_s": args.rate,
        "ratio": round(throughput / args.rate, 3),
        "concurrency": args.concurrency,
        "latency_s": args.latency,
        "throttle_share": args.throttle,
        "calls": stats["calls"],
        "throttled": stats["throttled"],
        "duplicates_refused": stats["duplicates_refused"],
        "duplicates": stats["duplicates"],
        "hits_at_provider": stats["hits"],
        "fake": "in-process" if args.fake_in_process else "subprocess",
    }))
    return 0 if created == args.hits and stats["duplicates"] == 0 else 1


class _FakeProcess:
    """The fake MTurk in its own process, read through its control endpoint."""

    def __init__(self, args):
        self.proc = subprocess.Popen(
            [sys.executable, "-W", "ignore::RuntimeWarning", "-m", "hits.fakes.mturk_server", "--latency", str(args.latency),
             "--throttle", str(args.throttle), "--seed", "11"],
            cwd=ROOT, stdout=subprocess.PIPE, text=True,
        )
        self.url = self.proc.stdout.readline().strip()

    def stats(self):
        return requests.get(f"{self.url}/_control/stats", timeout=30).json()

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)


def _start_fake(args):
    if args.fake_in_process:
        from hits.fakes import FakeMTurk

        return FakeMTurk(latency=args.latency, throttle_rate=args.throttle, seed=11).start()
    return _FakeProcess(args)


if __name__ == "__main__":
    sys.exit(main())
