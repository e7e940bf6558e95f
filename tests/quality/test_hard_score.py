"""CGoDial hard-test scoring, a preset of the questionnaire type: settings, validation, and the hard
subset (items whose mean score is above 2.5)."""
import pytest

from annotation import task_types
from annotation.selectors.quality import subset
from annotation.services.claims import claim_next_slot, submit_response
from annotation.services.jobs import JobError, create_job, launch_job
from tests.factories import make_corpus

KIND = task_types.get("hard_score")


def test_it_is_registered_with_the_published_defaults():
    settings = KIND.clean_settings({})
    assert [q["label"] for q in settings["questions"]] == ["Hard to understand", "Spoken features on keywords"]
    assert settings["subset_threshold"] == 2.5
    assert [f["choices"] and list(f["choices"]) for f in KIND.answer_fields(settings)] == [[1, 2, 3, 4, 5]] * 2
    assert KIND.agreement_level == "ordinal" and not isinstance(KIND, task_types.Votable)
    assert isinstance(KIND, task_types.FromCorpusTurns) and KIND.source_speaker == "user"


@pytest.mark.parametrize(
    "given, name",
    [
        ({"questions": []}, "questions"),
        ({"questions": [{"name": "a", "label": "A", "anchors": ["1", "2"]}] * 2}, "questions"),
        ({"subset_threshold": 5}, "subset_threshold"),
        ({"subset_threshold": "x"}, "subset_threshold"),
        ({"criteria": ["old"]}, "criteria"),
    ],
)
def test_bad_settings_name_the_setting(given, name):
    with pytest.raises(task_types.TaskTypeSettingsError) as exc:
        KIND.clean_settings(given)
    assert name in exc.value.errors


def test_scores_must_be_whole_numbers_on_the_scale():
    settings = KIND.clean_settings({})
    cleaned, problems = KIND.validate({}, settings, {"criterion_1": "5", "criterion_2": 1})
    assert cleaned == {"criterion_1": 5, "criterion_2": 1} and problems == []
    cleaned, problems = KIND.validate({}, settings, {"criterion_1": 4.0, "criterion_2": "3"})
    assert cleaned == {"criterion_1": 4, "criterion_2": 3} and problems == []  # JSON numbers may be floats
    _, problems = KIND.validate({}, settings, {"criterion_1": "6", "criterion_2": "2.5"})
    assert {p.field for p in problems} == {"criterion_1", "criterion_2"}
    _, problems = KIND.validate({}, settings, {"criterion_1": 4.5, "criterion_2": True})
    assert {p.field for p in problems} == {"criterion_1", "criterion_2"}


def test_the_bounds_come_from_each_questions_scale():
    settings = KIND.clean_settings({"questions": [{"name": "q", "label": "Q", "anchors": ["lo", "mid", "hi"], "values": [0, 5, 10]}], "subset_threshold": 6})
    assert KIND.validate({}, settings, {"q": 10})[1] == []
    assert [p.field for p in KIND.validate({}, settings, {"q": 4})[1]] == ["q"]
    with pytest.raises(task_types.TaskTypeSettingsError, match="subset_threshold"):
        KIND.clean_settings({**settings, "subset_threshold": 10})


def test_combine_is_the_mean_per_question_and_over_everything():
    settings = KIND.clean_settings({})
    combined = KIND.combine([{"criterion_1": 2, "criterion_2": 3}, {"criterion_1": 4, "criterion_2": 5}], settings)
    assert combined == {"criterion_1": 3.0, "criterion_2": 4.0, "mean": 3.5, "responses": 2}
    assert KIND.in_subset(combined, settings) is True
    assert KIND.combine([], settings)["mean"] is None


@pytest.mark.django_db
def test_items_with_a_mean_above_the_threshold_form_the_hard_subset(make_annotator):
    job = launch_job(create_job(corpus=make_corpus(dialogs=2, user_turns=2), name="hard", task_type="hard_score", redundancy=2))
    workers = [make_annotator(f"s{i}")[1] for i in range(2)]
    # Means per item in position order: 4.0, 2.5 (not above), 2.75, 1.0.
    plan = {0: [(4, 4), (4, 4)], 1: [(2, 3), (3, 2)], 2: [(3, 3), (2, 3)], 3: [(1, 1), (1, 1)]}
    for worker_index, worker in enumerate(workers):
        while (slot := claim_next_slot(job=job, worker=worker)) is not None:
            a, b = plan[slot.item.position][worker_index]
            submit_response(slot_id=slot.id, worker=worker, answers={"criterion_1": a, "criterion_2": b})
    rows = subset(job)
    assert [(h.subject, h.combined["mean"]) for h in rows] == [
        (job.items.get(position=0).payload["utterance"], 4.0),
        (job.items.get(position=2).payload["utterance"], 2.75),
    ]


@pytest.mark.django_db
def test_a_rewrite_job_has_no_subset():
    job = create_job(corpus=make_corpus(), name="r")
    with pytest.raises(ValueError, match="defines no subset"):
        subset(job)


@pytest.mark.django_db
def test_a_vote_job_cannot_be_made_from_corpus_turns():
    with pytest.raises(JobError, match="enable voting"):
        create_job(corpus=make_corpus(), name="v", task_type="vote")
