"""Two organizers creating chat jobs of one name at the same instant: the service's check reads
before either has committed, so only the database can refuse the second (on PostgreSQL, where
the second insert waits for the first's transaction)."""
import threading
import time
from unittest import mock

import pytest
from django.db import connection, connections

from annotation.models import Job
from evaluation.errors import EvaluationInputError
from evaluation.interactive.services import chats
from evaluation.interactive.services.chats import create_chat_job
from evaluation.interactive.services.systems import import_goals, register_system
from evaluation.models import DialogSystem

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

GOALS = b'{"id": "g1", "goal": {"restaurant": {"info": {"food": "chinese"}}}}\n'


def _waiting_for_a_lock() -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_locks WHERE NOT granted")
        return cursor.fetchone()[0] > 0


def test_two_chat_jobs_of_one_name_at_once_the_second_is_refused_with_the_forms_words():
    assert connection.vendor == "postgresql"
    goal_set = import_goals(name="goals", goals_file=GOALS)
    system = register_system(name="ref", url="http://127.0.0.1:9", secret="a-secret-of-twenty-chars")
    DialogSystem.objects.filter(pk=system.pk).update(check_passed=True)
    first_created, go_on = threading.Event(), threading.Event()
    launch = chats.launch_job
    outcomes: dict[str, object] = {}

    def launch_after_the_second_has_checked(job):
        if threading.current_thread().name == "first":  # holds its transaction open, its job not yet visible
            first_created.set()
            assert go_on.wait(30)
        return launch(job)

    def create(who, name):
        try:
            outcomes[who] = create_chat_job(name=name, systems=[system], goal_set=goal_set)
        except Exception as exc:  # noqa: BLE001 - asserted below
            outcomes[who] = exc
        finally:
            connections.close_all()

    with mock.patch.object(chats, "launch_job", launch_after_the_second_has_checked):
        first = threading.Thread(target=create, args=("first", "Round 1"), name="first")
        first.start()
        assert first_created.wait(30)
        second = threading.Thread(target=create, args=("second", "round 1 "), name="second")  # the same name, by the check's rule
        second.start()
        deadline = time.monotonic() + 10
        while not _waiting_for_a_lock() and second.is_alive() and time.monotonic() < deadline:
            time.sleep(0.05)  # until the second, past the check, waits on the first's name
        go_on.set()
        first.join(30)
        second.join(30)

    assert isinstance(outcomes["first"], Job), outcomes["first"]
    refused = outcomes["second"]
    assert isinstance(refused, EvaluationInputError), refused
    assert str(refused) == "a job named 'round 1' exists already; choose a new name"
    assert list(Job.objects.values_list("name", flat=True)) == ["Round 1"]
