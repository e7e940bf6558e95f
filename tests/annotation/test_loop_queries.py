"""The annotation loop's database cost: one cycle (submit an item, follow the redirect to the next
item's page) for an in-house annotator on a rewrite job made by `create_job` stays within
MAX_QUERIES round trips, BEGIN and COMMIT included (issue 8, item 5; perf/bench_claims.py); so does
a cycle of every other registered type, on the job its contract test makes.

Run on PostgreSQL with real transactions: that is where the one-statement claim runs and where
the commit hooks (hits' receiver) fire, as in production.
"""
import re

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.models import Item, Response, ResponseTransition, Slot
from annotation.selectors.jobs import dialog_history
from annotation.selectors.work import history_of, work_slot
from annotation.work_tokens import read_token
from tests.factories import good_answers, make_corpus, make_live_job

from .task_types.contract import contract_for, contract_params

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

MAX_QUERIES = 10
#: The page script's cycle (one request): what issue 26 measured, and no more; 8 when sessions come
#: from a shared cache.
ONE_REQUEST_MAX_QUERIES = 9


def _token(url: str) -> str:
    return re.search(r"/work/([^/]+)/", url).group(1)


def _answers_for(url) -> dict:
    return good_answers(Slot.objects.select_related("item").get(pk=read_token(_token(url))[0]).item)


def _cycle(client, url, answers=None):
    """POST the item's four rewrites, then GET the page the redirect names. Returns that URL and the page."""
    posted = client.post(url, answers or _answers_for(url))
    assert posted.status_code == 302, posted.content[:2000]
    page = client.get(posted["Location"])
    assert page.status_code == 200, page.content[:2000]
    return posted["Location"], page


def _listing(queries) -> str:
    return "\n".join(f"{n:2d}. {q['sql']}" for n, q in enumerate(queries, 1))


@pytest.fixture
def annotator_on_a_job(make_annotator):
    job = make_live_job(make_corpus(dialogs=4, user_turns=3))
    user, worker = make_annotator("anna")
    client = Client()
    client.force_login(user)
    claimed = client.post(reverse("job-next", args=[job.pk]))
    assert claimed.status_code == 302
    return client, claimed["Location"], job, worker


def test_one_cycle_costs_at_most_ten_queries(annotator_on_a_job):
    client, url, job, worker = annotator_on_a_job
    url, _page = _cycle(client, url)  # warm-up: per-process caches (the item count) fill here

    answers = _answers_for(url)  # the annotator's typing, outside the count
    with CaptureQueriesContext(connection) as captured:
        next_url, page = _cycle(client, url, answers)

    assert len(captured.captured_queries) <= MAX_QUERIES, (
        f"one annotation cycle took {len(captured.captured_queries)} queries (at most {MAX_QUERIES}):\n"
        + _listing(captured.captured_queries)
    )
    # ... and it still did the whole cycle: the response, its audit row, the item done, the next claim.
    submitted = Slot.objects.get(pk=read_token(_token(url))[0])
    response = Response.objects.get(slot=submitted)
    assert response.status == Response.Status.ACCEPTED
    assert ResponseTransition.objects.filter(response=response, from_status="", to_status="accepted").exists()
    assert submitted.state == Slot.State.SUBMITTED and submitted.item.state == Item.State.COMPLETE
    following = Slot.objects.get(pk=read_token(_token(next_url))[0])
    assert following.state == Slot.State.CLAIMED and following.worker_id == worker.pk
    assert next_url.endswith("?saved=1")


def test_one_request_cycle_costs_no_more_than_the_two_request_one(annotator_on_a_job):
    """The page script's cycle (issue 26): the submit is answered with the next item's page."""
    client, url, _job, worker = annotator_on_a_job
    url, _page = _cycle(client, url)  # warm-up, as above

    answers = _answers_for(url)
    with CaptureQueriesContext(connection) as captured:
        page = client.post(url, answers, HTTP_X_QUORUM_CYCLE="page", HTTP_ACCEPT="text/html")

    assert page.status_code == 200, page.content[:2000]
    assert len(captured.captured_queries) <= ONE_REQUEST_MAX_QUERIES, (
        f"one single-request cycle took {len(captured.captured_queries)} queries (at most {ONE_REQUEST_MAX_QUERIES}):\n"
        + _listing(captured.captured_queries)
    )
    following = Slot.objects.get(pk=read_token(_token(page["X-Quorum-Location"]))[0])
    assert following.state == Slot.State.CLAIMED and following.worker_id == worker.pk
    assert Response.objects.get(slot_id=read_token(_token(url))[0]).status == Response.Status.ACCEPTED
    assert f'action="/work/{_token(page["X-Quorum-Location"])}/"' in page.content.decode()


def test_with_sessions_in_a_shared_cache_the_cycle_reads_no_session(annotator_on_a_job, settings):
    """QUORUM_SESSION_ENGINE's default with a shared CACHE_URL (quorum/settings.py): cached_db."""
    settings.SESSION_ENGINE = "quorum.sessions.cached_db"
    _client, url, _job, worker = annotator_on_a_job
    client = Client()  # its middleware is loaded with the engine above
    client.force_login(worker.user)  # the session lives in the cache too
    url, _page = _cycle(client, url)

    answers = _answers_for(url)
    with CaptureQueriesContext(connection) as captured:
        page = client.post(url, answers, HTTP_X_QUORUM_CYCLE="page", HTTP_ACCEPT="text/html")

    assert page.status_code == 200
    assert not [q for q in captured.captured_queries if "django_session" in q["sql"]], _listing(captured.captured_queries)
    assert len(captured.captured_queries) <= ONE_REQUEST_MAX_QUERIES - 1, _listing(captured.captured_queries)
    assert Slot.objects.get(pk=read_token(_token(page["X-Quorum-Location"]))[0]).worker_id == worker.pk


def test_the_page_read_brings_the_same_history_as_the_plain_one(annotator_on_a_job):
    client, url, _job, _worker = annotator_on_a_job
    url, _page = _cycle(client, url)
    url, page = _cycle(client, url)
    slot_id, worker_id = read_token(_token(url))
    slot = work_slot(slot_id, worker_id, for_page=True)
    assert history_of(slot) == dialog_history(Item.objects.get(pk=slot.item_id))
    assert len(history_of(slot)) > 1
    assert slot.your_responses == 2
    for turn in history_of(slot)[:-1]:
        assert turn["text"] in page.content.decode()


@pytest.mark.parametrize("key", contract_params())
def test_every_task_types_cycle_keeps_the_budget(key, make_annotator, monkeypatch):
    """The same budget for every registered type, on the job its own contract test makes
    (`task_types/test_<key>.py`): a type whose `page_context` or template reads more on every page
    view fails here, whoever wrote it. What a type's cycle does beyond a rewrite's by design (a vote
    tallies its round, a questionnaire claims in a transaction) is its contract's `cycle_queries`,
    said in its own test with the reason. Tasks the cycle queues are queued, not run: a worker runs
    them, not the request (in tests they would otherwise run inline)."""
    contract = contract_for(key)
    budget = contract.cycle_queries or MAX_QUERIES
    queued = []
    monkeypatch.setattr("celery.app.task.Task.apply_async", lambda task, *args, **kwargs: queued.append(task.name))
    with contract.environment():
        job = contract.make_job(make_annotator)
        user, _worker = make_annotator("loop")
        client = Client()
        client.force_login(user)
        url = client.post(reverse("job-next", args=[job.pk]))["Location"]
        assert client.get(url).status_code == 200  # warm-up: per-process caches fill here
        item = Slot.objects.select_related("item__job").get(pk=read_token(_token(url))[0]).item
        answers = contract.good_answers(item, 0)
        with CaptureQueriesContext(connection) as captured:
            next_url, _page = _cycle(client, url, answers)

    assert f"/work/{_token(next_url)}/" in next_url  # the next item of the job, not the done page
    assert len(captured.captured_queries) <= budget, (
        f"one {key} cycle took {len(captured.captured_queries)} queries (at most {budget}):\n" + _listing(captured.captured_queries)
    )
