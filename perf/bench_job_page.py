"""Benchmark of the review issue: the organizer's job page and review queue with 10,000 responses.

A rewrite job with 10,000 responses (2,500 user turns, 4 workers each) and its stored flag report;
the pages are rendered through Django's test client as a logged-in organizer, the median of 7
renders each. Baseline, in the same run: the same pages for a job with 10 responses. Targets: the
job page under one second, and a page cost that does not grow with the responses (ratio near 1).
"""
import json
import os
import sys
import tempfile

from .common import median_render, run_json_subprocess, save

TURNS, WORKERS = 2_500, 4
SMALL_TURNS = 3  # the baseline job: 3 turns x 4 workers = 12 responses
RENDERS = 7
TARGET_SECONDS = 1.0


def run(turns: int = TURNS, name: str = "job_page", database_url: str | None = None) -> dict:
    """`database_url`: where to build the jobs (an empty database); a fresh SQLite file by default."""
    with tempfile.TemporaryDirectory() as tmp:
        figures = run_json_subprocess(
            "perf.bench_job_page", ["--worker", str(turns)],
            {"DATABASE_URL": database_url or f"sqlite:///{tmp}/bench.sqlite3", "QUORUM_EXPORT_DIR": tmp},
        )
    figures["target_seconds"] = TARGET_SECONDS
    save(name, figures)
    return figures


def _worker(turns: int = TURNS) -> dict:
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "quorum.settings")
    django.setup()
    from django.core.management import call_command
    from django.test import Client
    from django.test.utils import setup_test_environment
    from django.urls import reverse

    setup_test_environment()  # the test client's response context; no effect on what is measured
    call_command("migrate", verbosity=0)
    from django.contrib.auth import get_user_model

    from annotation.models import Corpus, Dialog, Item, Response, Slot, Turn, Worker
    from annotation.services.jobs import create_job, launch_job
    from annotation.services.quality import apply_flags
    from quorum.roles import make_organizer

    def job_with(turns: int, name: str):
        corpus = Corpus.objects.create(name=name, source_format="jsonl")
        dialogs = Dialog.objects.bulk_create([Dialog(corpus=corpus, external_id=f"d{d}", position=d) for d in range(turns)])
        Turn.objects.bulk_create([
            Turn(dialog=d, index=0, speaker="user", text=f"I need a cheap table for {k % 8 + 2} people in the centre.",
                 slot_values=[{"slot": "pricerange", "value": "cheap"}, {"slot": "area", "value": "centre"}])
            for k, d in enumerate(dialogs)
        ])
        job = launch_job(create_job(corpus=corpus, name=name, redundancy=WORKERS))
        workers = [Worker.objects.get_or_create(provider=Worker.INHOUSE, external_id=f"w{i}")[0] for i in range(WORKERS)]
        slots = list(Slot.objects.filter(job=job).order_by("item_id", "index"))
        items = {i.pk: i for i in Item.objects.filter(job=job)}
        for slot in slots:
            slot.state, slot.worker = Slot.State.SUBMITTED, workers[slot.index]
        Slot.objects.bulk_update(slots, ["state", "worker"], batch_size=2000)
        from django.utils import timezone

        now = timezone.now()
        Response.objects.bulk_create([
            Response(slot=s, item_id=s.item_id, worker=workers[s.index], claimed_at=now, status=Response.Status.ACCEPTED,
                     answers={v: f"{items[s.item_id].payload['utterance']} ({v} by w{s.index})" for v in ("paraphrase", "typos", "verbose", "simplified")},
                     active_seconds=30.0 + s.index)
            for s in slots
        ], batch_size=2000)
        apply_flags(job)  # the stored report the pages read
        return job

    from annotation.models import Job

    if turns:
        big, small = job_with(turns, "large"), job_with(SMALL_TURNS, "small")
        user = get_user_model().objects.create_user("olga", password="x")
        make_organizer(user)
    else:  # `--worker 0`: measure again the jobs an earlier run built in this database
        big, small = Job.objects.get(name="large"), Job.objects.get(name="small")
        user = get_user_model().objects.get(username="olga")
    client = Client()
    client.force_login(user)

    def measure(job, name):
        return median_render(client, reverse(name, kwargs={"pk": job.pk}), RENDERS)

    figures = {"responses_large": Response.objects.filter(item__job=big).count(), "responses_small": Response.objects.filter(item__job=small).count()}
    for name, key in (("organizer:job", "job_page"), ("organizer:job-review", "review_queue")):
        big_s, big_q = measure(big, name)
        small_s, small_q = measure(small, name)
        figures.update({
            f"{key}_seconds": round(big_s, 4), f"{key}_baseline_seconds": round(small_s, 4),
            f"{key}_ratio": round(big_s / small_s, 2), f"{key}_queries": big_q, f"{key}_baseline_queries": small_q,
        })
    return figures


if __name__ == "__main__" and "--worker" in sys.argv:
    print(json.dumps(_worker(int(sys.argv[2]) if len(sys.argv) > 2 else TURNS)))
