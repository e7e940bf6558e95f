"""Asking for a pairwise job's report again (`pairwise.request_report`, on every counted vote): one
statement records the pending report, or finds that one waits, with no savepoint in the vote's
transaction; the constraint keeps one pending report per job."""
import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from annotation.models import RunStatus
from evaluation.campaigns.services import pairwise
from evaluation.models import PairwiseReport
from tests.annotation.task_types.contract import payload_job
from tests.annotation.task_types.test_pairwise import PAIR

pytestmark = pytest.mark.django_db


@pytest.fixture
def job():
    return payload_job("pairwise", [PAIR])


def test_a_request_records_a_pending_report_in_one_statement_and_the_next_joins_it(job):
    with transaction.atomic(), CaptureQueriesContext(connection) as captured:
        first = pairwise.request_report(job)
    inserts = [q["sql"] for q in captured.captured_queries if "pairwisereport" in q["sql"]]
    assert len(inserts) == 1 and "SAVEPOINT" not in " ".join(q["sql"] for q in captured.captured_queries)
    stored = PairwiseReport.objects.get()
    assert (stored.pk, stored.status, stored.job_id, stored.created_at) == (first.pk, RunStatus.PENDING, job.pk, first.created_at)
    assert not first._state.adding
    with transaction.atomic():
        again = pairwise.request_report(job)
    assert again.pk == first.pk and PairwiseReport.objects.count() == 1


def test_once_the_waiting_report_started_a_change_gets_a_report_of_its_own(job):
    first = pairwise.request_report(job)
    PairwiseReport.objects.filter(pk=first.pk).update(status=RunStatus.RUNNING)  # it has read the votes
    second = pairwise.request_report(job)
    assert second.pk != first.pk and second.status == RunStatus.PENDING
    assert PairwiseReport.objects.filter(job=job, status=RunStatus.PENDING).count() == 1
