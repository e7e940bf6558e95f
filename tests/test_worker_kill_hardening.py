"""Done-when of issue 25, item 4, with a REAL Celery worker process on a Redis broker (the test's
own Redis database, QUORUM_TEST_REDIS_URL): the whole worker killed with SIGKILL in the middle of
an import and of an export loses nothing and leaves nothing "running" once the lost-work sweep has
passed its deadline (the runs fail with the reason, the import's uploads and the export's `.partial`
staging folder are removed, no half corpus or half export is left), and a worker started afterwards
does the work again. And a broker that is down (a closed port) during spoken submissions: no 500,
the readings are stored, and the sweep queues them once a broker is back, where the worker
transcribes them. The database is committed (transactional test) so the worker sees the rows."""
import json
import os
import signal
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest
import redis
from celery import Celery
from django.conf import settings
from django.utils import timezone

from annotation.models import Corpus, ExportRun, ImportRun, RunStatus, SpokenReading
from annotation.services import sweeps
from annotation.services.exports import create_export_run, export_directory
from annotation.services.imports import create_import_run
from quorum import background

from .evaluation.hostile import free_port

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow, pytest.mark.postgres, pytest.mark.redis]

ROOT = Path(__file__).resolve().parents[1]
BROKER = os.environ.get("QUORUM_TEST_REDIS_URL", "")  # the redis marker skips the tests without it


@pytest.fixture
def broker():
    """The test's Redis database, emptied before and after: no message of another run is redelivered."""
    client = redis.Redis.from_url(BROKER)
    client.flushdb()
    yield Celery("test-producer", broker=BROKER, set_as_current=False)  # not the app later tests queue to
    client.flushdb()


class Worker:
    def __init__(self, log: Path, pause: float = 0.0):
        db = settings.DATABASES["default"]
        env = {
            **os.environ, "QUORUM_ENV": "test", "DJANGO_SETTINGS_MODULE": "quorum.settings", "CELERY_BROKER_URL": BROKER,
            "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
            "QUORUM_EXPORT_DIR": str(settings.QUORUM_EXPORT_DIR), "QUORUM_IMPORT_DIR": str(settings.QUORUM_IMPORT_DIR),
            "MEDIA_ROOT": str(settings.MEDIA_ROOT), "QUORUM_TEST_SLOW_RUNS": str(pause),
        }
        self.log = log
        self.process = subprocess.Popen([sys.executable, "-m", "tests.celery_worker"], cwd=ROOT, env=env,
                                        stdout=log.open("ab"), stderr=subprocess.STDOUT, start_new_session=True)

    def kill(self) -> None:
        """SIGKILL to the worker and its child at once, as the OOM killer or a lost machine would."""
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(10)

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-3000:]


def wait_for(condition, worker: Worker, what: str, seconds: float = 120):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        if worker.process.poll() is not None:
            raise AssertionError(f"the worker exited while waiting for {what}: {worker.tail()}")
        time.sleep(0.2)
    raise AssertionError(f"no {what} within {seconds} s: {worker.tail()}")


def corpus_file(folder: Path, dialogs: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "data.jsonl"
    with path.open("w", encoding="utf-8") as out:
        for n in range(dialogs):
            turns = [{"speaker": "user", "text": f"A cheap place in the centre, number {n}.",
                      "slot_values": [{"slot": "restaurant-area", "value": "centre"}]},
                     {"speaker": "system", "text": "Lotus Corner."}]
            out.write(json.dumps({"dialog_id": f"d{n}", "turns": turns}) + "\n")
    return path


def past_the_deadline():
    return timezone.now() + timedelta(minutes=settings.QUORUM_RUN_DEADLINE_MINUTES + 1)


def test_a_worker_killed_during_an_import_and_an_export_leaves_nothing_running_after_the_sweep(broker, tmp_path):
    from annotation.services.jobs import create_job
    from tests.factories import make_corpus

    upload = corpus_file(Path(settings.QUORUM_IMPORT_DIR) / "kill", 3000)  # three batches of 1,000 dialogs
    job = create_job(corpus=make_corpus(name="exported", dialogs=30, user_turns=1), name="job", redundancy=1)
    worker = Worker(tmp_path / "worker.log", pause=1.0)
    try:
        imported = create_import_run(name="killed", source_format="jsonl", files={"data": upload})
        broker.send_task("annotation.tasks.run_import", args=[imported.pk])
        wait_for(lambda: ImportRun.objects.filter(pk=imported.pk, status=RunStatus.RUNNING, done__gt=0).exists(), worker, "import under way")
        worker.kill()

        worker = Worker(tmp_path / "worker.log", pause=1.0)
        exported = create_export_run(job)
        broker.send_task("annotation.tasks_exports.run_export", args=[exported.pk])
        staging = Path(settings.QUORUM_EXPORT_DIR) / f"job-{job.pk}"
        wait_for(lambda: ExportRun.objects.filter(pk=exported.pk, status=RunStatus.RUNNING, done__gt=0).exists()
                 and list(staging.glob(".*.partial")), worker, "export under way")
        worker.kill()
    finally:
        if worker.process.poll() is None:
            worker.kill()

    # What the kills left: both runs "running", a staging folder, the upload; no corpus, no export.
    assert ImportRun.objects.get(pk=imported.pk).status == ExportRun.objects.get(pk=exported.pk).status == RunStatus.RUNNING
    assert not Corpus.objects.filter(name="killed").exists()  # the import's one transaction went with it
    assert list(staging.glob(".*.partial")) and not export_directory(exported).exists() and upload.exists()

    assert sweeps.sweep_lost_work(timezone.now())["runs"]["failed"] == 0  # before the deadline: left alone
    swept = sweeps.sweep_lost_work(past_the_deadline())
    assert swept["runs"]["failed"] == 2 and swept["staging"] == 1
    for run in (ImportRun.objects.get(pk=imported.pk), ExportRun.objects.get(pk=exported.pk)):
        assert run.status == RunStatus.FAILED and "the worker running it was lost" in run.error and run.finished_at
    assert not list(staging.glob(".*.partial")) and not upload.exists()
    assert not ImportRun.objects.filter(status=RunStatus.RUNNING).exists() and not ExportRun.objects.filter(status=RunStatus.RUNNING).exists()

    # Nothing lost: the same import and export, asked again, are done by a new worker.
    worker = Worker(tmp_path / "worker.log")
    try:
        again = create_import_run(name="killed", source_format="jsonl", files={"data": corpus_file(Path(settings.QUORUM_IMPORT_DIR) / "again", 3000)})
        broker.send_task("annotation.tasks.run_import", args=[again.pk])
        export_again = create_export_run(job)
        broker.send_task("annotation.tasks_exports.run_export", args=[export_again.pk])
        wait_for(lambda: not ImportRun.objects.filter(pk=again.pk, status__in=[RunStatus.PENDING, RunStatus.RUNNING]).exists()
                 and not ExportRun.objects.filter(pk=export_again.pk, status__in=[RunStatus.PENDING, RunStatus.RUNNING]).exists(),
                 worker, "the runs asked again")
    finally:
        worker.kill()
    assert ImportRun.objects.get(pk=again.pk).status == RunStatus.SUCCEEDED, ImportRun.objects.get(pk=again.pk).error
    assert Corpus.objects.get(name="killed").dialogs.count() == 3000
    assert ExportRun.objects.get(pk=export_again.pk).status == RunStatus.SUCCEEDED
    assert (export_directory(export_again) / "responses.csv").exists()


@pytest.mark.speech
def test_a_broker_outage_during_spoken_submissions_is_no_500_and_the_sweep_queues_them_for_a_real_worker(
    broker, make_annotator, monkeypatch, tmp_path
):
    from tests.annotation.spoken_audio import speech, upload
    from tests.annotation.test_spoken_reading import spoken_job, submit

    closed = Celery("broker-down", broker=f"redis://127.0.0.1:{free_port()}/0", set_as_current=False)  # nothing listens there; kept from later tests
    monkeypatch.setattr(background, "runs_inline", lambda: False)
    monkeypatch.setattr("celery.app.task.Task.delay", lambda task, *args, **kwargs: closed.send_task(task.name, args=args))

    user, worker_row = make_annotator("reader")
    job = spoken_job()
    text = job.items.get().payload["utterance"]
    slot, posted = submit(job, user, worker_row, {"reading_1": upload("r1", speech(text)), "reading_2": upload("r2", speech(f"Well, {text}"))})
    assert posted.status_code == 302  # saved and sent on: the closed port was not a 500
    readings = SpokenReading.objects.filter(response__slot=slot)
    assert readings.count() == 2 and not readings.filter(transcribed_at__isnull=False).exists()

    # The broker is back: the beat sweep (past the grace period) queues them, a real worker transcribes.
    monkeypatch.setattr("quorum.background.queue_now", lambda name, *args: bool(broker.send_task(name, args=args)))
    later = timezone.now() + timedelta(minutes=settings.QUORUM_TRANSCRIBE_GRACE_MINUTES + 1)
    worker = Worker(tmp_path / "worker.log")
    try:
        assert sweeps.requeue_untranscribed(later) == 2
        wait_for(lambda: readings.filter(transcribed_at__isnull=False).count() == 2, worker, "transcripts", seconds=180)
    finally:
        worker.kill()
    assert all(reading.asr_text and not reading.asr_error for reading in readings.all())
