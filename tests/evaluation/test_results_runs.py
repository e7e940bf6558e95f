"""A campaign's results computation keeps a record of its latest attempt (`CampaignResultsRun`):
"compute" says it is queued, the task says it is running, then the results show, or the failure is
named with its reason above the earlier results, shown stale, which a failure leaves as they were.
The broker being down and a worker lost mid-computation give an honest line too, and the beat
sweep queues such an attempt again. What is asserted is what an organizer sees: the page's line
and the API's `results_run`."""
import html
import json
import re
from datetime import timedelta

import pytest
from django.conf import settings
from django.urls import reverse
from django.utils import dateformat, timezone

from annotation.services import attempts
from evaluation import tasks
from evaluation.campaigns.services import results_runs
from evaluation.campaigns.services.campaigns import compute_campaign_results, refresh_inputs_version
from evaluation.models import CampaignResult, CampaignResultsRun, Rating
from tests.attempts import look_while_running

from .test_api import BASE, client_for

pytestmark = pytest.mark.django_db


def _shown(t) -> str:
    """A time as the line prints it."""
    return dateformat.format(timezone.localtime(t), "Y-m-d H:i:s T")


def _results_section(client, campaign) -> str:
    """The text of the campaign page's results section, whitespace collapsed."""
    body = client.get(reverse("evaluation:campaign-results", args=[campaign.pk])).content.decode()
    section = re.search(r'<section id="results"[^>]*>(.*?)</section>', body, re.S).group(1)
    return html.unescape(" ".join(re.sub(r"<[^>]+>", " ", section).split()))


def _run_line(client, campaign) -> str | None:
    """The text of the computation's line (`#results-run`), None when the page shows none."""
    body = client.get(reverse("evaluation:campaign-results", args=[campaign.pk])).content.decode()
    found = re.search(r'<p[^>]*id="results-run"[^>]*>(.*?)</p>', body, re.S)
    return None if found is None else html.unescape(" ".join(re.sub(r"<[^>]+>", "", found.group(1)).split()))


def _results_run(api, campaign) -> dict | None:
    return api.get(f"{BASE}/campaigns/{campaign.pk}/").json()["results_run"]


def _odd_data(monkeypatch, message="singular matrix in the bootstrap"):
    """The statistics fail as they would on data they cannot handle."""
    def fail(*args, **kwargs):
        raise ArithmeticError(message)

    monkeypatch.setattr(results_runs, "compute_campaign_results", fail)


def _new_rating(campaign):
    """The inputs change (one rating more), so the stored result turns stale."""
    rating = Rating.objects.filter(campaign=campaign).order_by("pk").first()
    Rating.objects.create(campaign=campaign, entry=rating.entry, instance=rating.instance, question=rating.question, rater="late-rater", value=3)
    refresh_inputs_version(campaign)


@pytest.fixture
def page(organizer, client):
    client.force_login(organizer)  # the organizer's browser
    return client


def _compute(api, campaign, capture):
    with capture(execute=True):  # the task runs in-process at the commit
        return api.post(f"{BASE}/campaigns/{campaign.pk}/results/")


def test_a_failed_computation_keeps_the_earlier_results_and_the_page_and_the_api_name_the_failure(
    organizer, page, campaign, monkeypatch, django_capture_on_commit_callbacks,
):
    earlier = compute_campaign_results(campaign.pk)
    _new_rating(campaign)
    _odd_data(monkeypatch)
    api = client_for(organizer)

    answer = _compute(api, campaign, django_capture_on_commit_callbacks)

    assert answer.status_code == 202  # a failed computation is no failed request
    assert answer.json()["run"]["status"] == "queued"  # as it stood when answered; the task ran at the commit, after
    assert list(CampaignResult.objects.filter(campaign=campaign)) == [earlier]
    run = CampaignResultsRun.objects.get(campaign=campaign)
    assert run.requested_by == organizer
    line = _run_line(page, campaign)
    assert line == (
        f"The computation at {_shown(run.started_at)} failed: ArithmeticError: singular matrix in the bootstrap. "
        f"The results below are from {_shown(earlier.computed_at)} (stale)."
    ), line
    section = _results_section(page, campaign)
    assert "Traceback" not in section and "new results are on their way" not in section
    assert "team3/entry0" in section  # the earlier leaderboard is still shown
    shown = _results_run(api, campaign)
    assert shown["status"] == "failed" and shown["current"] is True and shown["error"] == "ArithmeticError: singular matrix in the bootstrap"
    detail = api.get(f"{BASE}/campaigns/{campaign.pk}/").json()
    assert detail["results"] == "stale"
    listed = next(row for row in api.get(f"{BASE}/campaigns/").json()["results"] if row["id"] == campaign.pk)
    assert listed["results_run"] == shown


def test_a_failure_before_any_results_were_stored_says_so(organizer, page, campaign, monkeypatch, django_capture_on_commit_callbacks):
    _odd_data(monkeypatch, "x" * 1000 + "\nsecond line")
    _compute(client_for(organizer), campaign, django_capture_on_commit_callbacks)
    line = _run_line(page, campaign)
    assert line.startswith("The computation at") and "failed: ArithmeticError: xxx" in line
    assert "second line" not in line and "results below" not in line
    assert "No results yet." in _results_section(page, campaign)


def test_the_export_failing_is_the_computation_failing_too(organizer, page, campaign, monkeypatch, django_capture_on_commit_callbacks):
    def disk_full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(results_runs, "export_campaign", disk_full)
    _compute(client_for(organizer), campaign, django_capture_on_commit_callbacks)
    assert "failed: OSError: [Errno 28] No space left on device." in _run_line(page, campaign)


def test_a_success_after_a_failure_clears_the_failure_line(organizer, page, campaign, monkeypatch, django_capture_on_commit_callbacks):
    compute_campaign_results(campaign.pk)
    _new_rating(campaign)
    api = client_for(organizer)
    _odd_data(monkeypatch)
    _compute(api, campaign, django_capture_on_commit_callbacks)
    assert "failed" in _run_line(page, campaign)

    monkeypatch.undo()  # the data is fixed
    with django_capture_on_commit_callbacks(execute=True):
        answer = page.post(reverse("evaluation:campaign-compute", args=[campaign.pk]), follow=True)

    assert answer.status_code == 200
    assert _run_line(page, campaign) is None
    section = _results_section(page, campaign)
    assert "failed" not in section and "The inputs changed" not in section
    shown = _results_run(api, campaign)
    assert shown["status"] == "succeeded" and shown["error"] == "" and shown["current"] is False
    assert api.get(f"{BASE}/campaigns/{campaign.pk}/").json()["results"] == "current"


def test_compute_says_queued_then_running_then_shows_the_results(organizer, page, campaign, monkeypatch, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as queued:
        response = page.post(reverse("evaluation:campaign-compute", args=[campaign.pk]))
    assert response.status_code == 302
    run = CampaignResultsRun.objects.get(campaign=campaign)
    assert run.status == CampaignResultsRun.Status.QUEUED and run.requested_by == organizer
    assert _run_line(page, campaign) == f"Computing the results: queued at {_shown(run.queued_at)}."
    assert _results_run(client_for(organizer), campaign)["status"] == "queued"

    seen_while_running = look_while_running(monkeypatch, results_runs, "compute_campaign_results", lambda: _run_line(page, campaign))
    queued[0]()  # the worker takes it

    started = CampaignResultsRun.objects.get(campaign=campaign).started_at
    assert seen_while_running == [f"Computing the results: running since {_shown(started)}."]
    assert _run_line(page, campaign) is None
    assert "team3/entry0" in _results_section(page, campaign)


def test_the_api_202_says_the_computation_is_queued(organizer, campaign, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False):
        answer = client_for(organizer).post(f"{BASE}/campaigns/{campaign.pk}/results/")
    run = answer.json()["run"]
    assert answer.status_code == 202 and answer.json()["status"] == "queued"
    assert run["status"] == "queued" and run["current"] is True and run["queued_at"] and run["started_at"] is None and run["error"] == ""


def test_an_adaptive_campaign_that_stopped_records_its_computation(campaign, monkeypatch, django_capture_on_commit_callbacks):
    """run_adaptive_look goes through the recorded path: its computation is queued as "compute" queues it."""
    from evaluation.models import CampaignLook

    look = CampaignLook(campaign=campaign, number=1, decision=CampaignLook.Decision.RESOLVED)
    monkeypatch.setattr(tasks, "run_look", lambda campaign_id: look)
    with django_capture_on_commit_callbacks(execute=True):
        tasks.run_adaptive_look(campaign.pk)
    run = CampaignResultsRun.objects.get(campaign=campaign)
    assert run.status == CampaignResultsRun.Status.SUCCEEDED and run.requested_by is None
    assert CampaignResult.objects.filter(campaign=campaign, inputs_version=campaign.inputs_version).exists()


# --- the broker down, a worker lost ------------------------------------------------------------------------


def test_with_the_broker_down_the_computation_is_recorded_as_queued_and_says_the_queue_did_not_take_it(
    broker_down, organizer, page, campaign, django_capture_on_commit_callbacks,
):
    answer = _compute(client_for(organizer), campaign, django_capture_on_commit_callbacks)
    assert answer.status_code == 202 and broker_down == [(campaign.pk,)]
    shown = _results_run(client_for(organizer), campaign)
    assert shown["status"] == "queued" and "queue could not be reached" in shown["error"] and shown["current"] is True
    run = CampaignResultsRun.objects.get(campaign=campaign)
    assert _run_line(page, campaign) == (
        f"Computing the results: queued at {_shown(run.queued_at)}, but the background queue could not be reached "
        f"at {run.queued_at:%H:%M} UTC; Quorum will try again by itself by "
        f"{run.queued_at + timedelta(seconds=settings.QUORUM_LOST_WORK_SWEEP_SECONDS):%H:%M} UTC (or start a worker, or check the broker)."
    )


def test_the_sweep_queues_again_a_computation_still_queued(organizer, page, campaign, queued_by_name, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        results_runs.request_campaign_results(campaign, by=organizer)
    assert queued_by_name == [("evaluation.tasks.compute_campaign_results", campaign.pk)]  # it reached no worker (lost)
    queued_by_name.clear()
    assert tasks.sweep_campaign_results() == 0 and queued_by_name == []  # it may be waiting behind others yet

    CampaignResultsRun.objects.filter(campaign=campaign).update(queued_at=timezone.now() - attempts.QUEUED_GRACE - timedelta(seconds=1))
    assert tasks.sweep_campaign_results() == 1
    assert queued_by_name == [("evaluation.tasks.compute_campaign_results", campaign.pk)]
    tasks.compute_campaign_results(campaign.pk)  # the worker takes it, once the broker is back
    assert CampaignResultsRun.objects.get(campaign=campaign).status == CampaignResultsRun.Status.SUCCEEDED
    assert _run_line(page, campaign) is None
    assert tasks.sweep_campaign_results() == 0


def test_a_computation_left_running_by_a_lost_worker_is_failed_by_the_sweep_and_queued_again(
    organizer, page, campaign, queued_by_name,
):
    earlier = compute_campaign_results(campaign.pk)
    _new_rating(campaign)
    long_ago = timezone.now() - timedelta(minutes=settings.QUORUM_RUN_DEADLINE_MINUTES + 5)
    CampaignResult.objects.filter(pk=earlier.pk).update(computed_at=long_ago - timedelta(minutes=15))  # computed before
    earlier.refresh_from_db()
    CampaignResultsRun.objects.create(campaign=campaign, status=CampaignResultsRun.Status.RUNNING, started_at=long_ago)
    # A worker killed mid-computation: the page says since when, so the organizer can judge.
    assert _run_line(page, campaign) == f"Computing the results: running since {_shown(long_ago)}."

    assert tasks.sweep_campaign_results() == 1 and queued_by_name == [("evaluation.tasks.compute_campaign_results", campaign.pk)]

    assert _run_line(page, campaign) == (
        f"The computation at {_shown(long_ago)} failed: no result within {settings.QUORUM_RUN_DEADLINE_MINUTES} minutes "
        f"of its start (the worker running it was lost); the beat sweep queued it again. "
        f"The results below are from {_shown(earlier.computed_at)} (stale)."
    )
    assert "the worker running it was lost" in _results_run(client_for(organizer), campaign)["error"]
    tasks.compute_campaign_results(campaign.pk)  # the queued attempt
    assert _run_line(page, campaign) is None
    assert CampaignResultsRun.objects.get(campaign=campaign).status == CampaignResultsRun.Status.SUCCEEDED


def test_a_recent_running_computation_is_left_alone_by_the_sweep(campaign, queued_by_name):
    CampaignResultsRun.objects.create(campaign=campaign, status=CampaignResultsRun.Status.RUNNING, started_at=timezone.now())
    assert tasks.sweep_campaign_results() == 0 and queued_by_name == []
    assert CampaignResultsRun.objects.get(campaign=campaign).status == CampaignResultsRun.Status.RUNNING


def test_a_campaign_without_ratings_is_refused_at_once_with_nothing_recorded(organizer, page, test_set):
    from evaluation.campaigns.services.campaigns import create_campaign

    empty = create_campaign("empty", test_set, [])
    answer = page.post(reverse("evaluation:campaign-compute", args=[empty.pk]), follow=True)
    assert "has no entries" in answer.content.decode()
    assert client_for(organizer).post(f"{BASE}/campaigns/{empty.pk}/results/").status_code == 400
    assert not CampaignResultsRun.objects.exists()


def test_stale_results_say_whether_new_ones_are_coming(organizer, page, campaign, django_capture_on_commit_callbacks):
    """After the inputs change with nothing queued the page says to press Compute results (it said
    "new results are on their way" then, and nothing was); once a computation is queued, it says so."""
    earlier = compute_campaign_results(campaign.pk)
    _new_rating(campaign)
    shown_at = dateformat.format(timezone.localtime(earlier.computed_at), "Y-m-d H:i")
    body = page.get(reverse("evaluation:campaign-results", args=[campaign.pk])).content.decode()
    banner = re.search(r'<p class="warning" id="stale-results">(.*?)</p>', body, re.S).group(1)
    assert 'href="#campaign-actions">Compute results</a>' in banner
    section = _results_section(page, campaign)
    assert f"The inputs changed since these results were computed ({shown_at}), and no computation of the current inputs is queued" in section
    assert "on their way" not in section

    with django_capture_on_commit_callbacks(execute=False):
        page.post(reverse("evaluation:campaign-compute", args=[campaign.pk]))
    section = _results_section(page, campaign)
    assert f"The inputs changed since these results were computed ({shown_at}); new results for the current inputs are on their way" in section
    assert "no computation" not in section


def test_stale_downloads_say_they_are_out_of_date(organizer, page, campaign):
    """The leaderboard files the page offers carry the staleness the API's JSON carries."""
    earlier = compute_campaign_results(campaign.pk)

    def download(name):
        return page.get(reverse("evaluation:campaign-download", args=[campaign.pk, name]))

    fresh = download("leaderboard.md")
    assert "Out of date" not in fresh.content.decode() and "X-Results-Stale" not in fresh
    assert "stale" not in json.loads(download("leaderboard.json").content)  # current: the file as the computation wrote it
    _new_rating(campaign)
    md = download("leaderboard.md")
    at = dateformat.format(timezone.localtime(earlier.computed_at), "Y-m-d H:i T")
    assert md.content.decode().startswith(f"> **Out of date.** The campaign's inputs (ratings, entries or instances) changed after these results were computed ({at})")
    assert md["X-Results-Stale"] == "1" and "-stale-leaderboard.md" in md["Content-Disposition"]
    board = json.loads(download("leaderboard.json").content)
    assert board["stale"] is True and board["computed_at"] == earlier.computed_at.isoformat()
    csv_file = download("leaderboard.csv")
    assert csv_file["X-Results-Stale"] == "1" and "-stale-leaderboard.csv" in csv_file["Content-Disposition"]
    # The API's Markdown says it as the page's download does.
    api_md = page.get(reverse("evaluation-api:campaign-leaderboard", args=[campaign.pk]), {"format": "md"})
    assert api_md["X-Results-Stale"] == "1" and api_md.content.decode().startswith("> **Out of date.**")
    assert f"({at})" in api_md.content.decode()
