"""Background work through a real Celery worker and Redis broker, on PostgreSQL.

The rest of the suite runs tasks eagerly; this test proves the production path: a task queued on
commit reaches a separate worker process through Redis, and the status row shows the outcome.
"""
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.db import connection

from annotation.models import ImportRun, RunStatus
from annotation.services.imports import start_import
from quorum.celery import app as celery_app

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = Path(__file__).resolve().parents[1] / "fixtures" / "corpora"


def _drop_broker_pools():
    """Forget connections and producers made for the previous broker (the in-memory one)."""
    celery_app._pool = None
    celery_app.amqp._producer_pool = None


@pytest.fixture
def redis_celery(settings):
    url = os.environ["QUORUM_TEST_REDIS_URL"]
    db = connection.settings_dict
    env = {
        **os.environ,
        "QUORUM_ENV": "test",
        "CELERY_BROKER_URL": url,
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}",
    }
    import redis

    redis.Redis.from_url(url).flushdb()
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "quorum", "worker", "--pool=solo", "--loglevel=warning", "--without-heartbeat", "--without-gossip", "--without-mingle"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )
    old = {k: celery_app.conf[k] for k in ("broker_url", "task_always_eager")}
    celery_app.conf.update(broker_url=url, task_always_eager=False)
    _drop_broker_pools()
    try:
        yield worker
    finally:
        celery_app.conf.update(**old)
        _drop_broker_pools()
        worker.terminate()
        try:
            output, _ = worker.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            worker.kill()
            output, _ = worker.communicate()
        print("celery worker output:\n" + output.decode(errors="replace")[-5000:])


def _wait_for(run_id, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = ImportRun.objects.get(pk=run_id)
        if run.status in (RunStatus.SUCCEEDED, RunStatus.FAILED):
            return run
        time.sleep(0.2)
    raise AssertionError(f"import run {run_id} still {run.status} after {timeout}s")


def test_import_runs_in_a_celery_worker_through_redis(redis_celery, organizer, tmp_path):
    data = tmp_path / "data.json"
    data.write_bytes((SAMPLE / "multiwoz21-sample.json").read_bytes())
    run = start_import(name="via redis", source_format="multiwoz", files={"data": data}, created_by=organizer)
    assert ImportRun.objects.get(pk=run.pk).status == RunStatus.PENDING  # not run in this process
    run = _wait_for(run.pk)
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert run.corpus.dialogs.count() == 1
    assert run.done == run.total and run.total

    bad = tmp_path / "bad.json"
    bad.write_text('{"SNG1.json": {"log": [{"text": 1}]}}')
    failed = _wait_for(start_import(name="broken", source_format="multiwoz", files={"data": bad}).pk)
    assert failed.status == RunStatus.FAILED and "SNG1.json" in failed.error
