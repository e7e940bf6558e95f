"""A response's life, transition by transition: every allowed move is made through the one service,
leaves an audit row and one signal; every other move is refused and changes nothing; what counts
is one queryset; evaluation follows the moves. The race between two movers runs on PostgreSQL."""
import threading

import pytest
from django.db import connection, connections

from annotation.models import Response, ResponseTransition, Worker
from annotation.services.claims import claim_next_slot, submit_response
from annotation.services.response_status import TransitionError, transition
from annotation.services.responses import confirm
from annotation.signals import response_status_changed
from tests.factories import good_answers, make_corpus, make_live_job

S = Response.Status
ALL = list(S)


def _store(job, name, provider=Worker.INHOUSE):
    worker = Worker.objects.create(provider=provider, external_id=name)
    slot = claim_next_slot(job=job, worker=worker)
    return submit_response(slot_id=slot.pk, worker=worker, answers=good_answers(slot.item))


def _response_in(job, name, status):
    """A stored in-house response moved to `status` by the service (through an allowed path)."""
    response = _store(job, name)
    paths = {
        S.ACCEPTED: [],
        S.AWAITING_REVIEW: [S.AWAITING_REVIEW],
        S.HELD: [S.HELD],
        S.REJECTED: [S.REJECTED],
        S.EXCLUDED: [S.EXCLUDED],
    }
    if status == S.AWAITING_CONFIRMATION:
        return _store(job, name + "-crowd", provider="prolific")
    for step in paths[status]:
        transition(response, step, actor="test")
    return response


@pytest.fixture
def job(db):
    return make_live_job(make_corpus(dialogs=4, user_turns=4), redundancy=3)


@pytest.fixture
def signals():
    seen = []

    def receiver(sender, response, from_status, to_status, actor, **kwargs):
        seen.append((response.pk, from_status, to_status, actor))

    response_status_changed.connect(receiver, dispatch_uid="test-response-life")
    yield seen
    response_status_changed.disconnect(dispatch_uid="test-response-life")


def test_an_in_house_response_is_stored_accepted_with_an_audit_row(job, signals):
    response = _store(job, "ana")
    assert response.status == S.ACCEPTED
    (row,) = ResponseTransition.objects.filter(response=response)
    assert (row.from_status, row.to_status, row.actor) == ("", S.ACCEPTED, "worker")
    assert signals == [(response.pk, "", S.ACCEPTED, "worker")]
    assert list(Response.objects.counted()) == [response]


def test_a_crowd_response_waits_for_the_provider_and_counts_only_once_confirmed(job, signals):
    response = _store(job, "PID1", provider="prolific")
    assert response.status == S.AWAITING_CONFIRMATION
    assert not Response.objects.counted().exists() and not Response.objects.confirmed().exists()
    assert confirm(response, actor="provider:prolific") is True
    response.refresh_from_db()
    assert response.status == S.ACCEPTED and list(Response.objects.counted()) == [response]
    assert confirm(response, actor="provider:prolific") is False  # a second confirmation changes nothing
    assert [(f, t, a) for _pk, f, t, a in signals] == [("", S.AWAITING_CONFIRMATION, "worker"), (S.AWAITING_CONFIRMATION, S.ACCEPTED, "provider:prolific")]


@pytest.mark.parametrize("start", ALL, ids=[s.value for s in ALL])
@pytest.mark.parametrize("target", ALL, ids=[s.value for s in ALL])
def test_every_move_is_allowed_or_refused_by_the_table(job, start, target):
    response = _response_in(job, "w", start)
    before = ResponseTransition.objects.filter(response=response).count()
    allowed = target in Response.TRANSITIONS[start]
    if start == target:
        assert transition(response, target, actor="test") is None  # already there: no row, no signal
        assert ResponseTransition.objects.filter(response=response).count() == before
    elif allowed:
        row = transition(response, target, actor="reviewer", reason="because")
        assert (row.from_status, row.to_status, row.actor, row.reason) == (start, target, "reviewer", "because")
        response.refresh_from_db()
        assert response.status == target
    else:
        with pytest.raises(TransitionError, match="cannot become"):
            transition(response, target, actor="test")
        response.refresh_from_db()
        assert response.status == start
        assert ResponseTransition.objects.filter(response=response).count() == before


def test_nothing_returns_to_awaiting_confirmation_and_only_accepted_counts():
    assert all(S.AWAITING_CONFIRMATION not in targets for source, targets in Response.TRANSITIONS.items() if source)
    assert Response.COUNTED == (S.ACCEPTED,)


def test_a_status_nobody_knows_is_refused_by_the_database(job):
    from django.db import IntegrityError, transaction

    response = _store(job, "ana")
    with pytest.raises(IntegrityError), transaction.atomic():
        Response.objects.filter(pk=response.pk).update(status="submitted")


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_movers_at_once_make_one_move_each_in_turn_and_the_audit_has_both():
    """A reviewer excludes while the voting service accepts: the row lock orders them; the audit
    trail and the final status agree, and no move is lost or applied from a stale state."""
    assert connection.vendor == "postgresql"
    job = make_live_job(make_corpus(dialogs=1, user_turns=1), redundancy=1)
    response = _store(job, "ana")
    transition(response, S.AWAITING_REVIEW, actor="voting")
    barrier = threading.Barrier(2)
    errors = []

    def move(target, actor):
        try:
            barrier.wait()
            transition(Response.objects.get(pk=response.pk), target, actor=actor)
        except Exception as exc:  # noqa: BLE001 - the test reports it
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=move, args=(S.EXCLUDED, "reviewer")), threading.Thread(target=move, args=(S.ACCEPTED, "voting"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    response.refresh_from_db()
    rows = list(ResponseTransition.objects.filter(response=response).order_by("pk").values_list("from_status", "to_status"))
    assert rows[:2] == [("", S.ACCEPTED), (S.ACCEPTED, S.AWAITING_REVIEW)]
    # Both moves happened, each from the state the other left: the chain is unbroken.
    chain = rows[2:]
    assert len(chain) == 2 and chain[0][0] == S.AWAITING_REVIEW and chain[1][0] == chain[0][1]
    assert response.status == chain[1][1]
