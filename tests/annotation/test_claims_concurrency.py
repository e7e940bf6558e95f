"""Claim rules under real concurrency, on PostgreSQL (SQLite takes no row locks; see Turkle's lesson)."""
import threading
from collections import Counter

import pytest
from django.db import connection, connections

from annotation.models import Item, Response, Slot
from annotation.services.claims import claim_next_slot, submit_response
from tests.factories import good_answers, make_corpus, make_live_job

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

THREADS = 50


def test_fifty_threads_claiming_and_submitting_keep_every_rule(make_annotator):
    assert connection.vendor == "postgresql"
    job = make_live_job(make_corpus(dialogs=20, user_turns=3), redundancy=3)  # 60 items, 180 slots
    workers = [make_annotator(f"w{i:02d}")[1] for i in range(THREADS)]
    acknowledged, errors = [], []
    start = threading.Barrier(THREADS)

    def work(worker):
        try:
            start.wait()
            while (slot := claim_next_slot(job=job, worker=worker)) is not None:
                response = submit_response(slot_id=slot.id, worker=worker, answers=good_answers(slot.item))
                acknowledged.append(response.pk)
        except Exception as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(repr(exc))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=work, args=(w,)) for w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    assert errors == []
    per_item = Counter(Response.objects.filter(item__job=job).values_list("item_id", flat=True))
    assert max(per_item.values()) <= 3, "an item got more responses than its redundancy"
    assert len(per_item) == 60 and all(n == 3 for n in per_item.values()), "work was left undone"
    pairs = Counter(Response.objects.filter(item__job=job).values_list("item_id", "worker_id"))
    assert max(pairs.values()) == 1, "an annotator answered an item twice"
    stored = set(Response.objects.values_list("pk", flat=True))
    assert set(acknowledged) <= stored and len(acknowledged) == 180, "an acknowledged submission was lost"
    assert Item.objects.filter(job=job, state=Item.State.COMPLETE).count() == 60
    assert not Slot.objects.filter(job=job).exclude(state=Slot.State.SUBMITTED).exists()
