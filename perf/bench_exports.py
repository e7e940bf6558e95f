"""Exports at scale (issue 26, item 3): a rewrite job over 10,000 MultiWOZ dialogs (30,000 items)
with 3 accepted responses per item exported whole — every test-set variant, responses.csv, the
manifest and README — by `services.exports.export_job`, in a fresh process whose peak memory is
its peak RSS.

Baseline in the same run, also in a fresh process on the same database: the same rows read with
plain cursor queries and written bare (`json.dump` of each variant's dialogs, `csv.writer` of the
responses), with none of the export's checks, selection, spreadsheet safety or manifest. Targets:
at most 3x the baseline's time, peak memory at most 500 MB.
"""
import json
import os
import sys
import tempfile

from .common import PG, ROOT, fresh_database, run_json_subprocess, save

DIALOGS = int(os.environ.get("QUORUM_BENCH_EXPORT_DIALOGS", "10000"))
REDUNDANCY = 3
DB_NAME = os.environ.get("QUORUM_BENCH_EXPORTS_DB", "quorum_bench_exports")
TARGET_RATIO, TARGET_PEAK_MB = 3.0, 500


def _env(tmp: str) -> dict:
    return {"DATABASE_URL": f"{PG}/{DB_NAME}", "QUORUM_EXPORT_DIR": tmp, "PYTHONPATH": str(ROOT)}


def run() -> dict:
    fresh_database(DB_NAME)
    with tempfile.TemporaryDirectory() as tmp:
        built = run_json_subprocess("perf.bench_exports", ["--build"], _env(tmp))
        baseline = run_json_subprocess("perf.bench_exports", ["--bare", f"{tmp}/bare"], _env(tmp))
        ours = run_json_subprocess("perf.bench_exports", ["--export", f"{tmp}/export"], _env(tmp))
    figures = {
        **built,
        "export_seconds": ours["seconds"], "export_peak_rss_mb": ours["peak_rss_mb"], "export_files": ours["files"],
        "export_bytes": ours["bytes"],
        "bare_writer_seconds": baseline["seconds"], "bare_writer_peak_rss_mb": baseline["peak_rss_mb"], "bare_bytes": baseline["bytes"],
        "ratio": round(ours["seconds"] / baseline["seconds"], 2),
        "target_ratio": TARGET_RATIO, "target_peak_mb": TARGET_PEAK_MB,
    }
    save("exports", figures)
    return figures


def _setup():
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "quorum.settings")
    django.setup()


def _build() -> dict:
    """The job: 10,000 generated dialogs imported, a rewrite job with redundancy 3, every slot answered."""
    import time

    _setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from django.utils import timezone

    from annotation.demo.corpus import generate_corpus
    from annotation.models import Item, Response, Slot, Worker
    from annotation.services.imports import import_corpus
    from annotation.services.jobs import create_job, launch_job

    started = time.perf_counter()
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump(generate_corpus(DIALOGS, seed=26), fh)
    corpus = import_corpus(name="exports", source_format="multiwoz", files={"data": __import__("pathlib").Path(fh.name)})
    job = launch_job(create_job(corpus=corpus, name="exports", redundancy=REDUNDANCY))
    workers = [Worker.objects.get_or_create(provider=Worker.INHOUSE, external_id=f"w{i}")[0] for i in range(REDUNDANCY)]
    utterance = dict(Item.objects.filter(job=job).values_list("pk", "payload__utterance"))
    now = timezone.now()
    slots = Slot.objects.filter(job=job).order_by("pk").values_list("pk", "item_id", "index")
    batch = []
    for slot_id, item_id, index in slots.iterator(chunk_size=5000):
        text = utterance[item_id]
        batch.append(Response(
            slot_id=slot_id, item_id=item_id, worker=workers[index], claimed_at=now, submitted_at=now, status=Response.Status.ACCEPTED,
            answers={v: f"{text} ({v} by w{index})" for v in ("paraphrase", "typos", "verbose", "simplified")}, active_seconds=30.0,
        ))
        if len(batch) == 5000:
            Response.objects.bulk_create(batch)
            batch = []
    Response.objects.bulk_create(batch)
    from django.db.models import Case, Value, When

    Slot.objects.filter(job=job).update(
        state=Slot.State.SUBMITTED, claimed_at=now, worker_id=Case(*(When(index=i, then=Value(w.pk)) for i, w in enumerate(workers)))
    )
    Item.objects.filter(job=job).update(state=Item.State.COMPLETE)
    from annotation.services.bulk import refresh_statistics

    refresh_statistics(len(utterance) * REDUNDANCY, Response, Slot, Item)
    return {
        "dialogs": DIALOGS, "items": Item.objects.filter(job=job).count(),
        "responses": Response.objects.filter(item__job=job).count(), "build_seconds": round(time.perf_counter() - started, 1),
    }


def _size(path) -> int:
    return sum(f.stat().st_size for f in __import__("pathlib").Path(path).rglob("*") if f.is_file())


def _export(directory) -> dict:
    import time

    _setup()
    from annotation.models import Job
    from annotation.services.exports import export_job

    from .common import peak_rss_mb

    job = Job.objects.get(name="exports")
    started = time.perf_counter()
    files = export_job(job, directory)
    seconds = time.perf_counter() - started
    return {"seconds": round(seconds, 2), "peak_rss_mb": round(peak_rss_mb(), 1), "files": len(files), "bytes": _size(directory)}


BARE_TURNS = """
SELECT d.external_id, t.index, t.speaker, t.text, t.raw, i.id
FROM annotation_dialog d JOIN annotation_turn t ON t.dialog_id = d.id
LEFT JOIN annotation_item i ON i.turn_id = t.id AND i.job_id = %s
WHERE d.corpus_id = %s ORDER BY d.position, t.index
"""
BARE_RESPONSES = """
SELECT r.id, r.item_id, r.worker_id, r.status, r.answers, r.submitted_at, r.active_seconds
FROM annotation_response r JOIN annotation_item i ON i.id = r.item_id
WHERE i.job_id = %s ORDER BY i.position, r.submitted_at, r.id
"""


def _bare(directory) -> dict:
    """The same rows, read with two plain queries and written with json.dump and csv.writer."""
    import csv
    import time
    from pathlib import Path

    _setup()
    from django.db import connection

    from annotation.models import Job

    from .common import peak_rss_mb

    job = Job.objects.get(name="exports")
    variants = ("paraphrase", "typos", "verbose", "simplified")
    out = Path(directory)
    out.mkdir(parents=True)
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute(BARE_RESPONSES, [job.pk])
        first = {}
        with open(out / "responses.csv", "w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh)
            for row in cursor:
                answers = row[4] if isinstance(row[4], dict) else json.loads(row[4])
                first.setdefault(row[1], answers)
                writer.writerow([*row[:4], *(answers.get(v, "") for v in variants), row[5], row[6]])
        cursor.execute(BARE_TURNS, [job.pk, job.corpus_id])
        dialogs: dict = {}
        for external_id, _index, _speaker, text, raw, item_id in cursor:
            raw = raw if isinstance(raw, dict) else json.loads(raw or "{}")
            dialogs.setdefault(external_id, []).append((text, raw, first.get(item_id)))
    for variant in variants:
        data = {
            key: {"log": [{**raw, "text": answers[variant] if answers else text} for text, raw, answers in turns]}
            for key, turns in dialogs.items()
        }
        (out / variant).mkdir()
        with open(out / variant / "data.json", "w", encoding="utf-8") as fh:
            json.dump(data, fh, ensure_ascii=False)
    seconds = time.perf_counter() - started
    return {"seconds": round(seconds, 2), "peak_rss_mb": round(peak_rss_mb(), 1), "bytes": _size(directory)}


if __name__ == "__main__":
    command = sys.argv[1]
    if command == "--build":
        result = _build()
    elif command == "--export":
        result = _export(sys.argv[2])
    else:
        result = _bare(sys.argv[2])
    print(json.dumps(result))
