"""The low items of issue 25, each a regression test: hostile text and JSON that gave a 500 get a
4xx with a reason — NUL or a lone surrogate in answers (the page, the live check), the work page's
telemetry, /check/ and /chat/ with deeply nested JSON or NaN, and the goals upload (not UTF-8, deep
JSON, NaN in the database file)."""
import json

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Response
from annotation.services.claims import claim_next_slot
from annotation.work_tokens import make_token
from evaluation.errors import EvaluationInputError
from evaluation.interactive.services.systems import import_goals
from evaluation.models import GoalSet
from tests.factories import good_answers, make_live_job

pytestmark = pytest.mark.django_db


@pytest.fixture
def work(make_annotator):
    user, worker = make_annotator("w")
    client = Client()
    client.force_login(user)
    slot = claim_next_slot(job=make_live_job(), worker=worker)
    return client, make_token(slot), slot


@pytest.mark.parametrize("bad", ["a\x00b", "\ud800 lone"], ids=["nul", "lone-surrogate"])
def test_an_answer_with_a_character_no_database_stores_is_refused_with_a_reason(work, bad):
    client, token, slot = work
    answers = good_answers(slot.item)
    field = next(iter(answers))
    answers[field] = bad
    check = client.post(reverse("work-check", args=[token]), json.dumps({"answers": answers}, ensure_ascii=True), content_type="application/json")
    assert check.status_code == 400  # the strict body parser refuses it before the answers are read
    if "\x00" in bad:  # a form post is UTF-8: a lone surrogate cannot arrive that way, NUL can
        posted = client.post(reverse("work", args=[token]), {**answers})
        assert posted.status_code == 400 and "NUL" in posted.content.decode() and not Response.objects.exists()


@pytest.mark.parametrize("body", [
    b'{"answers": ' + b"[" * 3000 + b"]" * 3000 + b"}", b'{"answers": {"a": NaN}}', b'{"answers": {"a": "\\u0000"}}', b"\xff\xfe",
], ids=["deep", "nan", "nul", "not-utf8"])
def test_the_live_check_refuses_hostile_json_with_a_400(work, body):
    client, token, _slot = work
    answer = client.post(reverse("work-check", args=[token]), body, content_type="application/json")
    assert answer.status_code == 400 and answer.json()["error"]


@pytest.mark.parametrize("body", [
    b'{"action": "say", "text": ' + b"[" * 3000 + b"]" * 3000 + b"}", b'{"action": "say", "text": "hi\\u0000"}',
    b'{"action": "say", "text": "\\udc00"}', b'{"action": NaN}',
], ids=["deep", "nul", "lone-surrogate", "nan"])
def test_the_chat_endpoint_refuses_hostile_json_with_a_400(work, body):
    client, token, _slot = work  # a rewrite item: the body is refused before the type is asked
    answer = client.post(reverse("work-chat", args=[token]), body, content_type="application/json")
    assert answer.status_code in (400, 404) and answer.json()["error"]


def test_deeply_nested_telemetry_is_ignored_not_a_500(work):
    client, token, slot = work
    posted = client.post(reverse("work", args=[token]), {**good_answers(slot.item), "telemetry": "[" * 1500 + "]" * 1500})
    assert posted.status_code == 302 and Response.objects.get(slot=slot).telemetry in (None, {}, [])


@pytest.mark.parametrize("goals, databases, says", [
    (b"\xff\xfe\x00not utf-8", {}, "not UTF-8"),
    (b'{"id": "g", "goal": ' + b"{" * 3000 + b"}" * 3000 + b"}\n", {}, "nests deeper"),
    (b'{"id": "g", "goal": {"restaurant": {"info": {"food": NaN}}}}\n', {}, "NaN is not JSON"),
    (b'{"id": "g", "goal": {"restaurant": {"info": {"food": "a\\u0000"}}}}\n', {}, "NUL"),
    (b'{"id": "g", "goal": {"restaurant": {"info": {"food": "x"}}}}\n', {"restaurant": b'[{"name": "a", "price": NaN}]'}, "NaN"),
    (b'{"id": "g", "goal": {"restaurant": {"info": {"food": "x"}}}}\n', {"restaurant": b"[" * 5000}, "nests deeper"),
    (b'{"id": "g", "goal": {"restaurant": {"info": {"food": "x"}}}}\n', {"restaurant": b"\xff"}, "UTF-8"),
    # Found by tests/test_fuzz_hardening.py (500s before): a domain's info, book or reqt of the wrong type.
    (b'{"id": "g", "goal": {"restaurant": {"info": "cheap"}}}\n', {}, "line 1: the 'restaurant' goal's 'info' must be an object"),
    (b'{"id": "g", "goal": {"restaurant": {"info": 3}}}\n', {}, "'info' must be an object"),
    (b'{"id": "g", "goal": {"restaurant": {"info": {"food": "x"}, "book": "today"}}}\n', {}, "'book' must be an object"),
    (b'{"d1": {"goal": {"hotel": {"info": {"area": "north"}, "reqt": "phone"}}}}', {}, "dialog d1: the 'hotel' goal's 'reqt' must be a list"),
])
def test_a_hostile_goals_upload_is_refused_whole_with_the_reason(goals, databases, says):
    with pytest.raises(EvaluationInputError, match=says):
        import_goals(name="g", goals_file=goals, databases=databases)
    assert not GoalSet.objects.exists()


def test_the_goals_page_answers_a_hostile_upload_with_400(organizer):
    from django.core.files.uploadedfile import SimpleUploadedFile

    client = Client()
    client.force_login(organizer)
    answer = client.post("/evaluation/goals/", {"name": "g", "goals": SimpleUploadedFile("g.jsonl", b"\xff\xfe bad")})
    assert answer.status_code == 400 and "not UTF-8" in answer.content.decode() and not GoalSet.objects.exists()


def test_a_rate_setting_refuses_true_rather_than_reading_it_as_1(organizer_api):
    job = make_live_job()
    answer = organizer_api.post(f"/api/jobs/{job.pk}/quality/", {"flag_share": True}, format="json")
    assert answer.status_code == 400 and "flag_share" in answer.json()
    assert organizer_api.post(f"/api/jobs/{job.pk}/quality/", {"flag_share": 0.3}, format="json").status_code == 200
