"""Benchmark of issue 23, item 4: how long the page that starts long work holds the request, on the
embedded default (SQLite, no Redis).

The real DSTC9 Track 1 human evaluation (the project's shared data folder): its import from the
campaign page (a zip of the team folders) and then the page's planner run on those ratings (top 3,
up to 3 raters per instance). Baseline, in the same run: the same two requests with the tasks run
inside the request (`quorum.local_worker.inline`, what the embedded default did before). Then with
QUORUM_LOCAL_WORKER's worker process on the broker in files: the request's time, and the time until
the run's row says it has finished (read the way the page's progress endpoint reads it). The ratio
request(background) / request(inline) is the figure to keep small; the work itself is not faster.
"""
import io
import json
import os
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from tests.shared_data import DSTC9_HUMAN_EVAL, missing, shared_data

from .common import run_json_subprocess, save

DATA = shared_data(DSTC9_HUMAN_EVAL)
PLAN = {"top_k": 3, "power": 0.8, "max_raters": 3, "provider": "mturk", "reward": "0.10"}
WAIT_SECONDS = 600


def run() -> dict:
    if not (DATA / "results").is_dir():
        raise ModuleNotFoundError(missing(DATA))
    with tempfile.TemporaryDirectory() as tmp:
        figures = run_json_subprocess(
            "perf.bench_background", ["--worker"],
            {"DATABASE_URL": f"sqlite:///{tmp}/bench.sqlite3", "QUORUM_VAR_DIR": tmp, "QUORUM_LOCAL_WORKER": "true", "QUORUM_EXPORT_DIR": tmp},
        )
    save("background", figures)
    return figures


def _zipped_results() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted((DATA / "results").rglob("*.json")):
            archive.write(path, path.relative_to(DATA / "results").as_posix())
    return buffer.getvalue()


def _timed(call):
    start = time.perf_counter()
    response = call()
    return response, time.perf_counter() - start


def _worker() -> dict:
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "quorum.settings")
    django.setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.core.management import call_command
    from django.test import Client

    from evaluation.campaigns.services.campaigns import create_campaign
    from evaluation.campaigns.services.imports import import_test_set
    from evaluation.models import CampaignRun
    from quorum import local_worker
    from quorum.background import runs_inline
    from quorum.roles import make_organizer

    call_command("migrate", verbosity=0)
    assert not runs_inline(), "QUORUM_LOCAL_WORKER should queue tasks for the worker process"
    organizer = get_user_model().objects.create_user("bench", password="bench-pass-1")
    make_organizer(organizer)
    client = Client()
    client.force_login(organizer)
    test_set = import_test_set("DSTC9 Track 1 (real)", "test", DATA / "data_eval" / "test" / "labels.json")
    archive = _zipped_results()

    def start_import(campaign):
        upload = SimpleUploadedFile("results.zip", archive, content_type="application/zip")
        return client.post(f"/evaluation/{campaign.pk}/human-evals/", {"file": upload})

    def start_plan(campaign):
        return client.post(f"/evaluation/{campaign.pk}/", {**PLAN, "pilot_campaign": campaign.pk})

    def finished(campaign, kind) -> CampaignRun:
        deadline = time.monotonic() + WAIT_SECONDS
        while time.monotonic() < deadline:
            run = CampaignRun.objects.filter(campaign=campaign, kind=kind).order_by("-pk").first()
            if run is not None and run.status in ("succeeded", "failed"):
                return run
            time.sleep(0.2)
        raise RuntimeError(f"the {kind} run did not finish within {WAIT_SECONDS} s; see {settings.VAR_DIR}/worker.log")

    figures = {}
    inline = create_campaign("inline", test_set, [], questions=["accuracy", "appropriateness"])
    with local_worker.inline():
        for kind, start in (("human_eval_import", start_import), ("plan", start_plan)):
            response, seconds = _timed(lambda start=start: start(inline))
            run = finished(inline, kind)
            assert response.status_code == 302 and run.status == "succeeded", (response.status_code, run.error)
            figures[f"{kind}_inline_request_seconds"] = round(seconds, 3)

    worker = local_worker.start(Path(settings.VAR_DIR))
    try:
        time.sleep(5)  # the worker's start-up (Django, Celery, beat) is not the request's
        queued = create_campaign("background", test_set, [], questions=["accuracy", "appropriateness"])
        for kind, start in (("human_eval_import", start_import), ("plan", start_plan)):
            began = time.perf_counter()
            response, seconds = _timed(lambda start=start: start(queued))
            run = finished(queued, kind)
            assert response.status_code == 302 and run.status == "succeeded", (response.status_code, run.error)
            figures[f"{kind}_background_request_seconds"] = round(seconds, 3)
            figures[f"{kind}_background_finished_seconds"] = round(time.perf_counter() - began, 3)
            figures[f"{kind}_request_ratio"] = round(seconds / figures[f"{kind}_inline_request_seconds"], 4)
        figures["ratings_imported"] = queued.ratings.count()
    finally:
        local_worker.stop(worker)
    return figures


if __name__ == "__main__":
    if sys.argv[1:] == ["--worker"]:
        print(json.dumps(_worker()))
