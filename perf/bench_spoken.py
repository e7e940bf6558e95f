"""Benchmark of spoken readings (issue 14): the cost of storing and serving 10,000 readings.

A spoken-reading job of 2,500 user turns with one response each and 4 readings per response:
10,000 one-second 16 kHz WAV readings (espeak-ng speech, cut to one second) stored one by one through
`services.readings.store_reading` (a row and a file in the local audio storage, one transaction each),
then SERVED readings streamed through the reviewer view (`organizer:reading-audio`: login, role
check, one query, the storage) by Django's test client as an organizer.

Baselines, in the same run: a bare file write of the same bytes (open, write, close) per reading,
and a bare static serve of the same files (`django.views.static.serve`, no login or query) through
the same client and middleware. Disk: the MB the readings take against the WAV bytes alone.
"""
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from .common import run_json_subprocess, save

TURNS, READINGS = 2_500, 4
SERVED = 1_000


def run() -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        figures = run_json_subprocess(
            "perf.bench_spoken", ["--worker"],
            {"DATABASE_URL": f"sqlite:///{tmp}/bench.sqlite3", "MEDIA_ROOT": f"{tmp}/media", "QUORUM_EXPORT_DIR": tmp,
             "DJANGO_SETTINGS_MODULE": "perf.settings", "QUORUM_BENCH_BARE_DIR": f"{tmp}/bare"},
        )
    save("spoken", figures)
    return figures


def _disk_mb(root: Path) -> float:
    return sum(os.stat(p).st_blocks * 512 for p in root.rglob("*") if p.is_file()) / 1e6


def _worker() -> dict:
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.test import Client
    from django.urls import reverse
    from django.utils import timezone

    call_command("migrate", verbosity=0)
    from annotation.models import Corpus, Dialog, Response, Slot, SpokenReading, Turn, Worker
    from annotation.services.jobs import create_job, launch_job
    from annotation.services.readings import store_reading
    from annotation.speech.audio import read_wav, write_wav
    from annotation.speech.tts import synthesize
    from quorum.roles import make_organizer

    speech = read_wav(synthesize("I need a cheap table for two people in the centre please."))
    one_second = write_wav(type(speech).from_samples(speech.samples[: speech.sample_rate], speech.sample_rate))

    corpus = Corpus.objects.create(name="bench", source_format="jsonl")
    dialogs = Dialog.objects.bulk_create([Dialog(corpus=corpus, external_id=f"d{d}", position=d) for d in range(TURNS)])
    Turn.objects.bulk_create([Turn(dialog=d, index=0, speaker="user", text=f"I need a table for {k % 8 + 2}.", slot_values=[]) for k, d in enumerate(dialogs)])
    job = launch_job(create_job(corpus=corpus, name="bench", task_type="spoken_reading", redundancy=1))
    worker = Worker.objects.create(provider=Worker.INHOUSE, external_id="reader")
    slots = list(Slot.objects.filter(job=job).order_by("item_id"))
    Slot.objects.filter(job=job).update(state=Slot.State.SUBMITTED, worker=worker)
    now = timezone.now()
    meta = {"seconds": 1.0, "sample_rate": 16000}
    Response.objects.bulk_create([
        Response(slot=s, item_id=s.item_id, worker=worker, claimed_at=now, status=Response.Status.ACCEPTED,
                 answers={f"reading_{i + 1}": meta for i in range(READINGS)}) for s in slots
    ], batch_size=2000)
    responses = list(Response.objects.filter(item__job=job).select_related("item").order_by("pk"))

    started = time.perf_counter()
    for response in responses:
        for index in range(READINGS):
            store_reading(response=response, index=index, wav=one_second, seconds=1.0, sample_rate=16000)
    store_seconds = time.perf_counter() - started
    stored = SpokenReading.objects.count()

    bare = Path(os.environ["QUORUM_BENCH_BARE_DIR"])
    bare.mkdir(parents=True)
    started = time.perf_counter()
    for n in range(stored):
        with open(bare / f"reading-{n}.wav", "wb") as fh:
            fh.write(one_second)
    bare_seconds = time.perf_counter() - started

    user = get_user_model().objects.create_user("olga", password="x")
    make_organizer(user)
    client = Client()
    client.force_login(user)
    sample = list(SpokenReading.objects.order_by("?").values_list("response_id", "index", "audio")[:SERVED])

    def serve_all(urls):
        times = []
        for url in urls:
            t = time.perf_counter()
            response = client.get(url)
            body = b"".join(response.streaming_content)
            times.append(time.perf_counter() - t)
            assert response.status_code == 200 and len(body) == len(one_second), (url, response.status_code)
        return statistics.median(times)

    view_urls = [reverse("organizer:reading-audio", args=[r, i]) for r, i, _name in sample]
    static_urls = [f"/perf/media/{name}" for _r, _i, name in sample]
    serve_all(view_urls[:20]), serve_all(static_urls[:20])  # warm
    view_s, static_s = serve_all(view_urls), serve_all(static_urls)

    media_mb = _disk_mb(Path(settings.MEDIA_ROOT))
    wav_mb = stored * len(one_second) / 1e6
    return {
        "readings": stored,
        "wav_bytes": len(one_second),
        "store_ms_per_reading": round(1000 * store_seconds / stored, 3),
        "bare_write_ms_per_file": round(1000 * bare_seconds / stored, 3),
        "store_ratio": round(store_seconds / bare_seconds, 1),
        "served": len(sample),
        "serve_ms_median": round(1000 * view_s, 3),
        "bare_static_serve_ms_median": round(1000 * static_s, 3),
        "serve_ratio": round(view_s / static_s, 2),
        "disk_mb": round(media_mb, 1),
        "wav_mb": round(wav_mb, 1),
        "disk_ratio": round(media_mb / wav_mb, 3),
    }


if __name__ == "__main__" and "--worker" in sys.argv:
    print(json.dumps(_worker()))
