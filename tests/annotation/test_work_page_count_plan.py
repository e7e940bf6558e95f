"""The work page's "you have saved N responses" reads the worker's own slots, whatever PostgreSQL's
statistics say (annotation.selectors.work._worker_slots).

A job's statistics are gathered when it is made, with every slot open; until PostgreSQL analyzes the
table again, the planner believes no slot is submitted. Counted with the state in the filter, the
count then matched the job's (job, state, position) index and read every submitted slot of the job,
other workers' too, on every work page. Asserted on what the plan read, not on time."""
import pytest
from django.db import connection

from annotation.models import Slot, Worker
from annotation.selectors import work
from tests.factories import make_corpus, make_live_job

pytestmark = [pytest.mark.postgres, pytest.mark.django_db]


def _rows_read(plan: dict) -> int:
    """Rows every scan of the slot table produced or filtered out."""
    read = 0
    if plan.get("Relation Name") == "annotation_slot":
        read += plan.get("Actual Rows", 0) + plan.get("Rows Removed by Filter", 0)
    return read + sum(_rows_read(inner) for inner in plan.get("Plans", []))


def test_the_count_of_a_workers_responses_reads_only_their_slots():
    job = make_live_job(make_corpus(dialogs=150, user_turns=2))
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE annotation_slot")  # as after the job was made: every slot open
    busy, newcomer = (Worker.objects.create(external_id=name) for name in ("busy", "newcomer"))
    slots = list(Slot.objects.filter(job=job).order_by("position"))
    Slot.objects.filter(pk__in=[s.pk for s in slots[:250]]).update(state=Slot.State.SUBMITTED, worker=busy)
    Slot.objects.filter(pk__in=[s.pk for s in slots[250:253]]).update(state=Slot.State.SUBMITTED, worker=newcomer)

    assert work.response_count(newcomer, job) == 3
    assert work.response_count(busy, job) == 250
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL plan_cache_mode = force_custom_plan")  # as without prepared statements
    counting = work._worker_slots(newcomer.pk, job.pk).values("worker_id").annotate(n=work.SUBMITTED_COUNT).values("n")
    sql, params = counting.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql, params)
        plan = cursor.fetchone()[0][0]["Plan"]
    assert _rows_read(plan) <= 3  # the newcomer's own slots, not the busy worker's 250
