"""Claim rules: bound at claim time, never twice per worker, never beyond redundancy, expiry."""
from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import Item, Response, Slot
from annotation.services.claims import (
    ClaimError,
    ResponseRejected,
    claim_next_slot,
    release_expired_claims,
    submit_response,
)
from annotation.services.jobs import JobError, Selection, create_job
from tests.factories import good_answers, make_corpus, make_live_job

pytestmark = pytest.mark.django_db


def test_job_has_one_item_per_user_turn_and_redundancy_slots_each():
    job = make_live_job(make_corpus(dialogs=3, user_turns=2), redundancy=3)
    assert job.items.count() == 6
    assert Slot.objects.filter(job=job).count() == 18
    item = job.items.order_by("position").first()
    assert item.payload["slot_values"] == ["cheap", "centre"]


def test_sample_selection_is_reproducible_and_dialog_selection_checks_ids():
    corpus = make_corpus(dialogs=5, user_turns=2)
    a = create_job(corpus=corpus, name="a", selection=Selection(mode="sample", size=4, seed=7))
    b = create_job(corpus=corpus, name="b", selection=Selection(mode="sample", size=4, seed=7))
    assert list(a.items.values_list("turn_id", flat=True)) == list(b.items.values_list("turn_id", flat=True))
    assert a.items.count() == 4
    c = create_job(corpus=corpus, name="c", selection=Selection(mode="dialogs", dialog_ids=["d1"]))
    assert c.items.count() == 2
    with pytest.raises(JobError, match="d9"):
        create_job(corpus=corpus, name="d", selection=Selection(mode="dialogs", dialog_ids=["d9"]))


def test_bad_settings_are_refused_with_the_setting_named():
    with pytest.raises(JobError) as exc:
        create_job(corpus=make_corpus(), name="x", settings={"variants": ["sarcastic"]})
    assert "variants" in exc.value.errors


def test_worker_never_gets_the_same_item_twice(make_annotator):
    job = make_live_job(make_corpus(dialogs=2, user_turns=1), redundancy=2)
    _, ann = make_annotator("ann")
    seen = []
    while (slot := claim_next_slot(job=job, worker=ann)) is not None:
        seen.append(slot.item_id)
        submit_response(slot_id=slot.id, worker=ann, answers=good_answers(slot.item))
    assert sorted(seen) == sorted(job.items.values_list("id", flat=True))


def test_claim_returns_the_held_slot_until_submitted(make_annotator):
    job = make_live_job()
    _, ann = make_annotator("ann")
    first = claim_next_slot(job=job, worker=ann)
    assert claim_next_slot(job=job, worker=ann).id == first.id


def test_item_never_gets_more_responses_than_its_redundancy(make_annotator):
    job = make_live_job(make_corpus(dialogs=1, user_turns=1), redundancy=2)
    workers = [make_annotator(f"w{i}")[1] for i in range(3)]
    slots = [claim_next_slot(job=job, worker=w) for w in workers]
    assert slots[2] is None
    for w, s in zip(workers, slots[:2], strict=False):
        submit_response(slot_id=s.id, worker=w, answers=good_answers(s.item))
    item = job.items.get()
    assert item.responses.count() == 2
    assert item.state == Item.State.COMPLETE


def test_invalid_response_is_refused_and_nothing_is_stored(make_annotator):
    job = make_live_job()
    _, ann = make_annotator("ann")
    slot = claim_next_slot(job=job, worker=ann)
    answers = good_answers(slot.item) | {"verbose": "short"}
    with pytest.raises(ResponseRejected) as exc:
        submit_response(slot_id=slot.id, worker=ann, answers=answers)
    assert {p.field for p in exc.value.problems} == {"verbose"}
    assert Response.objects.count() == 0
    assert Slot.objects.get(pk=slot.pk).state == Slot.State.CLAIMED


def test_double_submit_is_idempotent(make_annotator):
    job = make_live_job()
    _, ann = make_annotator("ann")
    slot = claim_next_slot(job=job, worker=ann)
    first = submit_response(slot_id=slot.id, worker=ann, answers=good_answers(slot.item))
    again = submit_response(slot_id=slot.id, worker=ann, answers=good_answers(slot.item))
    assert first.pk == again.pk and Response.objects.count() == 1


def test_expired_claims_are_freed_and_a_late_submission_is_kept_if_room_remains(make_annotator):
    job = make_live_job(make_corpus(dialogs=1, user_turns=1))
    _, slow = make_annotator("slow")
    _, other = make_annotator("other")
    slot = claim_next_slot(job=job, worker=slow)
    assert release_expired_claims(now=timezone.now() + timedelta(minutes=31)) == 1
    assert Slot.objects.get(pk=slot.pk).state == Slot.State.OPEN
    response = submit_response(slot_id=slot.id, worker=slow, answers=good_answers(slot.item))
    assert response.worker == slow
    assert claim_next_slot(job=job, worker=other) is None


def test_late_submission_after_someone_else_took_the_slot_is_refused_with_a_reason(make_annotator):
    job = make_live_job(make_corpus(dialogs=1, user_turns=1))
    _, slow = make_annotator("slow")
    _, fast = make_annotator("fast")
    slot = claim_next_slot(job=job, worker=slow)
    release_expired_claims(now=timezone.now() + timedelta(hours=1))
    taken = claim_next_slot(job=job, worker=fast)
    submit_response(slot_id=taken.id, worker=fast, answers=good_answers(taken.item))
    with pytest.raises(ClaimError, match="expired"):
        submit_response(slot_id=slot.id, worker=slow, answers=good_answers(slot.item))


def test_draft_job_cannot_be_claimed(make_annotator):
    job = create_job(corpus=make_corpus(), name="draft")
    _, ann = make_annotator("ann")
    with pytest.raises(ClaimError):
        claim_next_slot(job=job, worker=ann)


def test_job_restricted_to_listed_annotators(make_annotator):
    job = make_live_job()
    _, listed = make_annotator("listed")
    _, outsider = make_annotator("outsider")
    job.annotators.add(listed)
    assert claim_next_slot(job=job, worker=listed) is not None
    with pytest.raises(ClaimError):
        claim_next_slot(job=job, worker=outsider)


def test_a_skipped_item_goes_to_others_and_is_not_offered_again_to_the_skipper(make_annotator):
    from annotation.services.claims import release_slot

    job = make_live_job(make_corpus(dialogs=1, user_turns=2))
    _, skipper = make_annotator("skipper")
    _, other = make_annotator("other")
    first = claim_next_slot(job=job, worker=skipper)
    release_slot(slot_id=first.id, worker=skipper)
    second = claim_next_slot(job=job, worker=skipper)
    assert second.item_id != first.item_id
    assert claim_next_slot(job=job, worker=other).item_id == first.item_id


def test_beat_schedule_names_only_registered_tasks():
    from django.conf import settings

    from quorum.celery import app

    app.loader.import_default_modules()  # what a worker does at start: autodiscover every app's tasks
    for entry in settings.CELERY_BEAT_SCHEDULE.values():
        assert entry["task"] in app.tasks, f"beat sends {entry['task']}, which no worker would know"
    assert "annotation.tasks_exports.run_export" in app.tasks and "annotation.tasks.run_import" in app.tasks


def test_the_periodic_task_frees_expired_claims(make_annotator):
    from annotation.tasks import release_expired_claims as task

    job = make_live_job()
    _, ann = make_annotator("ann")
    slot = claim_next_slot(job=job, worker=ann)
    Slot.objects.filter(pk=slot.pk).update(expires_at=timezone.now() - timedelta(minutes=1))
    assert task.delay().get() == 1
    assert Slot.objects.get(pk=slot.pk).state == Slot.State.OPEN
