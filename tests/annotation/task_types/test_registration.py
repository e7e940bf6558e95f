"""What `register` refuses, with what to fix, before a type's module can be used: a key the job column
or the pages cannot hold, a template that is not there, default settings its own rules refuse."""
import pytest

from annotation import task_types
from annotation.models import Job
from annotation.task_types import capabilities as caps
from annotation.task_types.registration import MAX_KEY_LENGTH, problems_of, template_found


class Sketch(task_types.TaskType, caps.FromPayloads):
    """A type with everything right, to spoil one thing at a time."""

    key = "sketch"
    template = "annotation/tasks/pairwise.html"  # one that exists beside this type's app's others
    settings_help = {"labels": (["a", "b"], "The labels.")}

    def answer_fields(self, settings):
        return [{"name": "label", "label": "Label", "help": "", "choices": {v: v for v in settings["labels"]}}]

    def clean_settings(self, settings):
        cleaned = super().clean_settings(settings)
        if len(cleaned["labels"]) < 2:
            raise task_types.TaskTypeSettingsError({"labels": "give at least two labels"})
        return cleaned


def test_the_sketch_passes_and_every_registered_type_does():
    assert problems_of(Sketch()) == []
    for kind in task_types.registry().values():
        assert problems_of(kind) == [], kind.key
        assert template_found(kind)


def test_a_key_fits_the_job_column():
    assert Job._meta.get_field("task_type").max_length == MAX_KEY_LENGTH


@pytest.mark.parametrize("key", ["a" * (MAX_KEY_LENGTH + 1), "intent,b", "task=x", "Intent", "two__parts", "with space", "_x", "x-y"])
def test_a_key_the_column_or_the_pages_cannot_hold_is_refused(key):
    kind = type("Bad", (Sketch,), {"key": key})()
    with pytest.raises(ValueError, match="the key"):
        task_types.register(kind)
    assert key not in task_types.registry()


def test_a_missing_template_is_refused_by_name():
    kind = type("NoPage", (Sketch,), {"template": "annotation/tasks/no_such_page.html"})()
    with pytest.raises(ValueError, match=r"template 'annotation/tasks/no_such_page.html' is not found"):
        task_types.register(kind)
    with pytest.raises(ValueError, match="no template"):
        task_types.register(type("Blank", (Sketch,), {"template": ""})())


def test_default_settings_its_own_rules_refuse_are_refused():
    kind = type("Strict", (Sketch,), {"settings_help": {"labels": (["only"], "The labels.")}})()
    with pytest.raises(ValueError, match="refuses its own default settings: .*labels.*at least two"):
        task_types.register(kind)
