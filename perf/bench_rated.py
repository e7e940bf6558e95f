"""CPU per claim on a rating job, whose raters each meet the items in a rotation of their own
(issue 26's annotation loop for the organizers' jobs): `claim_next_slot` on a DSTC9-style Likert
job of 2,000 responses to rate, 3 raters each, in one process against PostgreSQL.

Baseline in the same run: the same number of claims on a rewrite job, whose claims take the plain
position order (the claim the cycle benchmark measures). CPU as in perf/bench_cycle.py: this
process's time plus its PostgreSQL backend's, only around the claim calls; between claims the slot
is marked submitted outside the measurement, so every claim takes a new slot. The ratio is the
rated claim's CPU to the plain claim's: 1 means the rotation costs nothing.
"""
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from .common import fresh_database, run_json_subprocess, save, server_env

DB_NAME = os.environ.get("QUORUM_BENCH_RATED_CLAIMS_DB", "quorum_bench_rated_claims")
CLAIMS = int(os.environ.get("QUORUM_BENCH_CLAIMS", "600"))
ITEMS = 2000
REDUNDANCY = 3


def run() -> dict:
    fresh_database(DB_NAME)
    env = {k: v for k, v in server_env(DB_NAME).items() if k in ("DJANGO_SETTINGS_MODULE", "DATABASE_URL", "LOG_LEVEL")}
    figures = run_json_subprocess("perf.bench_rated_claims", [str(CLAIMS)], env)
    save("rated_claims", figures)
    return figures


def _prepare():
    """A live Likert job and a live rewrite job of ITEMS items each, and the raters."""
    from django.core.management import call_command

    from annotation.demo.corpus import generate_corpus
    from annotation.services.imports import import_corpus
    from annotation.services.jobs import create_job, launch_job
    from annotation.services.payload_jobs import create_payload_job

    call_command("migrate", verbosity=0)
    context = [{"speaker": "user", "text": "Is there free parking at the Lovell Lodge?"}]
    payloads = [{"context": context, "response": f"Yes, it has free parking ({n})."} for n in range(ITEMS)]
    likert = launch_job(create_payload_job(name="rated", task_type="likert", payloads=payloads, redundancy=REDUNDANCY))
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(generate_corpus(ITEMS // 2, seed=3, follow_ups=1), f)
    corpus = import_corpus(name="plain", source_format="multiwoz", files={"data": Path(f.name)})
    plain = launch_job(create_job(corpus=corpus, name="plain", redundancy=REDUNDANCY, claim_timeout_minutes=60))
    return likert, plain


def _backend_cpu(connection) -> float:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _claims_cpu(job, workers) -> tuple[float, int]:
    """Milliseconds of CPU per claim over `workers` (each claims once, then finishes it), and the claims made."""
    from django.db import connection

    from annotation.models import Slot
    from annotation.services.claims import claim_next_slot

    spent, made = 0.0, 0
    for worker in workers:
        pg0, t = _backend_cpu(connection), time.process_time()
        slot = claim_next_slot(job=job, worker=worker)
        spent += time.process_time() - t + _backend_cpu(connection) - pg0
        if slot is None:
            raise RuntimeError(f"{job.name}: no slot left for {worker}")
        made += 1
        Slot.objects.filter(pk=slot.pk).update(state=Slot.State.SUBMITTED)
    return spent / made * 1000, made


def main(claims: int) -> dict:
    import django

    django.setup()
    from django.contrib.auth import get_user_model

    from quorum.roles import make_annotator

    likert, plain = _prepare()
    User = get_user_model()
    workers = [make_annotator(User.objects.create_user(f"rater{i}", password="bench-pass")) for i in range(claims + 40)]
    # Warm-up on workers of their own: templates of SQL compiled, per-process caches filled.
    _claims_cpu(likert, workers[:20])
    _claims_cpu(plain, workers[20:40])
    rated_ms, rated_n = _claims_cpu(likert, workers[40:])
    plain_ms, plain_n = _claims_cpu(plain, workers[40:])
    return {
        "claims": rated_n, "rated_claim_cpu_ms": round(rated_ms, 3), "plain_claim_cpu_ms": round(plain_ms, 3),
        "ratio_rated_to_plain": round(rated_ms / plain_ms, 2), "items": ITEMS, "redundancy": REDUNDANCY,
    }


if __name__ == "__main__":
    print(json.dumps(main(int(sys.argv[1]))))
