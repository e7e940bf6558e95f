"""The create_job and launch_job management commands: thin wrappers that print the job and its items."""
import io

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Job
from annotation.services.jobs import create_job, finish_job, launch_job
from tests.factories import make_corpus

pytestmark = pytest.mark.django_db


def run(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_create_job_prints_the_job_id_and_item_count():
    make_corpus(name="restaurants", dialogs=3, user_turns=2)
    output = run("create_job", "restaurants", "--name", "rewrites", "--redundancy", "3", "--reward", "0.40",
                 "--variants", "typos", "paraphrase")
    job = Job.objects.get(name="rewrites")
    assert f"job {job.pk} " in output and "6 items" in output
    assert (job.state, job.redundancy, str(job.reward)) == (Job.State.DRAFT, 3, "0.40")
    assert job.settings["variants"] == ["paraphrase", "typos"]


def test_create_job_with_a_sample_or_chosen_dialogs():
    make_corpus(name="restaurants", dialogs=3, user_turns=2)
    assert "4 items" in run("create_job", "restaurants", "--name", "a", "--sample", "4", "--seed", "2")
    assert "2 items" in run("create_job", "restaurants", "--name", "b", "--dialogs", "d2")
    assert "4 items" in run("create_job", "restaurants", "--name", "c", "--dialogs", "d0", "d1")
    assert "6 items" in run("create_job", "restaurants", "--name", "d", "--setting", "typo_max_edit_ratio=0.2")
    assert Job.objects.get(name="d").settings["typo_max_edit_ratio"] == 0.2


@pytest.mark.parametrize(
    "args,message",
    [
        (["nowhere", "--name", "x"], "No corpus named 'nowhere'"),
        (["restaurants", "--name", "x", "--dialogs", "d9"], "d9"),
        (["restaurants", "--name", "x", "--variants", "sarcastic"], "variants"),
        (["restaurants", "--name", "x", "--task-type", "sarcasm"], "unknown task type"),
        (["restaurants", "--name", "x", "--redundancy", "0"], "redundancy"),
        (["restaurants", "--name", "x", "--reward", "lots"], "--reward"),
        (["restaurants", "--name", "x", "--setting", "typo_max_edit_ratio"], "NAME=JSON"),
        (["restaurants", "--name", "x", "--setting", "colour=red"], "not JSON"),
        (["restaurants", "--name", "x", "--sample", "0"], "size"),
    ],
)
def test_create_job_refusals_are_command_errors_with_the_reason(args, message):
    make_corpus(name="restaurants")
    with pytest.raises(CommandError, match=message):
        run("create_job", *args)
    assert not Job.objects.exists()


def test_launch_job_makes_the_job_live_and_prints_its_items():
    job = create_job(corpus=make_corpus(dialogs=2, user_turns=2), name="rewrites")
    output = run("launch_job", str(job.pk))
    assert f"Job {job.pk} " in output and "live with 4 items" in output
    assert Job.objects.get(pk=job.pk).state == Job.State.LIVE


def test_launch_job_refusals_are_command_errors():
    with pytest.raises(CommandError, match="No job with id 999"):
        run("launch_job", "999")
    job = finish_job(launch_job(create_job(corpus=make_corpus(), name="x")))
    with pytest.raises(CommandError, match="a finished job cannot be launched"):
        run("launch_job", str(job.pk))
    assert Job.objects.get(pk=job.pk).state == Job.State.FINISHED
