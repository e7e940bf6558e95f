"""The review queue (issue 10, part 1): the work itself beside its source, filters, paging, bulk
decisions with a result per response, and a job page whose queries do not grow with its responses."""
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.models import CheckOverride, Item, Response
from annotation.services.claims import claim_next_slot, submit_response
from annotation.services.quality import apply_flags
from annotation.services.review import bulk_decide, remember_review_view
from annotation.text.review_diff import word_diff
from tests.factories import good_answers, make_corpus, make_live_job

HOSTILE = '<script>alert("x")</script>'


# --- the diff (pure) ---------------------------------------------------------------------------------


def test_word_diff_shows_kept_added_and_removed_words_with_slot_values():
    segs = word_diff("I need a cheap table in the north.", "I want a cheap tabel in the north please.", ["cheap", "north"])
    kinds = [(s.op, s.text, s.slot) for s in segs]
    assert ("removed", "need", False) in kinds and ("added", "want", False) in kinds
    assert ("removed", "table", False) in kinds and ("added", "tabel", False) in kinds
    assert ("same", "cheap", True) in kinds and ("same", "north", True) in kinds
    # What is not removed reads back as the rewrite, exactly as written.
    assert "".join(s.text for s in segs if s.op != "removed") == "I want a cheap tabel in the north please."


def test_word_diff_of_an_unspaced_script_compares_characters():
    segs = word_diff("我想订一张桌子", "我想订两张桌子", ["桌子"])
    assert [s.text for s in segs if s.op == "removed"] == ["一"] and [s.text for s in segs if s.op == "added"] == ["两"]
    assert any(s.slot and s.text == "桌子" for s in segs)


# --- helpers ------------------------------------------------------------------------------------------


def _submit(job, worker, answers=None):
    slot = claim_next_slot(job=job, worker=worker)
    return submit_response(slot_id=slot.id, worker=worker, answers=answers or good_answers(slot.item))


def _queue(client, job, query=""):
    return client.get(reverse("organizer:job-review", kwargs={"pk": job.pk}) + query)


@pytest.fixture
def rewrites(make_annotator):
    job = make_live_job(make_corpus(dialogs=3, user_turns=1), name="rewrites")
    ann, bob = make_annotator("ann")[1], make_annotator("bob")[1]
    first = _submit(job, ann)
    item = Item.objects.exclude(pk=first.item_id).filter(job=job).order_by("position").first()
    answers = dict(good_answers(item), paraphrase=f"{item.payload['utterance']} {HOSTILE}")
    second = _submit(job, bob, answers)
    return {"job": job, "ann": ann, "bob": bob, "first": first, "second": second}


# --- the page --------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_queue_shows_each_variant_as_a_diff_with_slot_values_and_escapes_the_text(rewrites, organizer, client):
    client.force_login(organizer)
    page = _queue(client, rewrites["job"]).content.decode()
    assert '<mark class="slot">cheap</mark>' in page  # the source's slot values are marked
    assert '<span class="chip-slot">pricerange</span> <span lang="en">cheap</span>' in page  # chips show slot and value
    assert "<ins>tabel</ins>" in page and "<del>table</del>" in page  # the typo variant, word by word
    assert "Paraphrase:" in page and "Typos:" in page
    assert HOSTILE not in page and "&lt;script&gt;" in page
    assert 'id="review-keys"' in page and "<kbd>a</kbd> accept" in page


@pytest.mark.django_db
def test_filters_narrow_the_queue(rewrites, organizer, client):
    client.force_login(organizer)
    job, first, second = rewrites["job"], rewrites["first"], rewrites["second"]
    ids = lambda q: [r.response_id for r in _queue(client, job, q).context["queue"].page.object_list]  # noqa: E731
    assert ids("") == [first.pk, second.pk]
    assert ids(f"?worker={rewrites['bob'].pk}") == [second.pk]
    bulk_decide(job, [first.pk], action="exclude", reason="off topic")
    assert ids("?status=excluded") == [first.pk] and ids("?status=accepted") == [second.pk]
    assert ids("?vote=none") == [first.pk, second.pk] and ids("?vote=exhausted") == []
    assert ids("?flag=any") == []  # no flag run yet
    shown = _queue(client, job, "?variant=typos").context["queue"].page.object_list
    assert all([e["name"] for e in row.shown] == ["typos"] for row in shown)
    assert ids("?status=bogus&worker=x") == [first.pk, second.pk]  # a stale filter is ignored


@pytest.mark.django_db
def test_the_queue_pages_by_fifty_at_constant_queries(make_annotator, organizer, client):
    job = make_live_job(make_corpus(dialogs=30, user_turns=2), name="big")
    worker = make_annotator("busy")[1]
    for _ in range(55):
        _submit(job, worker)
    client.force_login(organizer)
    cards = _queue(client, job)  # the full cards, by default: ten a page
    assert len(cards.context["queue"].page.object_list) == 10 and "page 1 of 6" in cards.content.decode()
    remember_review_view(organizer, compact=True)  # the compact table: fifty a page
    first = _queue(client, job)
    assert len(first.context["queue"].page.object_list) == 50 and "page 1 of 2" in first.content.decode()
    assert len(_queue(client, job, "?page=2").context["queue"].page.object_list) == 5


# --- bulk decisions ------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_bulk_decision_reports_every_response_and_does_not_stop_at_a_failure(rewrites, organizer, client, make_annotator):
    other = make_live_job(make_corpus(name="other", dialogs=1, user_turns=1), name="other job")
    stranger = _submit(other, make_annotator("carl")[1])
    client.force_login(organizer)
    job, first, second = rewrites["job"], rewrites["first"], rewrites["second"]
    url = reverse("organizer:job-review-bulk", kwargs={"pk": job.pk})
    done = client.post(url, {"response": [stranger.pk, first.pk, second.pk], "action": "reject", "reason": "slot value lost", "back": "?status=accepted"})
    assert done.status_code == 302 and done["Location"].endswith("?status=accepted")
    for r in (first, second):
        r.refresh_from_db()
        assert r.status == Response.Status.REJECTED
    stranger.refresh_from_db()
    assert stranger.status == Response.Status.ACCEPTED  # another job's response is not touched
    assert CheckOverride.objects.filter(reason="slot value lost").count() == 2
    page = client.get(done["Location"]).content.decode()
    assert f"Response {stranger.pk}: not a response of this job" in page
    assert f"Response {first.pk}: rejected (not paid)" in page and "2 of 3 responses changed" in page


@pytest.mark.django_db
def test_a_bulk_decision_needs_a_reason_and_recollect_reopens_the_item(rewrites, organizer, client):
    client.force_login(organizer)
    job, first = rewrites["job"], rewrites["first"]
    url = reverse("organizer:job-review-bulk", kwargs={"pk": job.pk})
    client.post(url, {"response": [first.pk], "action": "accept", "reason": "  "})
    assert not CheckOverride.objects.exists()
    client.post(url, {"response": [first.pk], "action": "recollect", "reason": "lost the area"})
    first.refresh_from_db()
    assert first.status == Response.Status.REJECTED and first.item.state == Item.State.OPEN


@pytest.mark.django_db
def test_only_organizers_review(rewrites, make_annotator, client):
    client.force_login(make_annotator("eve")[0])
    job = rewrites["job"]
    assert _queue(client, job).status_code == 403
    url = reverse("organizer:job-review-bulk", kwargs={"pk": job.pk})
    assert client.post(url, {"response": [rewrites["first"].pk], "action": "reject", "reason": "x"}).status_code == 403
    assert not CheckOverride.objects.exists()


# --- the job page is an overview --------------------------------------------------------------------------------


def _queries(fn) -> int:
    with CaptureQueriesContext(connection) as ctx:
        fn()
    return len(ctx.captured_queries)


@pytest.mark.django_db
def test_the_job_page_costs_the_same_queries_for_5_and_50_responses(make_annotator, organizer, client):
    jobs = {}
    for n in (5, 50):
        job = make_live_job(make_corpus(name=f"c{n}", dialogs=25, user_turns=2), name=f"job {n}")
        worker = make_annotator(f"w{n}")[1]
        for _ in range(n):
            _submit(job, worker)
        apply_flags(job)
        jobs[n] = job
    client.force_login(organizer)
    url = lambda job: reverse("organizer:job", kwargs={"pk": job.pk})  # noqa: E731
    for job in jobs.values():  # warm up: sessions, content types, the task-type registry
        client.get(url(job))
        _queue(client, job)
    page = {n: _queries(lambda job=job: client.get(url(job))) for n, job in jobs.items()}
    assert page[5] == page[50], page
    queue = {n: _queries(lambda job=job: _queue(client, job)) for n, job in jobs.items()}
    assert queue[5] == queue[50], queue
    for query in ("?flag=any", "?status=accepted", "?vote=none"):  # each filter is as flat as the whole queue
        filtered = {n: _queries(lambda job=job, query=query: _queue(client, job, query)) for n, job in jobs.items()}
        assert filtered[5] == filtered[50], (query, filtered)
    body = client.get(url(jobs[50])).content.decode()
    assert 'id="review-link"' in body and "override-form" not in body  # no form per response any more
    print("job page queries:", page, "review queue queries:", queue)


@pytest.mark.django_db
def test_a_flag_filter_shows_what_it_says_on_the_response_or_on_its_author(make_annotator, organizer, client):
    """A7: `pasted` is the responses that carry it, not every response of a worker flagged for pasting;
    the author's flags are options of their own, which do pick every response of that worker."""
    from annotation.selectors.flags import stored_flags

    job = make_live_job(make_corpus(dialogs=4, user_turns=1), name="rewrites")
    paster = make_annotator("paster")[1]
    pasted = []
    for n in range(4):
        slot = claim_next_slot(job=job, worker=paster)
        telemetry = {"paraphrase": {"pasted_chars": 80, "typed_chars": 0}} if n < 2 else {"paraphrase": {"pasted_chars": 0, "typed_chars": 80}}
        response = submit_response(slot_id=slot.id, worker=paster, answers=good_answers(slot.item), telemetry=telemetry)
        pasted += [response.pk] if n < 2 else []
    apply_flags(job)
    report = stored_flags(job).report
    client.force_login(organizer)
    ids = lambda q: [r.response_id for r in _queue(client, job, q).context["queue"].page.object_list]  # noqa: E731
    assert ids("?flag=pasted") == pasted  # only the two pasted ones
    author_codes = [f.code for f in report.workers[paster.pk]]
    assert author_codes, "the worker is flagged too"
    everything = sorted(Response.objects.filter(item__job=job).values_list("pk", flat=True))
    for code in author_codes:
        assert ids(f"?flag=author:{code}") == everything
    assert ids("?flag=any") == everything
    page = _queue(client, job, "").content.decode()
    assert '<optgroup label="On the response">' in page and f'value="author:{author_codes[0]}"' in page
    assert "any flag, on the response or its author" in page


@pytest.mark.django_db
def test_the_vote_filter_is_offered_only_where_responses_can_be_put_to_the_vote(organizer, client):
    client.force_login(organizer)
    votable = make_live_job(make_corpus(name="a", dialogs=1, user_turns=1), name="rewrites")
    not_votable = make_live_job(make_corpus(name="b", dialogs=1, user_turns=1), name="scores", task_type="hard_score")
    assert 'name="vote"' in _queue(client, votable, "").content.decode()
    assert 'name="vote"' not in _queue(client, not_votable, "").content.decode()


@pytest.mark.django_db
def test_the_job_page_and_the_dashboard_name_the_type_by_its_label(organizer, client):
    from annotation import task_types

    client.force_login(organizer)
    job = make_live_job(make_corpus(dialogs=1, user_turns=1), name="scores", task_type="hard_score")
    label = task_types.get("hard_score").label
    assert label and label != "hard_score"
    job_page = client.get(reverse("organizer:job", kwargs={"pk": job.pk})).content.decode()
    assert f'<td id="job-task-type">{label} <span class="muted">(<code>hard_score</code>)' in job_page
    assert f'<td data-label="Task type" title="hard_score">{label}</td>' in client.get(reverse("organizer:dashboard")).content.decode()
