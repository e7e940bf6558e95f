"""Lost background work comes back (issue 25, item 4): a broker that is down never turns a saved
submission into a 500, and the lost-work sweep queues again what was lost, fails runs left
"running" by a killed worker with the reason, and removes stale staging folders."""
import os
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import ExportRun, ImportRun, RunStatus, SpokenReading
from annotation.services import sweeps
from quorum import background


def test_queue_now_logs_a_broker_outage_instead_of_raising(broker_down, caplog):
    assert background.queue_now("annotation.tasks.transcribe_reading", 1) is False
    assert broker_down == [(1,)] and "a sweep will queue it again" in caplog.text


@pytest.mark.django_db
@pytest.mark.speech
def test_a_spoken_submission_while_the_broker_is_down_is_saved_answered_and_swept_later(
    broker_down, make_annotator, monkeypatch, settings, django_capture_on_commit_callbacks
):
    from tests.annotation.spoken_audio import speech, upload
    from tests.annotation.test_spoken_reading import spoken_job, submit

    user, worker = make_annotator("reader")
    job = spoken_job()
    text = job.items.get().payload["utterance"]
    with django_capture_on_commit_callbacks(execute=True):
        slot, posted = submit(job, user, worker, {"reading_1": upload("r1", speech(text)), "reading_2": upload("r2", speech(f"Well, {text}"))})
    assert posted.status_code == 302  # saved and sent on, not a 500
    readings = SpokenReading.objects.filter(response__slot=slot)
    assert readings.count() == 2 and not readings.filter(transcribed_at__isnull=False).exists()
    assert len(broker_down) == 2  # both were tried

    later = timezone.now() + timedelta(minutes=settings.QUORUM_TRANSCRIBE_GRACE_MINUTES + 1)
    assert sweeps.requeue_untranscribed(later) == 0  # the broker is still down: nothing lost, tried again next sweep
    queued = []
    monkeypatch.setattr("quorum.background.queue_now", lambda name, *args: queued.append((name, *args)) or True)
    assert sweeps.requeue_untranscribed(timezone.now()) == 0  # too young: its task may still be on the way
    assert sweeps.requeue_untranscribed(later) == 2
    assert sorted(q[1] for q in queued) == sorted(readings.values_list("pk", flat=True))


@pytest.mark.django_db
def test_the_sweep_requeues_lost_readings_fails_stuck_runs_and_removes_staging(monkeypatch, settings, tmp_path):
    queued = []
    monkeypatch.setattr("quorum.background.queue_now", lambda name, *args: queued.append((name, *args)) or True)
    now = timezone.now()
    old = now - timedelta(minutes=settings.QUORUM_RUN_DEADLINE_MINUTES + 1)
    upload = settings.QUORUM_IMPORT_DIR / "0f0f" / "data.jsonl"
    upload.parent.mkdir(parents=True)
    upload.write_text("{}")
    stuck_import = ImportRun.objects.create(corpus_name="c", source_format="jsonl", status=RunStatus.RUNNING, files={"data": str(upload)})
    ImportRun.objects.filter(pk=stuck_import.pk).update(started_at=old)
    fresh_import = ImportRun.objects.create(corpus_name="d", source_format="jsonl", status=RunStatus.RUNNING, started_at=now)
    lost_pending = ImportRun.objects.create(corpus_name="e", source_format="jsonl")
    ImportRun.objects.filter(pk=lost_pending.pk).update(created_at=old)

    staging = settings.QUORUM_EXPORT_DIR / "job-1" / ".run-7-abc.partial"
    staging.mkdir(parents=True)
    (staging / "part.json").write_text("{}")
    os.utime(staging, (time.time() - 3 * 3600, time.time() - 3 * 3600))
    young = settings.QUORUM_EXPORT_DIR / "job-1" / ".run-8-def.partial"
    young.mkdir()

    found = sweeps.sweep_lost_work(now)
    assert found["runs"] == {"requeued": 1, "failed": 1} and found["staging"] == 1
    assert ("annotation.tasks.run_import", lost_pending.pk) in queued
    stuck_import.refresh_from_db()
    assert stuck_import.status == RunStatus.FAILED and "worker running it was lost" in stuck_import.error and stuck_import.finished_at
    assert ImportRun.objects.get(pk=fresh_import.pk).status == RunStatus.RUNNING
    assert not staging.exists() and young.exists() and not upload.exists()
    assert ExportRun.objects.count() == 0 and SpokenReading.objects.count() == 0


@pytest.mark.django_db
def test_statistics_are_refreshed_after_a_large_bulk_write(monkeypatch):
    """Issue 25: a job made right after a large import was planned on stale statistics (68 s, not 1.2 s)."""
    from django.db import connection

    from annotation.models import Item, Slot
    from annotation.services import bulk

    if connection.vendor != "postgresql":
        pytest.skip("ANALYZE is PostgreSQL's")
    assert bulk.refresh_statistics(10, Item, Slot) is False  # a small write: autovacuum is soon enough
    monkeypatch.setattr(bulk, "ANALYZE_AFTER_ROWS", 1)
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as ran:
        assert bulk.refresh_statistics(10, Item, Slot) is True
    assert any(q["sql"] == 'ANALYZE "annotation_item", "annotation_slot"' for q in ran.captured_queries)
    from tests.factories import make_corpus, make_live_job

    analyzed = []
    monkeypatch.setattr("annotation.services.jobs.refresh_statistics", lambda rows, *models: analyzed.append((rows, models)))
    make_live_job(make_corpus(name="c", dialogs=2, user_turns=2), task_type="rewrite", name="j")
    assert analyzed and analyzed[0][0] > 0 and analyzed[0][1] == (Item, Slot)



@pytest.mark.parametrize(
    "sweep, selector, task",
    [
        ("annotation.tasks.sweep_worker_flags", "annotation.services.flag_runs.jobs_to_sweep", "annotation.tasks.apply_worker_flags"),
        ("hits.tasks.reconcile_all", "hits.services.reconcile.jobs_to_reconcile", "hits.tasks.reconcile_job"),
        ("evaluation.tasks.sweep_adaptive_campaigns", "evaluation.tasks.campaigns_to_look_at", "evaluation.tasks.run_adaptive_look"),
    ],
)
@pytest.mark.django_db  # a refused flag run's row is told when the next sweep comes
def test_a_beat_sweep_goes_through_its_list_while_the_broker_is_down(sweep, selector, task, broker_down, monkeypatch, caplog):
    """A refused task does not end the sweep: every one is tried and logged, the sweep says how many
    were queued (none), and the next beat comes round to the same list."""
    monkeypatch.setattr(selector, lambda: [11, 12])
    assert background.task_named(sweep)() == 0
    assert broker_down == [(11,), (12,)]
    assert caplog.text.count(f"could not queue {task}") == 2
