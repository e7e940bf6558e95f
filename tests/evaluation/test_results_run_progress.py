"""The campaign page's results computation line follows the computation without a reload
(quorum/progress.py): while it is queued or running the line carries `data-progress-url`, whose JSON
answer renders the same fragment (`_results_run.html`); once it has finished the line says new
results were stored and links to the page again, or names the failure with its reason above the
earlier results. Organizers only, as every progress endpoint."""

import pytest
from django.test import Client
from django.urls import reverse

from evaluation.campaigns.services import results_runs
from evaluation.campaigns.services.campaigns import compute_campaign_results
from evaluation.models import CampaignResult, CampaignResultsRun
from tests.attempts import assert_answer, line_text, run_followed, shown_link

from .test_results_runs import _new_rating, _odd_data, _results_section, _run_line, _shown

pytestmark = pytest.mark.django_db


@pytest.fixture
def page(organizer, client):
    client.force_login(organizer)
    return client


def _follow(client, campaign) -> dict:
    answer = client.get(reverse("evaluation:campaign-results-run-progress", args=[campaign.pk]))
    assert answer.status_code == 200 and answer["Content-Type"] == "application/json" and answer["Cache-Control"] == "no-store"
    return answer.json()


def test_compute_is_followed_from_queued_through_running_to_the_stored_results(page, campaign, monkeypatch, django_capture_on_commit_callbacks):
    url = reverse("evaluation:campaign-results-run-progress", args=[campaign.pk])
    with django_capture_on_commit_callbacks(execute=False) as queued:
        page.post(reverse("evaluation:campaign-compute", args=[campaign.pk]))
    run = CampaignResultsRun.objects.get(campaign=campaign)

    body = page.get(reverse("evaluation:campaign-results", args=[campaign.pk])).content.decode()
    assert f'<p id="results-run" class="results-run-queued muted" aria-live="polite" data-progress-url="{url}">' in body
    assert "progress.js" in body

    state = _follow(page, campaign)
    assert_answer(state, "queued", url, f"Computing the results: queued at {_shown(run.queued_at)}.")
    assert (state["status_display"], state["error"], state["started_at"]) == ("Queued", "", None)
    assert line_text(state["html"]) == _run_line(page, campaign)  # the page's own fragment

    running, done = run_followed(monkeypatch, results_runs, "compute_campaign_results", lambda: _follow(page, campaign), queued[0])
    started = CampaignResultsRun.objects.get(campaign=campaign).started_at
    assert_answer(running, "running", url, f"Computing the results: running since {_shown(started)}.")
    computed_at = CampaignResult.objects.get(campaign=campaign).computed_at
    assert_answer(done, "succeeded", url, f"New results were stored at {_shown(computed_at)}: show them.")
    assert done["error"] == ""
    link = shown_link(done["html"], "results-run")
    assert link.path == reverse("evaluation:campaign-results", args=[campaign.pk]) and link.fragment == "results"
    assert link.query == f"stored={int(computed_at.timestamp())}"
    reloaded = page.get(f"{link.path}?{link.query}")
    assert reloaded.status_code == 200 and _run_line(page, campaign) is None
    assert "team3/entry0" in _results_section(page, campaign)


def test_a_failed_computation_is_answered_with_its_reason_beside_the_stale_results(page, campaign, monkeypatch, django_capture_on_commit_callbacks):
    earlier = compute_campaign_results(campaign.pk)
    _new_rating(campaign)
    _odd_data(monkeypatch)
    with django_capture_on_commit_callbacks(execute=True):
        page.post(reverse("evaluation:campaign-compute", args=[campaign.pk]))

    state = _follow(page, campaign)
    run = CampaignResultsRun.objects.get(campaign=campaign)
    url = reverse("evaluation:campaign-results-run-progress", args=[campaign.pk])
    assert_answer(state, "failed", url, (
        f"The computation at {_shown(run.started_at)} failed: ArithmeticError: singular matrix in the bootstrap. "
        f"The results below are from {_shown(earlier.computed_at)} (stale)."
    ))
    assert state["error"] == "ArithmeticError: singular matrix in the bootstrap" and line_text(state["html"]) == _run_line(page, campaign)
    assert '<strong role="alert">' in state["html"] and 'class="results-run-failed warning"' in state["html"]


def test_the_results_run_progress_is_for_organizers_only_and_404_without_a_campaign_or_a_run(page, campaign, make_annotator):
    url = reverse("evaluation:campaign-results-run-progress", args=[campaign.pk])
    assert page.get(url).status_code == 404  # no computation recorded yet
    CampaignResultsRun.objects.create(campaign=campaign)
    assert page.get(url).status_code == 200
    assert page.get(reverse("evaluation:campaign-results-run-progress", args=[campaign.pk + 1000])).status_code == 404
    anonymous = Client()
    answer = anonymous.get(url)
    assert answer.status_code == 302 and answer["Location"].startswith(reverse("login"))
    anonymous.force_login(make_annotator("ann")[0])
    assert anonymous.get(url).status_code == 403
