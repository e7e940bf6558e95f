"""Gold items and onboarding: more gold early in a session, a qualification first, soft blocks."""
from datetime import datetime, timedelta

import pytest

from annotation.models import Response, WorkerStanding
from annotation.quality.gold import fails_too_many, gold_due, gold_rate, onboarding_verdict, session_start
from annotation.selectors.quality import subset
from annotation.services.claims import ClaimError, claim_next_slot, submit_response
from annotation.services.jobs import create_job, launch_job
from annotation.services.quality import QualityError, add_gold_item, set_quality, unblock_worker
from tests.factories import make_corpus


def schedule(n, **rates):
    served, gold = [], 0
    for done in range(n):
        due = gold_due(done, gold, **rates)
        served.append(due)
        gold += due
    return served


def test_gold_is_denser_at_the_start_of_a_session_than_later():
    served = schedule(40, start_rate=0.5, floor_rate=0.1, decay_items=10)
    assert served[0] is True  # the very first item checks the worker
    assert sum(served[:10]) >= 3 * sum(served[30:40]) > 0
    assert gold_rate(0, 0.5, 0.1, 10) == 0.5 and gold_rate(25, 0.5, 0.1, 10) == 0.1


def test_sessions_break_at_long_pauses():
    t = datetime(2026, 1, 1, 12, 0)
    times = [t, t - timedelta(minutes=5), t - timedelta(minutes=9), t - timedelta(hours=2)]
    assert session_start(times, timedelta(minutes=30)) == 3
    assert session_start([], timedelta(minutes=30)) == 0


def test_onboarding_and_failure_rules():
    assert onboarding_verdict(2, 2, 3, 0.8) is None
    assert onboarding_verdict(5, 4, 5, 0.8) == "qualified"
    assert onboarding_verdict(5, 3, 5, 0.8) == "failed"
    assert not fails_too_many(4, 4, 5, 0.3)  # too few answers to judge
    assert fails_too_many(10, 4, 5, 0.3) and not fails_too_many(10, 3, 5, 0.3)


# --- In the database --------------------------------------------------------------------------

GOLD_PAYLOAD = {"utterance": "i wnt a chp rstrnt in centr", "slot_values": []}


def scoring_job(items=20, gold=5, **quality):
    job = launch_job(create_job(corpus=make_corpus(dialogs=items // 2, user_turns=2), name="hard", task_type="hard_score"))
    set_quality(job, **quality)
    for _ in range(gold):
        add_gold_item(job, payload=GOLD_PAYLOAD, gold={"criterion_1": 5})
    return job


def answer(job, worker, gold_score=5):
    slot = claim_next_slot(job=job, worker=worker)
    if slot is None:
        return None, None
    score = gold_score if slot.item.gold is not None else 2
    submit_response(slot_id=slot.id, worker=worker, answers={"criterion_1": score, "criterion_2": 2})
    return slot.item.gold is not None, slot


@pytest.mark.django_db
def test_gold_is_mixed_in_more_at_the_start(make_annotator):
    job = scoring_job(items=20, gold=8, gold_start_rate=0.5, gold_floor_rate=0.1, gold_decay_items=10)
    worker = make_annotator("ann")[1]
    kinds = [answer(job, worker)[0] for _ in range(20)]
    assert kinds[0] is True
    assert sum(kinds[:8]) > sum(kinds[12:20])
    standing = WorkerStanding.objects.get(worker=worker, job=job)
    assert standing.gold_answered == sum(kinds) and standing.gold_failed == 0
    assert Response.objects.filter(worker=worker, item__gold__isnull=False).first().checks["gold"]["correct"] is True


@pytest.mark.django_db
def test_onboarding_comes_first_and_a_failure_soft_blocks(make_annotator):
    job = scoring_job(items=6, gold=4, onboarding_items=2, onboarding_pass_rate=1.0, gold_start_rate=0, gold_floor_rate=0)
    good, bad = make_annotator("good")[1], make_annotator("bad")[1]
    assert [answer(job, good)[0] for _ in range(3)] == [True, True, False]  # qualified, then real work
    assert WorkerStanding.objects.get(worker=good, job=job).state == WorkerStanding.State.QUALIFIED
    assert answer(job, bad, gold_score=1)[0] is True
    assert answer(job, bad, gold_score=1)[0] is True
    standing = WorkerStanding.objects.get(worker=bad, job=job)
    assert standing.state == WorkerStanding.State.SOFT_BLOCKED and "onboarding" in standing.reason
    with pytest.raises(ClaimError, match="paused"):
        claim_next_slot(job=job, worker=bad)
    unblock_worker(bad, job)
    assert claim_next_slot(job=job, worker=bad) is not None


@pytest.mark.django_db
def test_failing_too_much_gold_later_holds_pending_work_for_review(make_annotator):
    job = scoring_job(items=20, gold=6, gold_min_answered=2, gold_max_failure_rate=0.4, gold_start_rate=0.5, gold_floor_rate=0.5, gold_decay_items=1)
    worker = make_annotator("careless")[1]
    while True:
        is_gold, slot = answer(job, worker, gold_score=1)
        if slot is None or WorkerStanding.objects.filter(worker=worker, job=job, state="soft_blocked").exists():
            break
    ordinary = Response.objects.filter(worker=worker, item__gold__isnull=True)
    assert ordinary.exists()
    assert all(r.status == Response.Status.HELD and "held for review" in r.checks["held"] for r in ordinary)
    with pytest.raises(ClaimError):
        claim_next_slot(job=job, worker=worker)


@pytest.mark.django_db
def test_gold_answers_stay_out_of_the_hard_subset(make_annotator):
    job = scoring_job(items=2, gold=1, gold_start_rate=1.0, gold_floor_rate=0.0, gold_decay_items=1)
    worker = make_annotator("ann")[1]
    while answer(job, worker)[1] is not None:
        pass
    assert Response.objects.filter(item__gold__isnull=False).count() == 1
    assert subset(job) == []  # ordinary items scored 2; the gold item (5) is not data


@pytest.mark.django_db
def test_a_gold_answer_must_be_valid_for_the_task_type():
    job = scoring_job(items=2, gold=0)
    with pytest.raises(QualityError, match="criterion_9"):
        add_gold_item(job, payload=GOLD_PAYLOAD, gold={"criterion_9": 3})
    with pytest.raises(QualityError, match="from 1 to 5"):
        add_gold_item(job, payload=GOLD_PAYLOAD, gold={"criterion_1": 7})
    with pytest.raises(QualityError, match="from 0 to 1"):
        set_quality(job, gold_start_rate=3)
