"""The pairwise ranking page at 20,000 votes (issue 26): the stored report read against computing it.

A pairwise job of 10 systems (seeded strengths, a push towards the longer output and the left
side) and 20,000 counted votes in a fresh database (SQLite by default, `--database-url` or
QUORUM_BENCH_PAIRWISE_DB for PostgreSQL). Measured in the same run, as an organizer through the test
client: the page as served (it reads the stored report; median of 7 renders), and the computation
the page used to make on every request and the background task now makes once per burst of votes
(`services.pairwise.compute_report`: the votes, the bootstrap, the fragility search, the style fit;
median of 3). The figure is their ratio.

Run: .venv/bin/python -m perf pairwise_page
"""
import json
import os
import statistics
import sys
import tempfile
import time

from .common import median_render, run_json_subprocess, save

SYSTEMS, VOTES, SEED = 10, 20_000, 11
RENDERS, COMPUTES = 7, 3


def run(database_url: str | None = None) -> dict:
    database_url = database_url or os.environ.get("QUORUM_BENCH_PAIRWISE_DB")
    with tempfile.TemporaryDirectory() as tmp:
        figures = run_json_subprocess(
            "perf.bench_pairwise_page", ["--worker"], {"DATABASE_URL": database_url or f"sqlite:///{tmp}/bench.sqlite3", "QUORUM_EXPORT_DIR": tmp},
        )
    save("pairwise_page", figures)
    return figures


def _payloads(rng):
    """VOTES pairs of different systems, each a context of its own, with outputs of varied length."""
    payloads = []
    for k in range(VOTES):
        a, b = rng.choice(SYSTEMS, size=2, replace=False)
        texts = [" ".join(["word"] * int(rng.integers(5, 60))) for _ in range(2)]
        payloads.append({
            "context": [{"speaker": "user", "text": f"Question {k}?"}], "instance": f"c{k}",
            "a": {"system": f"sys-{a}", "text": texts[0]}, "b": {"system": f"sys-{b}", "text": texts[1]},
        })
    return payloads


def _votes(payloads, rng):
    """(winner, left) per payload: Bradley-Terry strengths, plus the longer output and the left side favoured."""
    import numpy as np

    strength = np.linspace(-1.0, 1.0, SYSTEMS)
    out = []
    for p in payloads:
        left = "a" if rng.random() < 0.5 else "b"
        a, b = int(p["a"]["system"][4:]), int(p["b"]["system"][4:])
        longer = np.sign(len(p["a"]["text"]) - len(p["b"]["text"]))
        logit = strength[a] - strength[b] + 0.3 * longer + (0.2 if left == "a" else -0.2)
        u = rng.random()
        winner = "tie" if u < 0.05 else ("a" if u < 0.05 + 0.95 / (1 + np.exp(-logit)) else "b")
        out.append((winner, left))
    return out


def _worker() -> dict:
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "quorum.settings")
    django.setup()
    import numpy as np
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client
    from django.test.utils import setup_test_environment
    from django.urls import reverse
    from django.utils import timezone

    setup_test_environment()  # the test client's response context; no effect on what is measured
    call_command("migrate", verbosity=0)
    from annotation.models import Response, Slot, Worker
    from annotation.services.jobs import launch_job
    from annotation.services.payload_jobs import create_payload_job
    from evaluation.campaigns.services import pairwise
    from evaluation.models import PairwiseReport
    from quorum.roles import make_organizer

    rng = np.random.default_rng(SEED)
    payloads = _payloads(rng)
    started = time.perf_counter()
    job = launch_job(create_payload_job(name="pairs at scale", task_type="pairwise", payloads=payloads, redundancy=1))
    worker, _ = Worker.objects.get_or_create(provider=Worker.INHOUSE, external_id="rater")
    slots = list(Slot.objects.filter(job=job).select_related("item").order_by("item__position"))
    votes = _votes([s.item.payload for s in slots], rng)
    for slot in slots:
        slot.state, slot.worker = Slot.State.SUBMITTED, worker
    Slot.objects.bulk_update(slots, ["state", "worker"], batch_size=2000)
    now = timezone.now()
    Response.objects.bulk_create([
        Response(slot=s, item_id=s.item_id, worker=worker, claimed_at=now, status=Response.Status.ACCEPTED, answers={"winner": w, "left": left})
        for s, (w, left) in zip(slots, votes, strict=True)
    ], batch_size=2000)
    build_seconds = time.perf_counter() - started

    computes = []
    for _ in range(COMPUTES):
        pending = PairwiseReport.objects.create(job=job)  # as a vote records it (not queued: the task is timed here)
        started = time.perf_counter()
        report = pairwise.compute_report(pending.pk)
        computes.append(time.perf_counter() - started)
        assert report is not None and report.votes == VOTES, report and report.error

    user = get_user_model().objects.create_user("olga", password="x")
    make_organizer(user)
    client = Client()
    client.force_login(user)
    page_seconds, page_queries = median_render(client, reverse("evaluation:pairwise-ranking", args=[job.pk]), RENDERS, b'id="ranking"')
    compute_seconds = statistics.median(computes)
    return {
        "database": connection.vendor, "systems": SYSTEMS, "votes": VOTES, "build_seconds": round(build_seconds, 1),
        "page_seconds": round(page_seconds, 4), "page_queries": page_queries,
        "compute_seconds": round(compute_seconds, 3), "compute_to_page": round(compute_seconds / page_seconds, 1),
        "report_steps": report.total,
    }


if __name__ == "__main__" and "--worker" in sys.argv:
    print(json.dumps(_worker()))
