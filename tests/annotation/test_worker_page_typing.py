"""The worker page says how each of the worker's latest answers was written from its typing log
(annotation/quality/typing.py), and names each flag in words with its evidence: the page's counts
alone took an extension's dispatched events for typing."""
import json
import re

import pytest
from django.urls import reverse

from annotation.services.claims import claim_next_slot, submit_response
from annotation.services.quality import apply_flags
from annotation.text import typing_log
from tests.factories import good_answers, make_corpus, make_live_job

pytestmark = pytest.mark.django_db


def test_text_an_extension_dispatched_reads_as_inserted_without_keys_not_typed(make_annotator, organizer, client):
    job = make_live_job(make_corpus(dialogs=1, user_turns=1), name="rewrites")
    worker = make_annotator("ext")[1]
    slot = claim_next_slot(job=job, worker=worker)
    answers = good_answers(slot.item)
    text = answers["paraphrase"]
    # What static/typing.js records of an extension's events: one `x` per character, none typed.
    log = {"paraphrase": typing_log.build_record([("f", 500, None), *[("x", 160, 1)] * len(text)])}
    # annotate.js counted the same events as typed.
    telemetry = {"paraphrase": {"typed_chars": len(text), "pasted_chars": 0, "keystrokes": len(text), "paste_events": 0}}
    submit_response(slot_id=slot.id, worker=worker, answers=answers, telemetry=telemetry, typing=json.dumps(log))
    apply_flags(job)

    client.force_login(organizer)
    page = client.get(reverse("organizer:worker", kwargs={"pk": worker.pk})).content.decode()
    assert f"paraphrase: 0 typed, 0 pasted or dropped, {len(text)} inserted without keys, 0 corrections" in page
    assert f"paraphrase: {len(text)} typed, 0 pasted" not in page
    assert (f"<strong>Text that arrived without key presses</strong>: paraphrase: {len(text)} characters inserted "
            "with no key pressed (flagged from 10 characters)") in page
    assert "Flags: synthetic_input" not in page


def test_a_response_without_a_typing_log_shows_the_pages_counts(make_annotator, organizer, client):
    job = make_live_job(make_corpus(dialogs=1, user_turns=1), name="rewrites")
    worker = make_annotator("old")[1]
    slot = claim_next_slot(job=job, worker=worker)
    submit_response(slot_id=slot.id, worker=worker, answers=good_answers(slot.item),
                    telemetry={"paraphrase": {"typed_chars": 40, "pasted_chars": 12}})
    client.force_login(organizer)
    page = client.get(reverse("organizer:worker", kwargs={"pk": worker.pk})).content.decode()
    assert "paraphrase: 40 typed, 12 pasted" in page


def test_the_review_queue_leads_with_how_many_responses_carry_each_flag(make_annotator, organizer, client):
    job = make_live_job(make_corpus(dialogs=3, user_turns=1), name="rewrites")
    for name, pasted in (("paster", 80), ("paster2", 80), ("typist", 0)):
        worker = make_annotator(name)[1]
        slot = claim_next_slot(job=job, worker=worker)
        submit_response(slot_id=slot.id, worker=worker, answers=good_answers(slot.item),
                        telemetry={"paraphrase": {"pasted_chars": pasted, "typed_chars": 80 - pasted}})
    apply_flags(job)
    client.force_login(organizer)
    page = client.get(reverse("organizer:job-review", kwargs={"pk": job.pk})).content.decode()
    line = page[page.index('<p id="flag-counts">'):]
    line = line[:line.index("</p>")]
    assert "<strong>2 of 3 responses carry a flag</strong>" in line
    assert '<a href="?flag=pasted" data-flag="pasted">2 responses mostly pasted rather than typed</a>' in line
    assert '<a href="?flag=any" id="show-flagged">Show only flagged responses</a>' in line
    assert page.index('id="flag-counts"') < page.index('id="review-filters"')  # before the filters and the queue


def test_the_typing_summaries_follow_the_task_types_answer_fields(make_annotator, organizer, client):
    # The stored log's keys come back shortest first (typos, verbose, paraphrase...); the page lists
    # the fields as the task type does, with the log's and the page's counts alike.
    job = make_live_job(make_corpus(dialogs=2, user_turns=1), name="rewrites")
    worker = make_annotator("typist")[1]
    slot = claim_next_slot(job=job, worker=worker)
    answers = good_answers(slot.item)
    log = {name: typing_log.build_record([("f", 500, None), *[("k", 160, 1)] * len(answers[name])]) for name in reversed(list(answers))}
    submit_response(slot_id=slot.id, worker=worker, answers=answers, typing=json.dumps(log))
    slot = claim_next_slot(job=job, worker=worker)
    counts = {name: {"typed_chars": 40, "pasted_chars": 0} for name in reversed(list(answers))}
    submit_response(slot_id=slot.id, worker=worker, answers=good_answers(slot.item), telemetry=counts)

    client.force_login(organizer)
    page = client.get(reverse("organizer:worker", kwargs={"pk": worker.pk})).content.decode()
    cells = re.findall(r'<td class="typing-summary">(.*?)</td>', page)
    assert len(cells) == 2
    for cell in cells:
        assert re.findall(r"<div>(\w+):", cell) == ["paraphrase", "typos", "verbose", "simplified"]
