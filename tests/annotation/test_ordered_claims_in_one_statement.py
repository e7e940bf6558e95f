"""A job whose type rotates each worker's order (OrdersClaims) is claimed by the one-statement claim on
PostgreSQL when its type says the start in SQL (`claim_start_expression`): the same slots in the same
order as the transactional claim, which still serves SQLite, quality policies and claim watchers.
"""
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection, connections, transaction

from annotation import task_types
from annotation.extensions import claim_watchers
from annotation.models import Job, Response, Slot
from annotation.services import claims
from annotation.services.claims import claim_next_slot, submit_response
from annotation.services.jobs import launch_job
from annotation.services.payload_jobs import create_payload_job
from quorum.compiled_queries import prepared_cursor

from .task_types.test_chat import CHAT
from .task_types.test_questionnaire import LIKERT_PAYLOAD

pytestmark = pytest.mark.postgres

GOALS = ["g1", "g2", "g1", "g3", "g2", "g1", "", "g3"]


def _job(key, payloads, redundancy=2):
    return launch_job(create_payload_job(name=f"{key} {len(payloads)}", task_type=key, payloads=payloads, redundancy=redundancy))


def _chat_payloads():
    return [{**CHAT, "goal_id": goal, "endpoint": f"e{n % 2}"} for n, goal in enumerate(GOALS)]


def _likert_payloads():
    return [{**LIKERT_PAYLOAD, "response": f"Answer {n}."} for n in range(7)]


def _start_in_sql(kind, job, worker):
    """The expression's value, bound as the claim binds it (a prepared statement's typed parameters)."""
    expression = kind.claim_start_expression(job.pk, worker.pk, **kind.claim_start_values(job, worker))
    sql, params = Job.objects.filter(pk=job.pk).annotate(start=expression).values_list("start").query.sql_with_params()
    with prepared_cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchone()[0]


class _Undo(Exception):
    pass


def _transactional_pick(job, worker, monkeypatch):
    """What the transactional claim would give the worker now (claimed in a savepoint, then undone)."""
    picked = None
    with monkeypatch.context() as patched:
        patched.setattr(claims, "_claims_in_one_statement", lambda *args: False)
        try:
            with transaction.atomic():
                slot = claim_next_slot(job=job, worker=worker)
                picked = slot and slot.pk
                raise _Undo
        except _Undo:
            pass
    return picked


@pytest.mark.django_db
@pytest.mark.parametrize("key,payloads", [("chat", _chat_payloads), ("likert", _likert_payloads), ("fed_turn", _likert_payloads)])
def test_the_start_in_sql_is_claim_start_for_every_worker_at_every_step(key, payloads, make_annotator):
    kind = task_types.get(key)
    made = payloads()
    if key == "fed_turn":
        made = [{"context": p["context"], "response": p["response"]} for p in made]
    job = _job(key, made)
    for n in range(6):
        worker = make_annotator(f"{key}-{n}")[1]
        for _step in range(len(made) + 1):
            # NULL and 0 both mean the plain order, as None and 0 do for claim_start.
            assert (_start_in_sql(kind, job, worker) or None) == (kind.claim_start(job, worker) or None)
            slot = claim_next_slot(job=job, worker=worker)
            if slot is None:
                break
            Slot.objects.filter(pk=slot.pk).update(state=Slot.State.SUBMITTED)


@pytest.mark.django_db
@pytest.mark.parametrize("key,payloads", [("chat", _chat_payloads), ("likert", _likert_payloads)])
def test_the_one_statement_claim_hands_out_what_the_transactional_one_would(key, payloads, make_annotator, monkeypatch):
    kind = task_types.get(key)
    job = _job(key, payloads())
    workers = [make_annotator(f"{key}-w{n}")[1] for n in range(4)]
    assert claims._claims_in_one_statement(kind, job, kind.claim_start_values(job, workers[0]))
    met = {w.pk: [] for w in workers}
    active = list(workers)
    while active:  # the workers in turn, each submitting before their next claim
        for worker in list(active):
            expected = _transactional_pick(job, worker, monkeypatch)
            slot = claim_next_slot(job=job, worker=worker)
            assert (slot and slot.pk) == expected
            if slot is None:
                active.remove(worker)
                continue
            assert claim_next_slot(job=job, worker=worker).pk == slot.pk  # a held claim is given again
            met[worker.pk].append(slot.item_id)
            Slot.objects.filter(pk=slot.pk).update(state=Slot.State.SUBMITTED)
    assert all(len(set(items)) == len(items) for items in met.values())  # never an item twice
    assert sum(len(items) for items in met.values()) == Slot.objects.filter(job=job).count()  # every slot taken


@pytest.mark.django_db(transaction=True)
def test_the_second_scan_runs_only_when_the_first_finds_nothing(make_annotator):
    """COALESCE is lazy: the scan before the worker's start locks no row when the one after it found a slot."""
    kind = task_types.get("likert")
    job = _job("likert", _likert_payloads(), redundancy=1)
    worker = next(w for n in range(50) if kind.claim_start(job, w := make_annotator(f"lazy-{n}")[1]))  # a start after 0
    start = kind.claim_start(job, worker)
    target, params = claims._rotated_pick(kind, job, worker, claims.timezone.now(), None, kind.claim_start_values(job, worker))
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (ANALYZE, COSTS OFF) SELECT {target}", params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert plan.count("never executed") >= 1, plan
    slot = claim_next_slot(job=job, worker=worker)
    assert slot.position == start


@pytest.mark.django_db(transaction=True)
def test_many_workers_chatting_at_once_never_share_a_slot(make_annotator):
    job = _job("chat", _chat_payloads() * 2, redundancy=3)
    workers = [make_annotator(f"chat-pg-{n}")[1] for n in range(10)]
    start_together = threading.Barrier(len(workers))

    def take_all(worker) -> int:
        start_together.wait()
        try:
            taken = 0
            while (slot := claim_next_slot(job=job, worker=worker)) is not None:
                Slot.objects.filter(pk=slot.pk).update(state=Slot.State.SUBMITTED)
                taken += 1
            return taken
        finally:
            connections.close_all()

    with ThreadPoolExecutor(len(workers)) as pool:
        taken = list(pool.map(take_all, workers))  # a thread's error is raised here
    assert sum(taken) == Slot.objects.filter(job=job, state=Slot.State.SUBMITTED).count() == Slot.objects.filter(job=job).count()
    per_worker_item = Counter(Slot.objects.filter(job=job).values_list("item_id", "worker_id"))
    assert max(per_worker_item.values()) == 1  # a worker never got two slots of one item


@pytest.mark.django_db
def test_a_job_whose_claims_are_watched_is_still_claimed_in_a_transaction(make_annotator):
    job = _job("likert", _likert_payloads())
    worker = make_annotator("watched")[1]
    kind = task_types.get("likert")
    with claim_watchers.override("test-watcher", lambda job: True):
        assert not claims._claims_in_one_statement(kind, job, kind.claim_start_values(job, worker))
        slot = claim_next_slot(job=job, worker=worker)
    assert slot.position == (kind.claim_start(job, worker) or 0)
    assert Response.objects.filter(slot=submit_response(slot_id=slot.pk, worker=worker, answers={"appropriateness": 4, "accuracy": 3}).slot).exists()


@pytest.mark.django_db
def test_a_rating_jobs_claim_builds_its_sql_once_per_process(make_annotator, monkeypatch):
    """Building the rotated pick's querysets cost a rating job's claim several times what running the
    statement did (perf/bench_rated.py): after the first claim, later raters' claims only bind
    their values, and still each gets the start claim_start says. (A chat's claim is still built each
    time: what it holds back is a query of paused systems the claim reads.)"""
    key = "likert"
    job = _job(key, _likert_payloads())
    kind = task_types.get(key)
    claim_next_slot(job=job, worker=make_annotator(f"{key}-first")[1])
    built = []
    real = claims._first_open_unless_held
    monkeypatch.setattr(claims, "_first_open_unless_held", lambda *args, **kwargs: built.append(args) or real(*args, **kwargs))
    for n in range(4):
        worker = make_annotator(f"{key}-later-{n}")[1]
        start = kind.claim_start(job, worker) or 0
        slot = claim_next_slot(job=job, worker=worker)
        assert slot.position >= start or not Slot.objects.filter(job=job, state=Slot.State.OPEN, position__gte=start).exists()
    assert built == []
