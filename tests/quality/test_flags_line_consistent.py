"""The flags line says one thing: while the first flag run of a job is under way it names that run,
not also "have not been computed", because static/progress.js replaces only the run's fragment
(`#flags-run`) and the rest of the line stays as the page was loaded. Once the run is done the line
read "New flags were stored at T: show them. Worker flags have not been computed for this job yet."
"""
import re

import pytest
from django.urls import reverse

from annotation.models import FlagRun
from tests.attempts import line_text

from .test_flag_schedule import rushed_job

pytestmark = pytest.mark.django_db

NOT_COMPUTED = "have not been computed"


@pytest.fixture
def page(organizer, client):
    client.force_login(organizer)
    return client


def _line_as_followed(body: str, fragment: str | None) -> str:
    """The text of the page's flags line, its run fragment replaced by `fragment` as progress.js does."""
    line = re.search(r'<p[^>]*id="flags-computed"[^>]*>(.*?)</p>', body, re.S).group(1)
    if fragment is not None:
        line = re.sub(r'<span id="flags-run".*?</span>', lambda _: fragment, line, count=1, flags=re.S)
    return line_text(line)


@pytest.mark.parametrize(("page_name", "query"), [("organizer:job", ""), ("organizer:job-review", "?fragment=review")])
def test_the_first_flag_run_followed_to_its_end_reads_as_one_story(page, django_capture_on_commit_callbacks, page_name, query):
    job, _ = rushed_job()
    assert NOT_COMPUTED in _line_as_followed(page.get(reverse(page_name, kwargs={"pk": job.pk})).content.decode(), None)
    with django_capture_on_commit_callbacks(execute=False) as queued:
        page.post(reverse("organizer:job-flags", kwargs={"pk": job.pk}))
    loaded = page.get(reverse(page_name, kwargs={"pk": job.pk})).content.decode()  # the page right after the click
    assert _line_as_followed(loaded, None).startswith("Recomputing worker flags: queued at")
    assert NOT_COMPUTED not in _line_as_followed(loaded, None)

    queued[0]()  # the worker runs it
    assert FlagRun.objects.get(job=job).status == FlagRun.Status.SUCCEEDED
    done = page.get(reverse("organizer:job-flags-progress", kwargs={"pk": job.pk}) + query).json()["html"]
    followed = _line_as_followed(loaded, done)
    assert followed.startswith("New flags were stored at") and followed.endswith("show them.")
    assert NOT_COMPUTED not in followed
