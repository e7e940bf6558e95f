"""quorum.compiled_queries: a queryset compiled once gives what the queryset gives, refuses a query
whose SQL depends on its values, and on PostgreSQL is prepared on the server."""
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import Slot
from annotation.selectors.work import _work_slot_query, work_slot
from annotation.services.claims import claim_next_slot, submit
from quorum.compiled_queries import CompiledQuery
from tests.factories import good_answers, make_corpus, make_live_job

pytestmark = pytest.mark.django_db

FIELDS = ("id", "item_id", "job_id", "index", "position", "state", "worker_id", "claimed_at", "expires_at")
ANNOTATIONS = ("job_restricted", "job_lists_worker", "done_id", "your_responses", "history_json", "feedback_json")


@pytest.fixture
def claimed(make_annotator):
    """A worker who has answered one item and holds a claim on the next."""
    job = make_live_job(make_corpus(dialogs=2, user_turns=2))
    _user, worker = make_annotator("anna")
    first = claim_next_slot(job=job, worker=worker)
    submit(slot_id=first.pk, worker=worker, answers=good_answers(first.item))
    return claim_next_slot(job=job, worker=worker), worker, first


@pytest.mark.parametrize("for_page", [False, True])
def test_the_compiled_read_gives_what_the_queryset_gives(claimed, for_page):
    slot, worker, answered = claimed
    for slot_id in (slot.pk, answered.pk):
        expected = list(_work_slot_query(slot_id, worker.pk, for_page=for_page))[0]
        got = work_slot(slot_id, worker.pk, for_page=for_page)
        assert [getattr(got, f) for f in FIELDS] == [getattr(expected, f) for f in FIELDS]
        for name in ANNOTATIONS:
            assert getattr(got, name, "absent") == getattr(expected, name, "absent"), name
        with CaptureQueriesContext(connection) as captured:  # the joined rows came with it
            seen = (got.item.payload, got.item.turn.text, got.job.settings, got.worker.user.username, hasattr(got.job, "quality"))
        assert not captured.captured_queries
        assert seen == (expected.item.payload, expected.item.turn.text, expected.job.settings, expected.worker.user.username, False)
    assert work_slot(answered.pk, worker.pk).done_id is not None
    assert work_slot(slot.pk, worker.pk).done_id is None
    assert work_slot(slot.pk, worker.pk, for_page=True).your_responses == 1


def test_a_missing_slot_is_none(claimed):
    _slot, worker, _answered = claimed
    assert work_slot(Slot.objects.order_by("-pk").first().pk + 1000, worker.pk) is None


def test_a_query_whose_sql_depends_on_its_values_is_refused(claimed):
    # An IN list as long as the value says: each value compiles to other SQL.
    listed = CompiledQuery(lambda n: Slot.objects.filter(pk__in=[n, n + 1, n + 2][: 1 + n % 3]), n=int)
    with pytest.raises(ValueError, match="depends on its values"):
        listed.fetch(n=1)
    unused = CompiledQuery(lambda slot_id, other: Slot.objects.filter(pk=slot_id), slot_id=int, other=int)
    with pytest.raises(ValueError, match="not used"):
        unused.fetch(slot_id=1, other=2)


def test_values_are_not_mixed_up(claimed):
    slot, worker, answered = claimed
    by_worker = CompiledQuery(lambda worker_id, state: Slot.objects.filter(worker_id=worker_id, index=state).order_by("pk"), worker_id=int, state=int)
    assert [s.pk for s in by_worker.fetch(worker_id=worker.pk, state=0)] == sorted([slot.pk, answered.pk])
    assert by_worker.fetch(worker_id=worker.pk, state=1) == []
    assert by_worker.fetch(worker_id=worker.pk + 1, state=0) == []


@pytest.mark.postgres
def test_on_postgresql_the_read_is_prepared_once_and_logged(claimed):
    slot, worker, _answered = claimed
    with CaptureQueriesContext(connection) as captured:
        for _ in range(3):
            work_slot(slot.pk, worker.pk, for_page=True)
    assert len(captured.captured_queries) == 3
    assert all("annotation_slot" in q["sql"] for q in captured.captured_queries)  # the log shows the statement
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements WHERE statement LIKE %s", ["%history%"])
        prepared = cursor.fetchall()
    assert len(prepared) == 1  # one statement for every call


@pytest.mark.postgres
def test_without_prepared_statements_nothing_is_prepared(claimed, settings):
    settings.QUORUM_PREPARED_STATEMENTS = False
    slot, worker, _answered = claimed
    with connection.cursor() as cursor:
        cursor.execute("DEALLOCATE ALL")
    connection.connection._prepared.clear()  # psycopg's record of what it prepared, in step with the server
    assert work_slot(slot.pk, worker.pk, for_page=True).pk == slot.pk
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_prepared_statements")
        assert cursor.fetchone()[0] == 0
