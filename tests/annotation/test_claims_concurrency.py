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


POSTS = 20


def test_twenty_simultaneous_posts_of_one_link_get_one_saved_and_nineteen_true_answers(make_annotator):
    """One work link posted 20 times at once with 20 different texts (separate connections): one
    post is told "Saved"; every other is told that the first text was kept and shown that text."""
    from django.test import Client
    from django.urls import reverse
    from django.utils.html import escape

    from annotation.work_tokens import make_token

    assert connection.vendor == "postgresql"
    job = make_live_job(make_corpus(dialogs=1, user_turns=2))
    user, worker = make_annotator("double")
    slot = claim_next_slot(job=job, worker=worker)
    url = reverse("work", args=[make_token(slot)])
    texts = [{**good_answers(slot.item), "paraphrase": f"Version {i}: " + good_answers(slot.item)["paraphrase"]} for i in range(POSTS)]
    clients = []
    for _ in range(POSTS):
        clients.append(Client())
        clients[-1].force_login(user)
    answers, errors = [None] * POSTS, []
    start = threading.Barrier(POSTS)

    def post(i):
        try:
            start.wait()
            answers[i] = clients[i].post(url, texts[i])
        except Exception as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(repr(exc))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=post, args=(i,)) for i in range(POSTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    assert errors == []
    stored = Response.objects.get(worker=worker)
    saved = [i for i, r in enumerate(answers) if r.status_code == 302]
    assert len(saved) == 1 and "saved=1" in answers[saved[0]]["Location"]
    assert stored.answers["paraphrase"] == texts[saved[0]]["paraphrase"], "the one told 'Saved' is not what was stored"
    for i, r in enumerate(answers):
        if i == saved[0]:
            continue
        page = r.content.decode()
        assert r.status_code == 200 and "your first text was kept" in page, page[:300]
        kept, not_kept = page.split("Your text (not saved)")
        assert escape(stored.answers["paraphrase"]) in kept and escape(texts[i]["paraphrase"]) in not_kept
