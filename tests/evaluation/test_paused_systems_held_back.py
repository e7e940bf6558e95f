"""A paused system gets no new chats from the very next claim, whoever paused it and in whichever
process: the claim reads the paused systems inside its own statement (`SystemsRelay.paused_endpoints_query`),
on the one-statement claim and the transactional one alike, and nothing is cached to go stale."""
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotation import chat_relay, task_types
from annotation.chat_relay import ChatRelay
from annotation.extensions import chat_relays, claim_watchers
from annotation.services.claims import claim_next_slot
from evaluation.interactive.services.chats import create_chat_job
from evaluation.models import DialogSystem, GoalSet, UserGoal

pytestmark = pytest.mark.django_db


@pytest.fixture
def chat_job():
    goal_set = GoalSet.objects.create(name="goals")
    for key in ("g1", "g2"):
        UserGoal.objects.create(goal_set=goal_set, key=key, goal={"restaurant": {"info": {"food": key}}})
    systems = [
        DialogSystem.objects.create(name=name, url="http://127.0.0.1:9", secret="s" * 20, public_id=f"{name}-id", check_passed=True)
        for name in ("one", "two")
    ]
    return create_chat_job(name="chat", systems=systems, goal_set=goal_set, dialogs_per_goal=2), systems


def _pause(system):
    # As any writer would (the pausing rule, an organizer, the admin): nothing else is told.
    DialogSystem.objects.filter(pk=system.pk).update(paused_at=timezone.now(), paused_reason="kept failing")


def _endpoints_claimed(job, make_annotator, names):
    return {claim_next_slot(job=job, worker=make_annotator(name)[1]).item.payload["endpoint"] for name in names}


def test_asking_what_is_held_back_reads_nothing(chat_job):
    job, _systems = chat_job
    with CaptureQueriesContext(connection) as captured:
        held = task_types.get(job.task_type).held_back(job)
    assert captured.captured_queries == []
    assert set(held) == {"payload__endpoint__in"}


@pytest.mark.parametrize("in_a_transaction", [False, True], ids=["one statement", "transactional claim"])
def test_a_pause_and_a_resume_count_from_the_next_claim(chat_job, make_annotator, in_a_transaction):
    job, (one, two) = chat_job
    watcher = (lambda _job: True) if in_a_transaction else None  # a watcher makes the claim transactional
    with claim_watchers.override("test-transactional", watcher):
        _pause(one)
        assert _endpoints_claimed(job, make_annotator, ["a", "b", "c", "d"]) == {two.public_id}  # its four chats
        assert claim_next_slot(job=job, worker=make_annotator("e")[1]) is None  # only the paused system's are left
        DialogSystem.objects.filter(pk=one.pk).update(paused_at=None, paused_reason="")
        assert _endpoints_claimed(job, make_annotator, ["f"]) == {one.public_id}

def test_a_second_relay_that_pauses_by_a_set_is_held_back_too(chat_job):
    _job, (one, _two) = chat_job
    _pause(one)

    class Pauses(ChatRelay):
        def paused_endpoints(self):
            return {"elsewhere"}

    with chat_relays.override("another", Pauses()):
        assert chat_relay.paused_endpoints() == {one.public_id, "elsewhere"}
    with chat_relays.override("another", ChatRelay()):  # pauses nothing: the query stands alone
        assert not isinstance(chat_relay.paused_endpoints(), set)
