"""The Likert task type and jobs built from payloads (annotation.services.payload_jobs)."""
import pytest

from annotation import task_types
from annotation.models import Item, Job, PayloadSet, Slot
from annotation.services.jobs import JobError, create_job
from annotation.services.payload_jobs import create_payload_job
from annotation.task_types.questionnaire import PayloadError, clean_payload
from tests.factories import make_corpus

KIND = task_types.get("likert")
SETTINGS = KIND.clean_settings({})
PAYLOAD = {
    "context": [{"speaker": "user", "text": "Can I bring my dog?"}],
    "response": "Yes, dogs are welcome.",
    "knowledge": [{"entity": "Birch House", "title": "Pets", "body": "Dogs are allowed."}],
}


def test_default_questions_are_dstc9s_with_five_anchors():
    fields = KIND.answer_fields(SETTINGS)
    assert [f["name"] for f in fields] == ["appropriateness", "accuracy"]
    assert all([a["value"] for a in f["anchors"]] == [1, 2, 3, 4, 5] for f in fields)
    assert [f["shows_knowledge"] for f in fields] == [False, True]
    assert KIND.agreement_level == "ordinal" and not isinstance(KIND, task_types.Votable)


@pytest.mark.parametrize(
    "answers, ok",
    [
        ({"appropriateness": "5", "accuracy": "1"}, True),
        ({"appropriateness": 3, "accuracy": 4.0}, True),
        ({"appropriateness": "6", "accuracy": "1"}, False),
        ({"appropriateness": "0", "accuracy": "1"}, False),
        ({"appropriateness": "", "accuracy": "1"}, False),
        ({"appropriateness": True, "accuracy": "1"}, False),
        ({"appropriateness": 2.5, "accuracy": "1"}, False),
        ({"accuracy": "1"}, False),
    ],
)
def test_answers_must_be_whole_ratings_from_1_to_5(answers, ok):
    cleaned, problems = KIND.validate(PAYLOAD, SETTINGS, answers)
    assert (not problems) == ok
    if ok:
        assert cleaned == {k: int(v) for k, v in answers.items()}
    else:
        assert problems[0].field == "appropriateness" and "choose a rating from 1 to 5" in problems[0].message


@pytest.mark.parametrize(
    "job_settings, message",
    [
        ({"questions": []}, "give 1 to 20 questions"),
        ({"questions": [{"name": "x y", "label": "X", "anchors": list("abcde")}]}, "short identifier"),
        ({"questions": [{"name": "x", "label": "X", "anchors": list("a")}]}, "2 to 11 non-empty labels"),
        ({"questions": [{"name": "x", "label": "X", "anchors": list("ab"), "values": [2, 1]}]}, "increasing order"),
        ({"questions": [{"name": "x", "label": "X", "anchors": list("abcde")}] * 2}, "used twice"),
        ({"questions": [{"name": "x", "label": " ", "anchors": list("abcde")}]}, "'label'"),
        ({"questions": [{"name": "x", "label": "X", "anchors": list("abcde"), "colour": 1}]}, "unknown key"),
        ({"scale": 7}, "unknown setting"),
    ],
)
def test_bad_settings_name_the_problem(job_settings, message):
    with pytest.raises(task_types.TaskTypeSettingsError, match=message):
        KIND.clean_settings(job_settings)


@pytest.mark.parametrize(
    "payload, message",
    [
        ({**PAYLOAD, "system": "team3"}, "unknown payload key"),
        ({**PAYLOAD, "context": []}, "'context'"),
        ({**PAYLOAD, "context": [{"speaker": "U", "text": "hi"}]}, "context turn 0"),
        ({**PAYLOAD, "response": "  "}, "'response'"),
        ({**PAYLOAD, "knowledge": [{"title": "no body"}]}, "'knowledge'"),
        ("text", "must be an object"),
    ],
)
def test_bad_payloads_are_refused(payload, message):
    with pytest.raises(PayloadError, match=message):
        clean_payload(payload)


@pytest.mark.django_db
def test_payload_job_has_one_item_per_payload_in_order_with_slots():
    payloads = [{**PAYLOAD, "response": f"Answer {i}."} for i in range(4)]
    job = create_payload_job(name="rate", task_type="likert", payloads=payloads, redundancy=3)
    items = list(Item.objects.filter(job=job).order_by("position"))
    assert [i.payload["response"] for i in items] == [p["response"] for p in payloads]
    assert all(i.turn_id is None for i in items)
    assert Slot.objects.filter(job=job).count() == 12
    assert job.state == Job.State.DRAFT and job.settings == SETTINGS


@pytest.mark.django_db
@pytest.mark.parametrize(
    "changes, field, message",
    [
        ({"task_type": "rewrite"}, "task_type", "does not build its items from payloads"),
        ({"task_type": "nope"}, "task_type", "unknown task type"),
        ({"payloads": []}, "payloads", "at least one payload"),
        ({"payloads": [PAYLOAD, {"response": "x"}]}, "payloads", "payload 1: 'context'"),
        ({"redundancy": 0}, "redundancy", "from 1 to 50"),
        ({"name": " "}, "name", "name"),
        ({"settings": {"questions": []}}, "settings", "1 to 20 questions"),
    ],
)
def test_bad_payload_job_requests_write_nothing(changes, field, message):
    request = {"name": "rate", "task_type": "likert", "payloads": [PAYLOAD], "redundancy": 3, **changes}
    with pytest.raises(JobError, match=message) as caught:
        create_payload_job(**request)
    assert caught.value.field == field
    assert not Job.objects.exists() and not Item.objects.exists() and not PayloadSet.objects.exists()


@pytest.mark.django_db
def test_a_likert_job_is_not_made_from_corpus_turns():
    with pytest.raises(JobError, match="not made from corpus turns"):
        create_job(corpus=make_corpus(), name="likert", task_type="likert")
    assert not Job.objects.exists()
