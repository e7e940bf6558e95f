"""Background work asked for by name, queued once the current transaction commits.

A service records what is to be done (a run row, a reading to transcribe) and asks for the work
with `after_commit("annotation.tasks.run_import", run.pk)`. It never imports a tasks module: tasks
load by id and call services, so the task's registered name is the contract between the two.
Queueing on commit means a worker never looks for a row that is not there yet, and a rolled-back
request queues nothing. Where tasks run in-process (development, tests, QUORUM_TASKS_INLINE) the
task runs at the commit.

`tests/test_extensions.py` reads every `after_commit` call in the code and checks that its name is a
registered task, so a renamed task fails the suite rather than a request.
"""
import logging
from collections.abc import Callable
from typing import Any

from celery import Task
from django.db import transaction

from .celery import app

logger = logging.getLogger(__name__)


def task_named(name: str) -> Task:
    """The registered Celery task `name`; LookupError names the known ones."""
    if name not in app.tasks:
        # Celery finds the apps' tasks modules lazily (worker start); a web process asks once here.
        app.autodiscover_tasks(force=True)
    try:
        return app.tasks[name]
    except KeyError:
        known = ", ".join(sorted(n for n in app.tasks if not n.startswith("celery.")))
        raise LookupError(f"no background task {name!r}; registered: {known}") from None


def runs_inline() -> bool:
    """Whether tasks run in the process that queues them (development, tests, QUORUM_TASKS_INLINE)."""
    return bool(app.conf.task_always_eager)


def queue_now(name: str, *args: Any, countdown: float | None = None) -> bool:
    """Queue task `name` now, to start `countdown` seconds from now when given (a debounce: later
    changes are picked up by the same run). When the broker cannot take it (down, unreachable) the failure is
    logged and False returned, never raised: the caller's rows are stored already and a beat sweep
    (`annotation.tasks.sweep_lost_work`) queues the work again, so a request never answers 500
    because the broker is down (issue 25). Where tasks run in-process the task's own errors propagate
    (and it runs at once: in-process work has no clock to wait on)."""
    task = task_named(name)
    if runs_inline():
        task.delay(*args)
        return True
    try:
        if countdown is None:
            task.delay(*args)
        else:
            task.apply_async(args, countdown=countdown)
    except Exception:  # noqa: BLE001 - kombu/redis/socket errors alike: the sweep catches up
        logger.warning("could not queue %s%r; a sweep will queue it again", name, args, exc_info=True)
        return False
    return True


def after_commit(
    name: str, *args: Any, countdown: float | None = None, on_refused: Callable[[], None] | None = None
) -> None:
    """Queue task `name` with `args` (JSON-serialisable ids) when the current transaction commits,
    to start `countdown` seconds later when given (`queue_now`: a broker that is down is logged, not raised).
    `on_refused` is called after the commit when the broker did not take the task, so the caller's
    run row can say so (the request has answered by then: it must not raise)."""
    task_named(name)  # a wrong name fails here, in the caller's transaction

    def queue() -> None:
        if not queue_now(name, *args, countdown=countdown) and on_refused is not None:
            on_refused()

    transaction.on_commit(queue)
