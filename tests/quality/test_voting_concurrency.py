"""Voting and re-collection under real concurrency, on PostgreSQL: writers and voters at once.

Run with DATABASE_URL=postgres://postgres@127.0.0.1:5432/quorum_quality.
"""
import threading
import time
from collections import Counter

import pytest
from django.db import connection, connections

from annotation.models import Item, Response, ReviewRound, Slot
from annotation.services.claims import claim_next_slot, submit_response
from tests.factories import good_answers

from .helpers import careful_verdict, junk_answers, voting_job

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

THREADS = 24
DEADLINE_SECONDS = 120


def _all_settled(job, vote_job):
    return (
        not ReviewRound.objects.filter(item__job=job, state=ReviewRound.State.VOTING).exists()
        and not Slot.objects.filter(job__in=[job, vote_job]).exclude(state=Slot.State.SUBMITTED).exists()
    )


def test_concurrent_writers_and_voters_settle_every_round_exactly_once(make_annotator):
    assert connection.vendor == "postgresql"
    job, vote_job = voting_job(dialogs=6, user_turns=3, max_rounds=3)  # 18 items
    workers = [make_annotator(f"w{i:02d}")[1] for i in range(THREADS)]
    errors = []
    start = threading.Barrier(THREADS)

    def work(index, worker):
        careless = index % 3 == 0  # a third of the writers write junk that passes the checks
        try:
            start.wait()
            deadline = time.monotonic() + DEADLINE_SECONDS
            while time.monotonic() < deadline:
                did = False
                slot = claim_next_slot(job=job, worker=worker)
                if slot is not None:
                    answers = junk_answers(slot.item) if careless else good_answers(slot.item)
                    submit_response(slot_id=slot.id, worker=worker, answers=answers)
                    did = True
                slot = claim_next_slot(job=vote_job, worker=worker)
                if slot is not None:
                    submit_response(slot_id=slot.id, worker=worker, answers={"vote": careful_verdict(slot.item)})
                    did = True
                if not did:
                    if _all_settled(job, vote_job):
                        return
                    time.sleep(0.02)
            errors.append("deadline passed with work left")
        except Exception as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(repr(exc))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=work, args=(i, w)) for i, w in enumerate(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    assert errors == []
    for vote_item in Item.objects.filter(job=vote_job):
        voters = list(vote_item.responses.values_list("worker_id", flat=True))
        assert len(voters) == 3 and len(set(voters)) == 3, "a vote item got the wrong number of votes"
        assert vote_item.subject_response.worker_id not in voters, "an author voted on their own rewrite"
    for item in Item.objects.filter(job=job):
        rounds = list(ReviewRound.objects.filter(item=item).order_by("round"))
        assert [r.round for r in rounds] == list(range(1, len(rounds) + 1)), "rounds are not numbered 1..k"
        assert all(r.state == ReviewRound.State.RECOLLECTED for r in rounds[:-1])
        assert rounds[-1].state in (ReviewRound.State.PASSED, ReviewRound.State.EXHAUSTED)
        recollected = sum(r.state == ReviewRound.State.RECOLLECTED for r in rounds)
        assert item.slots.count() == 1 + recollected, "an item was reopened more or less than once per voted-down round"
        assert item.responses.count() == len(rounds)
        for r in rounds:
            r.response.refresh_from_db()
            expected = Response.Status.ACCEPTED if r.state == ReviewRound.State.PASSED else Response.Status.EXCLUDED
            assert r.response.status == expected
            assert (r.votes_against >= 2) == (r.state != ReviewRound.State.PASSED)
    pairs = Counter(Response.objects.filter(item__job=job).values_list("item_id", "worker_id"))
    assert max(pairs.values()) == 1, "a worker rewrote the same item twice"
    assert ReviewRound.objects.filter(item__job=job, state=ReviewRound.State.RECOLLECTED).exists(), "nothing was re-collected"
