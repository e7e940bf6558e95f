"""The flags line follows its flag run without a reload (quorum/progress.py): while the attempt is
queued or running the line carries `data-progress-url`, whose JSON answer renders the same fragment
(`_flag_run.html`); once it has finished the line says the new flags were stored and links to the
page again, or names the failure with its reason. Organizers only, as every progress endpoint."""

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import FlagRun, JobFlagReport
from annotation.services import quality as quality_services
from annotation.tasks import apply_worker_flags
from tests.attempts import assert_answer, line_text, run_followed, shown_link

from .test_flag_runs import _flags_line, _odd_data, _shown
from .test_flag_schedule import rushed_job

pytestmark = pytest.mark.django_db


@pytest.fixture
def page(organizer, client):
    client.force_login(organizer)
    return client


def _follow(client, job, query="") -> dict:
    answer = client.get(reverse("organizer:job-flags-progress", kwargs={"pk": job.pk}) + query)
    assert answer.status_code == 200 and answer["Content-Type"] == "application/json" and answer["Cache-Control"] == "no-store"
    return answer.json()


def test_recompute_now_is_followed_from_queued_through_running_to_the_stored_flags(page, monkeypatch, django_capture_on_commit_callbacks):
    job, _ = rushed_job()
    apply_worker_flags(job.pk)  # flags of an earlier run
    url = reverse("organizer:job-flags-progress", kwargs={"pk": job.pk})
    with django_capture_on_commit_callbacks(execute=False) as queued:
        page.post(reverse("organizer:job-flags", kwargs={"pk": job.pk}))
    run = FlagRun.objects.get(job=job)

    body = page.get(reverse("organizer:job", kwargs={"pk": job.pk})).content.decode()
    assert f'<span id="flags-run" class="flags-run-queued" aria-live="polite" data-progress-url="{url}">' in body
    assert "progress.js" in body
    review = page.get(reverse("organizer:job-review", kwargs={"pk": job.pk}) + "?flag=any").content.decode()
    assert f'data-progress-url="{url}?fragment=review&amp;flag=any"' in review  # its own fragment, with the queue's filters

    state = _follow(page, job)
    assert_answer(state, "queued", url, f"Recomputing worker flags: queued at {_shown(run.queued_at)}.")
    assert (state["status_display"], state["error"], state["started_at"]) == ("Queued", "", None) and state["queued_at"]
    assert line_text(state["html"]) in _flags_line(page, job)  # the page's own fragment, not a copy

    running, done = run_followed(monkeypatch, quality_services, "job_flags", lambda: _follow(page, job), queued[0])
    started = FlagRun.objects.get(job=job).started_at
    assert_answer(running, "running", url, f"Recomputing worker flags: running since {_shown(started)}.")
    computed_at = JobFlagReport.objects.get(job=job).computed_at
    assert_answer(done, "succeeded", url, f"New flags were stored at {_shown(computed_at)}: show them.")  # progress.js stops here
    assert done["error"] == "" and done["finished_at"]
    link = shown_link(done["html"], "flags-run")
    # The job page again (not merely its anchor: that would scroll the page, not load it), at the flags line.
    assert link.path == reverse("organizer:job", kwargs={"pk": job.pk}) and link.fragment == "flags-computed"
    assert link.query == f"stored={int(computed_at.timestamp())}"
    reloaded = page.get(f"{link.path}?{link.query}")
    assert reloaded.status_code == 200 and "data-progress-url=\"" + url not in reloaded.content.decode()
    assert f"Worker flags computed at {_shown(computed_at)}" in _flags_line(page, job)

    on_review = _follow(page, job, "?fragment=review&flag=any&status=bogus")
    link = shown_link(on_review["html"], "flags-run")  # back to the queue, its filters kept
    assert link.path == reverse("organizer:job-review", kwargs={"pk": job.pk}) and link.fragment == "flags-computed"
    assert link.query == f"flag=any&stored={int(computed_at.timestamp())}"


def test_a_failed_run_is_answered_with_its_reason_and_no_more_polling(organizer, page, monkeypatch, django_capture_on_commit_callbacks):
    job, _ = rushed_job()
    apply_worker_flags(job.pk)
    _odd_data(monkeypatch)
    with django_capture_on_commit_callbacks(execute=True):
        page.post(reverse("organizer:job-flags", kwargs={"pk": job.pk}))

    state = _follow(page, job)
    run = FlagRun.objects.get(job=job)
    failure = f"The recomputation at {_shown(run.started_at)} failed: ZeroDivisionError: float division by zero."
    url = reverse("organizer:job-flags-progress", kwargs={"pk": job.pk})
    assert_answer(state, "failed", url, f"{failure} The flags below are from {_shown(JobFlagReport.objects.get(job=job).computed_at)}.")
    assert state["error"] == "ZeroDivisionError: float division by zero" == run.error
    assert '<strong role="alert">' in state["html"] and "show them" not in state["html"]
    assert line_text(state["html"]) in _flags_line(page, job)


def test_the_flag_run_progress_is_for_organizers_only_and_404_without_a_job_or_a_run(page, make_annotator):
    job, _ = rushed_job()
    url = reverse("organizer:job-flags-progress", kwargs={"pk": job.pk})
    assert page.get(url).status_code == 404  # no attempt recorded yet
    FlagRun.objects.create(job=job)
    assert page.get(url).status_code == 200
    assert page.get(reverse("organizer:job-flags-progress", kwargs={"pk": job.pk + 1000})).status_code == 404
    assert page.get(url + "?fragment=dashboard").status_code == 400  # unknown fragments are named
    anonymous = Client()
    answer = anonymous.get(url)
    assert answer.status_code == 302 and answer["Location"].startswith(reverse("login"))
    anonymous.force_login(make_annotator("ann")[0])
    assert anonymous.get(url).status_code == 403
