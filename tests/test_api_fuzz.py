"""Schemathesis against the OpenAPI schema (`/api/schema/`), in-process through Django's WSGI app
with an organizer's token: no generated request may get a 5xx, and every response must be one the
schema documents (status code, content type, body).

Bounded and deterministic, so it can run in every `make test`: a few examples per operation, drawn
with `derandomize=True` (the same cases on every run, no example database), no deadline. Path
parameters named `id` point at objects that exist, so the operations on one object are reached,
not only their 404s. Everything runs in the test's transaction; nothing is committed, so no task
is queued (tasks run on commit).

Two runs: positive (requests the schema allows: no 5xx, every response as documented) and negative
(requests the schema forbids — wrong types, missing required fields, values out of range: also
`negative_data_rejection`, i.e. each must be refused with a 4xx, never accepted).
"""
import functools
import re
import time

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections, transaction
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from rest_framework.authtoken.models import Token
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_schema_conformance,
    status_code_conformance,
)

from annotation.services.jobs import create_job
from tests.factories import make_corpus

pytestmark = [pytest.mark.django_db, pytest.mark.fuzz, pytest.mark.slow]

MAX_EXAMPLES = {GenerationMode.POSITIVE: 40, GenerationMode.NEGATIVE: 20}  # per operation (64 operations)
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]
EXTRA_CHECKS = {GenerationMode.POSITIVE: [], GenerationMode.NEGATIVE: [negative_data_rejection]}

# Operations that call a crowd provider's API (launch, pay, ask for assignments): their behaviour
# is held by the provider contract suite (tests/hits/), against fakes, not by random input.
SKIPPED = re.compile(r"^POST /api/crowd/jobs/\{id\}/(launch|settle|bonus|reconcile)/$")


@pytest.fixture
def connection_kept():
    """Django closes the database connection at the end of every request it serves (the WSGI
    handler's signals); the test's transaction would go with it. Django's own test client turns
    this off while it serves a request; the WSGI app schemathesis calls needs the same."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def objects(organizer, connection_kept):
    """One object of each kind the API addresses by id, and the organizer's token."""
    from evaluation.campaigns.services.campaigns import create_campaign
    from evaluation.campaigns.services.imports import import_test_set

    from .evaluation.conftest import DSTC9

    corpus = make_corpus()
    job = create_job(corpus=corpus, name="fuzzed job", redundancy=1)
    test_set = import_test_set("DSTC9 Track 1", "test", DSTC9 / "labels.json", DSTC9 / "knowledge.json")
    campaign = create_campaign("fuzzed", test_set, [])
    token = Token.objects.create(user=organizer)
    ids = {"corpora": corpus.pk, "jobs": job.pk, "crowd": job.pk, "test-sets": test_set.pk, "campaigns": campaign.pk}
    return token.key, ids


SETTINGS = settings(
    derandomize=True,  # the same cases on every run
    deadline=None,
    database=None,  # nothing remembered between runs either
    suppress_health_check=list(HealthCheck),
    report_multiple_bugs=False,
)


@functools.cache
def _schema():
    """The schema, served once for both runs: building it (drf-spectacular) and reading it
    (schemathesis) is the same work each time, and neither run changes it."""
    return schemathesis.openapi.from_wsgi("/api/schema/", get_wsgi_application())


def _without_defaults(fuzz):
    """Hypothesis refuses a test function with default arguments; the label is bound here instead."""
    return lambda case: fuzz(case)


def _path_ids(path: str, ids: dict) -> dict:
    for prefix, pk in ids.items():
        if f"/{prefix}/{{id}}" in path:
            return {"id": pk}
    return {}


def _nothing_but_the_id(operation) -> bool:
    """The operation takes its path's id and nothing else a negative case could spoil: no other path
    parameter, no query parameter, no body (the headers and cookies are the schema's security,
    which schemathesis leaves alone)."""
    return len(operation.path_parameters) == 1 and not operation.query and not operation.body


def _spoilable(operation) -> bool:
    return bool(operation.path_parameters or operation.query or operation.body)


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE], ids=["positive", "negative"])
def test_the_api_answers_generated_requests_without_server_errors_and_as_documented(objects, capsys, mode):
    key, ids = objects
    checks = CHECKS + EXTRA_CHECKS[mode]
    headers = {"Authorization": f"Token {key}"}
    schema = _schema()
    failures, counts = [], {}
    started = time.monotonic()
    for result in schema.get_all_operations():
        operation = result.ok()
        label = f"{operation.method.upper()} {operation.path}"
        if SKIPPED.match(label):
            continue
        def fuzz(case, label=label):
            counts[label] = counts.get(label, 0) + 1
            case.call_and_validate(headers=headers, checks=checks)

        # With the path's id fixed, an operation with nothing else to spoil has no invalid request:
        # the negative run then spoils the id itself (a 404 is the refusal). Where the schema says
        # so already, the id is spoilt at once: Hypothesis would only give up (Unsatisfiable) after
        # a thousand draws, a second or two an operation, and make no request.
        attempts = [_path_ids(operation.path, ids)]
        if mode == GenerationMode.NEGATIVE and attempts[0]:
            attempts = [{}] if _nothing_but_the_id(operation) else [*attempts, {}]
        elif mode == GenerationMode.NEGATIVE and not _spoilable(operation):
            continue  # no parameter and no body: no request the schema forbids (Unsatisfiable too)
        for path_ids in attempts:
            strategy = operation.as_strategy(mode, path_parameters=path_ids or None)
            try:
                # A savepoint per operation, rolled back after it: a database error in one, or what it
                # wrote (DELETE of the fuzzed campaign), cannot spoil the next ones.
                with transaction.atomic():
                    settings(SETTINGS, max_examples=MAX_EXAMPLES[mode])(given(case=strategy)(_without_defaults(fuzz)))()
                    transaction.set_rollback(True)
                break
            except Unsatisfiable:
                continue
            except (Exception, BaseExceptionGroup) as exc:  # noqa: BLE001 - schemathesis's FailureGroup; report every operation's failure
                failures.append(f"{label}: {exc}")
                break
    elapsed = time.monotonic() - started
    with capsys.disabled():
        print(f"\nschemathesis ({mode.value}): {len(counts)} operations, {sum(counts.values())} requests, {elapsed:.0f} s")
    assert not failures, "\n\n".join(failures)
