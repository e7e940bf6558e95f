"""Benchmark: how long the job form holds the request when a builder creates a large corpus job.

A builder imports the real MultiWOZ 2.1 validation split (the project's shared data folder; 7,365
user turns) and a synthetic corpus in the same format with 100,002 user turns, then creates a
rewrite job (redundancy 1, 3 and 10) and a rating job (`hard_score`, redundancy 3) over each from
the job form, through Django's test client, counting the request's queries.

Baseline, in the same run: the tasks run inside the request (`quorum.local_worker.inline`, which is
what the job form did before: the job was made in its request). Then with QUORUM_LOCAL_WORKER's
worker process: the request's time, and the time until the creation run says it has finished (read
as the page's progress endpoint reads it). `python -m perf.bench_job_creation` runs on SQLite;
QUORUM_BENCH_DATABASE_URL names another database (PostgreSQL) to run on instead, emptied first.
"""
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from tests.shared_data import missing, shared_data

from .common import run_json_subprocess, save

MULTIWOZ = shared_data("multiwoz21-val-convlab2.json.zip")
SYNTHETIC_DIALOGS = 14_286  # 7 user turns each: 100,002 user turns, 200,004 turns
JOBS = (("rewrite", 1), ("rewrite", 3), ("hard_score", 3), ("rewrite", 10))
WAIT_SECONDS = 900


def run() -> dict:
    if not MULTIWOZ.is_file():
        raise ModuleNotFoundError(missing(MULTIWOZ))
    with tempfile.TemporaryDirectory() as tmp:
        database = os.environ.get("QUORUM_BENCH_DATABASE_URL") or f"sqlite:///{tmp}/bench.sqlite3"
        figures = run_json_subprocess(
            "perf.bench_job_creation", ["--worker"],
            {"DATABASE_URL": database, "QUORUM_VAR_DIR": tmp, "QUORUM_LOCAL_WORKER": "true", "QUORUM_EXPORT_DIR": tmp},
        )
    save("job_creation", figures)
    return figures


def _worker() -> dict:
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "quorum.settings")
    django.setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from annotation.demo.corpus import generate_corpus
    from annotation.models import Job, JobCreationRun, Slot
    from annotation.services.imports import import_corpus
    from quorum import local_worker
    from quorum.roles import make_organizer

    if connection.vendor == "postgresql":
        call_command("flush", interactive=False, verbosity=0)
    call_command("migrate", verbosity=0)
    organizer = get_user_model().objects.create_user("bench", password="bench-pass-1")
    make_organizer(organizer)
    client = Client()
    client.force_login(organizer)
    var = Path(settings.VAR_DIR)
    synthetic = var / "synthetic.json"
    synthetic.write_text(json.dumps(generate_corpus(SYNTHETIC_DIALOGS, seed=7, follow_ups=4)))
    corpora = [
        import_corpus(name="MultiWOZ 2.1 val", source_format="multiwoz", files={"data": MULTIWOZ}),
        import_corpus(name="synthetic 100k", source_format="multiwoz", files={"data": synthetic}),
    ]

    def create(corpus, kind, redundancy, name):
        form = {
            "corpus": corpus.pk, "name": name, "task_type": kind, "selection_mode": "all", "seed": 0,
            "redundancy": redundancy, "reward": "0.50", "claim_timeout_minutes": 30, "instructions": "",
        }
        began = time.perf_counter()
        with CaptureQueriesContext(connection) as queries:
            response = client.post("/organize/jobs/new/", form)
        seconds = time.perf_counter() - began
        assert response.status_code == 302, response.status_code
        return seconds, len(queries), began

    def finished(name) -> Job:
        deadline = time.monotonic() + WAIT_SECONDS
        while time.monotonic() < deadline:
            run = JobCreationRun.objects.filter(name=name).select_related("job").first()
            if run is not None and run.status in ("succeeded", "failed"):
                assert run.status == "succeeded", run.error
                return run.job
            time.sleep(0.2)
        raise RuntimeError(f"{name} was not made within {WAIT_SECONDS} s; see {var}/worker.log")

    rows = []
    with local_worker.inline():
        for corpus in corpora:
            for kind, redundancy in JOBS:
                name = f"inline {corpus.name} {kind} x{redundancy}"
                seconds, queries, _ = create(corpus, kind, redundancy, name)
                job = finished(name)
                rows.append({
                    "corpus": corpus.name, "task_type": kind, "redundancy": redundancy, "items": job.items.count(),
                    "slots": Slot.objects.filter(job=job).count(), "inline_request_seconds": round(seconds, 3), "inline_queries": queries,
                })
    worker = local_worker.start(var)
    try:
        time.sleep(5)  # the worker's start-up (Django, Celery, beat) is not the request's
        for row, (corpus, (kind, redundancy)) in zip(rows, [(c, j) for c in corpora for j in JOBS], strict=True):
            name = f"queued {corpus.name} {kind} x{redundancy}"
            seconds, queries, began = create(corpus, kind, redundancy, name)
            job = finished(name)
            assert job.items.count() == row["items"] and Slot.objects.filter(job=job).count() == row["slots"]
            row.update(
                background_request_seconds=round(seconds, 3), background_queries=queries,
                background_finished_seconds=round(time.perf_counter() - began, 3),
                request_ratio=round(seconds / row["inline_request_seconds"], 4),
            )
    finally:
        local_worker.stop(worker)
    return {"database": connection.vendor, "jobs": rows}


if __name__ == "__main__":
    if sys.argv[1:] == ["--worker"]:
        print(json.dumps(_worker()))
