"""Typing-process capture (annotation/text/typing_log.py, static/typing.js): the format and its check,
stored with the response through the work page, a malformed log refused with the reason beside the
answers' own problems (and kept as evidence from a script's post), the page's notice, retention."""
import json
from datetime import timedelta

import pytest
from django.test import Client, override_settings
from django.urls import reverse
from django.utils import timezone

from annotation.models import Response, Worker
from annotation.services.claims import claim_next_slot
from annotation.services.responses import confirm
from annotation.services.typing_logs import purge_expired
from annotation.text import typing_log
from annotation.work_tokens import make_token
from tests.factories import good_answers, make_corpus, make_live_job


def typed(text: str, ms: int = 180) -> dict:
    return typing_log.build_record([("f", 900, None)] + [("k", ms, None) for _ in text])


# --- the format (pure) ---

def test_a_record_round_trips_through_the_check():
    record = typing_log.build_record([("f", 500, None), ("k", 200, None), ("d", 150, None), ("p", 3000, 40), ("h", 10, None)])
    assert typing_log.check_record(record) is record
    events = typing_log.parse_events(record["e"])
    assert [e.letter for e in events] == ["f", "k", "d", "p", "h"]
    assert [e.size for e in events] == [0, 1, -1, 40, 0]
    assert events[3].dt_ms == 3000 and events[-1].at_ms == 500 + 200 + 150 + 3000 + 10


@pytest.mark.parametrize("record, reason", [
    ("x", "not an object"),
    ({"v": 2, "e": ""}, "version"),
    ({"v": 1, "e": "K1K2", "c": {"k": 5}}, "count of 'k'"),
    ({"v": 1, "e": "K1?", "c": {"k": 1}}, "unreadable"),
    ({"v": 1, "e": "Q1", "c": {"q": 1}}, "unknown"),
    ({"v": 1, "e": "F1.5", "c": {"f": 1}}, "cannot change the text"),
    ({"v": 1, "e": "P1.a", "c": {"p": 1}, "z": {"p": 3}}, "characters of 'p'"),
    ({"v": 1, "e": "K1", "c": {"k": 1}, "t": True}, "capped"),
    ({"v": 1, "e": "K1" * (typing_log.MAX_EVENTS + 1), "c": {"k": typing_log.MAX_EVENTS + 1}}, "more than"),
    ({"v": 1, "e": "", "evil": 1}, "unknown keys"),
])
def test_a_malformed_record_is_named(record, reason):
    with pytest.raises(typing_log.MalformedLog, match=reason):
        typing_log.check_record(record)


def test_a_capped_record_keeps_counting():
    record = typing_log.build_record([("k", 100, None)] * (typing_log.MAX_EVENTS + 200))
    assert record["t"] is True and record["c"]["k"] == typing_log.MAX_EVENTS + 200
    assert typing_log.check_record(record)


def test_the_posted_value_keeps_only_free_text_fields_and_names_what_is_wrong():
    good, bad = typing_log.check_posted(json.dumps({"a": typed("hi"), "b": {"v": 9}, "other": typed("x")}), ["a", "b"])
    assert set(good) == {"a"} and set(bad) == {"b"}
    assert typing_log.check_posted("", ["a"]) == ({}, {})
    assert typing_log.check_posted("{not json", ["a"])[1] == {"": "the typing record is not JSON"}
    assert "more than" in typing_log.check_posted("x" * (typing_log.MAX_POSTED_CHARS + 1), ["a"])[1][""]


def test_a_typical_fifteen_word_rewrite_fits_in_two_kilobytes():
    """~85 characters typed with a correction every ten, focus changes: measured in the browser too
    (tests/browser/test_typing_capture.py; figures in docs/measurements.md)."""
    text = "could you please find me a cheap italian restaurant somewhere in the centre of town"
    events = [("f", 1200, None)]
    for i, _ in enumerate(text):
        events.append(("k", 3000 if i % 20 == 0 else 240, None))
        if i % 10 == 9:
            events += [("k", 200, None), ("d", 400, None)]
    events += [("w", 500, None), ("g", 8000, None), ("b", 900, None)]
    assert typing_log.encoded_size(typing_log.build_record(events)) <= 2048


# --- through the work page ---

pytestmark_db = pytest.mark.django_db


@pytest.fixture
def job(db):
    return make_live_job(make_corpus(dialogs=4, user_turns=1), name="rewrites")


def claimed(job, name="crowd-1"):
    worker = Worker.objects.create(provider="prolific", external_id=name)
    slot = claim_next_slot(job=job, worker=worker)
    return slot, reverse("work", args=[make_token(slot)])


def test_the_page_names_its_text_fields_and_says_what_is_recorded(job):
    _slot, url = claimed(job)
    page = Client().get(url).content.decode()
    assert 'data-typing-fields="paraphrase typos verbose simplified"' in page or 'data-typing-fields="' in page
    assert 'name="typing_log" id="typing_log"' in page
    assert "never which keys" in page and "typing.js" in page


def test_a_log_is_stored_with_the_response_and_goes_with_it(job):
    slot, url = claimed(job)
    answers = good_answers(slot.item)
    logs = {name: typed(text) for name, text in answers.items()}
    response = Client().post(url, {**answers, "typing_log": json.dumps(logs)})
    assert response.status_code == 302, response.context and response.context["problems"]
    stored = Response.objects.get(slot=slot)
    assert stored.typing == logs
    assert Response.objects.filter(pk=stored.pk, typing__has_key=next(iter(logs))).exists()


def test_a_malformed_log_is_refused_with_the_reason_beside_the_answers_problems(job):
    slot, url = claimed(job)
    answers = good_answers(slot.item)
    first = next(iter(answers))
    logs = {first: {"v": 1, "e": "K1K1", "c": {"k": 7}}}
    refused = Client().post(url, {**answers, first: "", "typing_log": json.dumps(logs)})
    assert refused.status_code == 400
    page = refused.content.decode()
    assert "record of your typing could not be read" in page and "does not match" in page
    assert len(refused.context["problems"]) >= 2  # the empty answer is still named
    assert not Response.objects.filter(slot=slot).exists()


def test_a_malformed_log_from_a_script_is_stored_as_evidence(job):
    slot, url = claimed(job)
    answers = good_answers(slot.item)
    first = next(iter(answers))
    sent = Client().post(url, {**answers, "typing_log": json.dumps({first: {"v": 1, "e": "zz"}})},
                         HTTP_ACCEPT="application/json")
    assert sent.status_code == 200, sent.content
    stored = Response.objects.get(slot=slot)
    assert "malformed" in stored.typing[first]


def test_no_log_is_no_problem(job):
    """A page without JavaScript posts none: the answer is saved, nothing is recorded."""
    slot, url = claimed(job)
    assert Client().post(url, good_answers(slot.item)).status_code == 302
    assert Response.objects.get(slot=slot).typing == {}


@override_settings(QUORUM_TYPING_LOG_RETENTION_DAYS=30)
def test_logs_past_the_retention_period_are_emptied(job):
    slot, url = claimed(job)
    answers = good_answers(slot.item)
    Client().post(url, {**answers, "typing_log": json.dumps({n: typed(t) for n, t in answers.items()})})
    stored = Response.objects.get(slot=slot)
    assert purge_expired(now=timezone.now() + timedelta(days=29)) == 0
    assert purge_expired(now=timezone.now() + timedelta(days=31)) == 1
    stored.refresh_from_db()
    assert stored.typing == {} and stored.answers


def test_the_sweep_stores_typing_flags_with_their_evidence(job):
    """Item 2 through the real path: the page's post, the flag run, the stored report."""
    from annotation.selectors.flags import stored_flags
    from annotation.services.quality import apply_flags

    slot, url = claimed(job)
    answers = good_answers(slot.item)
    machine = {n: typing_log.build_record([("f", 500, None)] + [("k", 10, None) for _ in t]) for n, t in answers.items()}
    Client().post(url, {**answers, "typing_log": json.dumps(machine)})
    slot2, url2 = claimed(job, "crowd-2")
    answers2 = good_answers(slot2.item)
    Client().post(url2, {**answers2, "typing_log": json.dumps({list(answers2)[0]: {"v": 1, "e": "?"}})},
                  HTTP_ACCEPT="application/json")
    for response in Response.objects.filter(item__job=job):
        confirm(response, actor="provider:prolific")  # crowd work is evidence once the provider confirms it
    apply_flags(job)
    flags = stored_flags(job)
    mine = Response.objects.get(slot=slot)
    assert "implausible_speed" in flags.report.responses[mine.pk]
    mine.refresh_from_db()
    assert "ms a key" in mine.checks["flag_evidence"]["implausible_speed"]
    other = Response.objects.get(slot=slot2)
    assert "malformed_log" in flags.report.responses[other.pk]
    assert "unreadable event" in other.checks["flag_evidence"]["malformed_log"]


def test_the_review_queue_shows_how_a_text_came_to_be_and_filters_by_typing_flag(job, organizer):
    """Item 3: beside the text, a timeline and a summary per field, each flag with its evidence; the
    flag filter narrows to one typing flag; deciding stays the reviewer's (nothing is excluded)."""
    from annotation.services.quality import apply_flags

    slot, url = claimed(job)
    answers = good_answers(slot.item)
    pasted = {n: typing_log.build_record([("f", 500, None), ("h", 800, None), ("v", 30000, None), ("p", 900, len(t))])
              for n, t in answers.items()}
    Client().post(url, {**answers, "typing_log": json.dumps(pasted)})
    slot2, url2 = claimed(job, "crowd-2")
    answers2 = good_answers(slot2.item)
    Client().post(url2, {**answers2, "typing_log": json.dumps({n: typed(t) for n, t in answers2.items()})})
    for response in Response.objects.filter(item__job=job):
        confirm(response, actor="provider:prolific")
    apply_flags(job)
    client = Client()
    client.force_login(organizer)
    review = reverse("organizer:job-review", kwargs={"pk": job.pk})
    page = client.get(review).content.decode()
    assert "How it was written" in page and 'class="tl tl-paste"' in page and 'class="tl tl-away"' in page
    assert "30 s away from the page" in page  # composed_offscreen's evidence
    assert 'data-flag="paste_dominant"' in page
    first, second = Response.objects.get(slot=slot), Response.objects.get(slot=slot2)
    filtered = client.get(review + "?flag=composed_offscreen")
    assert [r.response_id for r in filtered.context["queue"].page.object_list] == [first.pk]
    assert f'id="response-{first.pk}"' in filtered.content.decode()
    assert "composed_offscreen" in filtered.content.decode()  # offered in the flag filter
    assert all(r.status != Response.Status.EXCLUDED for r in Response.objects.all())  # evidence, not verdicts
    assert second.pk not in [r.response_id for r in filtered.context["queue"].page.object_list]


def test_the_dataset_card_counts_flags_per_variant_and_what_was_decided(job, tmp_path):
    """Item 4: the manifest and README say per variant how many responses were flagged for which
    reason and what became of them; responses.csv names each response's id and flags."""
    import csv

    from annotation.services.exports import export_job
    from annotation.services.quality import apply_flags

    slot, url = claimed(job)
    answers = good_answers(slot.item)
    fields = list(answers)
    logs = {n: typed(t) for n, t in answers.items()}
    logs[fields[0]] = typing_log.build_record([("f", 500, None), ("p", 900, len(answers[fields[0]]))])
    Client().post(url, {**answers, "typing_log": json.dumps(logs)})
    response = Response.objects.get(slot=slot)
    confirm(response, actor="provider:prolific")
    apply_flags(job)
    export_job(job, tmp_path / "out")
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    flags = manifest["flags"]
    assert flags["flagged_responses"] == 1 and flags["responses"] == 1
    assert flags["per_variant"][fields[0]]["paste_dominant"] == {"accepted": 1}
    assert "paste_dominant" not in flags["per_variant"][fields[1]]
    readme = (tmp_path / "out" / "README.md").read_text()
    assert "## Flags and decisions" in readme and f"| {fields[0]} | `paste_dominant`: text mostly pasted or dropped in | 1 | 1 accepted |" in readme
    with open(tmp_path / "out" / "responses.csv", encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert rows[0]["response_id"] == str(response.pk) and "paste_dominant" in rows[0]["flags"]


def test_a_chat_types_message_box_is_recorded_and_judged_by_its_log_alone():
    """Messages to a system are the worker's own words: a `RelaysChat` type accepts the chat box's
    record (`chat_messages`), which no answer field names; a type that relays no chat drops it."""
    from annotation import task_types
    from annotation.quality import flags
    from annotation.services.claims import typing_records

    chat = task_types.types_with(task_types.RelaysChat)[0]
    other = next(k for k in task_types.registry().values() if not isinstance(k, task_types.RelaysChat))
    settings = task_types.default_settings(chat)
    pasted = typing_log.build_record([("f", 500, None), ("p", 900, 60), ("s", 3000, -60), ("k", 300, None)])
    posted = json.dumps({task_types.CHAT_MESSAGES: pasted})
    assert typing_records(chat, settings, posted, strict=True) == ({task_types.CHAT_MESSAGES: pasted}, [])
    assert typing_records(other, task_types.default_settings(other), posted, strict=True) == ({}, [])
    import pandas as pd

    texts = pd.DataFrame({"response": [1], "worker": [1], "item": [1], "field": [task_types.CHAT_MESSAGES], "text": [""],
                          "source": [""], "order": [0], "pasted_chars": [0], "typed_chars": [0], "typing": [pasted]})
    found, _summary = flags.typing_evidence(texts, flags.FlagThresholds().typing())
    assert set(found["paste_dominant"]) == {1} and not found["synthetic_input"]  # the box emptied by chat.js is no evidence
