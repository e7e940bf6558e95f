"""CGoDial hard-test scoring as a task type: settings, validation, and the hard subset (mean > 2.5)."""
import pytest

from annotation import task_types
from annotation.selectors.quality import hard_subset
from annotation.services.claims import claim_next_slot, submit_response
from annotation.services.jobs import JobError, create_job, launch_job
from annotation.task_types.hard_score import item_mean
from tests.factories import make_corpus

KIND = task_types.get("hard_score")


def test_it_is_registered_with_the_published_defaults():
    settings = KIND.clean_settings({})
    assert settings == {"criteria": ["Hard to understand", "Spoken features on keywords"], "hard_threshold": 2.5}
    assert KIND.agreement_level == "ordinal" and not KIND.supports_voting


@pytest.mark.parametrize(
    "given, name",
    [({"criteria": []}, "criteria"), ({"criteria": ["a", "A "]}, "criteria"), ({"hard_threshold": 5}, "hard_threshold"), ({"hard_threshold": "x"}, "hard_threshold")],
)
def test_bad_settings_name_the_setting(given, name):
    with pytest.raises(task_types.TaskTypeSettingsError) as exc:
        KIND.clean_settings(given)
    assert name in exc.value.errors


def test_scores_must_be_whole_numbers_from_1_to_5():
    settings = KIND.clean_settings({})
    cleaned, problems = KIND.validate({}, settings, {"criterion_1": "5", "criterion_2": 1})
    assert cleaned == {"criterion_1": 5, "criterion_2": 1} and problems == []
    _, problems = KIND.validate({}, settings, {"criterion_1": "6", "criterion_2": "2.5"})
    assert {p.field for p in problems} == {"criterion_1", "criterion_2"}


def test_item_mean_is_over_every_score():
    assert item_mean([{"a": 2, "b": 3}, {"a": 4, "b": 5}]) == 3.5
    assert item_mean([]) is None


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
    subset = hard_subset(job)
    assert [(h.utterance, h.mean_score) for h in subset] == [
        (job.items.get(position=0).payload["utterance"], 4.0),
        (job.items.get(position=2).payload["utterance"], 2.75),
    ]
    assert [h.mean_score for h in hard_subset(job, threshold=3.5)] == [4.0]


@pytest.mark.django_db
def test_a_rewrite_job_has_no_hard_subset():
    job = create_job(corpus=make_corpus(), name="r")
    with pytest.raises(ValueError, match="not a hard_score job"):
        hard_subset(job)


@pytest.mark.django_db
def test_a_vote_job_cannot_be_made_from_corpus_turns():
    with pytest.raises(JobError, match="enable voting"):
        create_job(corpus=make_corpus(), name="v", task_type="vote")
