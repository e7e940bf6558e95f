"""A real Celery worker (prefork, one child) for the tests that kill one: `python -m tests.celery_worker`,
configured from the environment like any worker (QUORUM_ENV, DATABASE_URL, CELERY_BROKER_URL).

With QUORUM_TEST_SLOW_RUNS=<seconds> an import pauses that long after each batch of dialogs it
writes and an export after each row, so a test can see a run under way and kill the worker in the
middle of it; nothing else differs from the production worker. The pauses are set before the
child is forked, so the child runs them."""
import os
import time

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "quorum.settings")
django.setup()

from annotation.services import exports, imports  # noqa: E402 - after django.setup()
from quorum.celery import app  # noqa: E402


def slow_down(pause: float) -> None:
    write_batch, advance = imports._write_batch, exports._Tracker.advance

    def slow_batch(*args, **kwargs):
        write_batch(*args, **kwargs)
        time.sleep(pause)

    def slow_advance(self):
        advance(self)
        time.sleep(pause)

    imports._write_batch = slow_batch  # test scaffolding: a slower import
    exports._Tracker.advance = slow_advance  # and a slower export


if __name__ == "__main__":
    pause = float(os.environ.get("QUORUM_TEST_SLOW_RUNS") or 0)
    if pause:
        slow_down(pause)
    app.worker_main(["worker", "--pool=prefork", "--concurrency=1", "--loglevel=INFO", "--without-gossip", "--without-mingle", "--without-heartbeat"])
