"""A pairwise ranking stored before the rank range changed (1 + the systems significantly better, by
the Holm-adjusted decisions, to N less those significantly worse) kept its old ranges beside the
pairwise table until someone pressed "Compute again". Each report now records the method that
computed it: one stored by an older method is computed again in the background (the page, the API
and the beat sweep ask for it), and until it is, the page, the downloads and the API say so.
A report of today's method is left alone."""
import csv
import io

import pytest
from django.urls import reverse

from annotation.models import RunStatus
from evaluation.campaigns.services import pairwise
from evaluation.models import PairwiseReport
from evaluation.stats.report_format import PAIRWISE_REPORT_METHOD

from .test_pairwise_report import computed, pairwise_job, vote

pytestmark = pytest.mark.django_db


def _stored_before_the_change(job) -> tuple[PairwiseReport, list[dict]]:
    """The job's report as an older Quorum stored it (no method recorded, ranges that are not today's)
    and the rows today's method gives."""
    report = computed(job)
    body = report.report
    rows = [dict(row) for row in body["rows"]]
    for row in body["rows"]:
        row["rank_low"] = row["rank_high"] = len(body["rows"]) + 1  # a range no pairwise table gives
    PairwiseReport.objects.filter(pk=report.pk).update(method=0, report=body)
    return report, rows


def test_a_report_of_an_older_method_is_computed_again_when_the_page_is_read(make_annotator, organizer, client, django_capture_on_commit_callbacks):
    job = pairwise_job(4)
    vote(job, make_annotator("ann")[1], 12)
    old, today = _stored_before_the_change(job)
    client.force_login(organizer)
    with django_capture_on_commit_callbacks(execute=True):  # the background task runs at the commit
        page = client.get(reverse("evaluation:pairwise-ranking", args=[job.pk])).content.decode()
    assert 'id="pairwise-older-method"' in page and "computed with an older method" in page
    assert 'id="pairwise-report-run"' in page  # the recomputation, followed on the page
    shown = PairwiseReport.objects.get(job=job, status=RunStatus.SUCCEEDED)
    assert shown.pk != old.pk and shown.method == PAIRWISE_REPORT_METHOD
    assert shown.report["rows"] == today and today != old.report["rows"]  # the ranges as the pairwise table says
    again = client.get(reverse("evaluation:pairwise-ranking", args=[job.pk])).content.decode()
    assert "computed with an older method" not in again


def test_a_current_report_is_left_alone(make_annotator, organizer, client, organizer_api, monkeypatch):
    job = pairwise_job(3)
    vote(job, make_annotator("ann")[1], 9)
    report = computed(job)
    asked = []
    monkeypatch.setattr(pairwise, "request_report", lambda *a, **k: asked.append(a) or pytest.fail("asked again"))
    client.force_login(organizer)
    page = client.get(reverse("evaluation:pairwise-ranking", args=[job.pk])).content.decode()
    answer = organizer_api.get(reverse("evaluation-api:pairwise-ranking", args=[job.pk])).json()
    assert "older method" not in page and answer["older_method"] is False and answer["method"] == PAIRWISE_REPORT_METHOD
    assert "older_method" not in pairwise.settle_lost_reports()
    assert list(PairwiseReport.objects.filter(job=job).values_list("pk", flat=True)) == [report.pk] and not asked


def test_an_older_report_that_cannot_be_computed_at_once_is_marked_everywhere(make_annotator, organizer, client, organizer_api, monkeypatch):
    job = pairwise_job(3)
    vote(job, make_annotator("ann")[1], 9)
    _stored_before_the_change(job)
    queued = []
    monkeypatch.setattr(pairwise, "after_commit", lambda name, *args, **kw: queued.append((name, *args)))  # no worker picks it up
    client.force_login(organizer)
    page = client.get(reverse("evaluation:pairwise-ranking", args=[job.pk])).content.decode()
    assert "computed with an older method" in page and "It is being computed again" in page
    markdown = client.get(reverse("evaluation:pairwise-ranking-file", args=[job.pk, "md"]))
    assert markdown["X-Report-Older-Method"] == "1" and "older-method" in markdown["Content-Disposition"]
    assert markdown.content.decode().startswith("## pairs\n\n> This ranking was computed with an older method (method 0;")
    csv_answer = client.get(reverse("evaluation:pairwise-ranking-file", args=[job.pk, "csv"]))
    rows = list(csv.DictReader(io.StringIO(csv_answer.content.decode())))
    assert all("computed with an older method" in row["note"] for row in rows) and csv_answer["X-Report-Older-Method"] == "1"
    answer = organizer_api.get(reverse("evaluation-api:pairwise-ranking", args=[job.pk])).json()
    assert answer["older_method"] is True and answer["method"] == 0 and "older method" in answer["older_method_note"]
    assert answer["under_way"] is not None  # one recomputation asked for, however many times it is read
    assert len(queued) == 1 and PairwiseReport.objects.filter(job=job, status=RunStatus.PENDING).count() == 1


def test_the_sweep_asks_again_for_a_report_of_an_older_method(make_annotator, monkeypatch):
    older, current = pairwise_job(2, name="older"), pairwise_job(2, name="current")
    worker = make_annotator("ann")[1]
    vote(older, worker, 6)
    vote(current, worker, 6)
    _stored_before_the_change(older)
    computed(current)
    queued = []
    monkeypatch.setattr(pairwise, "queue_now", lambda name, *args: queued.append((name, *args)) or True)
    assert pairwise.settle_lost_reports() == {"requeued": 0, "failed": 0, "older_method": 1}
    waiting = PairwiseReport.objects.get(status=RunStatus.PENDING)
    assert waiting.job_id == older.pk and queued == [("evaluation.tasks.compute_pairwise_report", waiting.pk)]
    assert pairwise.settle_lost_reports() == {"requeued": 0, "failed": 0}  # asked once: it waits


# The ratings leaderboard: its stored results name their report format, and the campaign's inputs
# version, stored too, kept calling results of the previous format current until an input changed.

def _results_of_the_previous_format(campaign):
    """The campaign's results as the previous Quorum stored them: format REPORT_FORMAT - 1, and the
    inputs version that format gave (the campaign's stored one, unchanged since)."""
    from evaluation.campaigns.services.campaigns import compute_campaign_results
    from evaluation.models import Campaign, CampaignResult
    from evaluation.stats.report_format import REPORT_FORMAT

    result = compute_campaign_results(campaign.pk)
    report = result.report
    report["format"] = REPORT_FORMAT - 1
    earlier = "e" * 64
    CampaignResult.objects.filter(pk=result.pk).update(report=report, inputs_version=earlier)
    Campaign.objects.filter(pk=campaign.pk).update(inputs_version=earlier)
    campaign.refresh_from_db()
    return result


def test_ratings_results_of_an_older_format_are_marked_and_computed_again(campaign, client, organizer, organizer_api,
                                                                          django_capture_on_commit_callbacks):
    from evaluation.campaigns import selectors
    from evaluation.models import CampaignResult
    from evaluation.stats.report_format import REPORT_FORMAT

    old = _results_of_the_previous_format(campaign)
    url = reverse("evaluation-api:campaign-leaderboard", args=[campaign.pk])
    answer = organizer_api.get(url)
    assert answer["X-Results-Stale"] == "1" and answer.json()["stale"] is True and answer.json()["older_method"] is True
    markdown = organizer_api.get(url, {"format": "md"}).content.decode()
    assert markdown.startswith(f"> **Out of date.** These results were computed with an older method (report format {REPORT_FORMAT - 1};")
    client.force_login(organizer)
    download = client.get(reverse("evaluation:campaign-download", args=[campaign.pk, "leaderboard.md"])).content.decode()
    assert download.startswith("> **Out of date.** These results were computed with an older method")
    with django_capture_on_commit_callbacks(execute=True):  # the queued computation runs at the commit
        page = client.get(reverse("evaluation:campaign-results", args=[campaign.pk])).content.decode()
    assert 'id="older-method-results"' in page
    # The page's words are the downloads' (`stats.versions`), with what happens next in its own.
    assert f"computed with an older method (report format {REPORT_FORMAT - 1}; the current one is {REPORT_FORMAT}): their rank ranges" in page
    campaign.refresh_from_db()
    current = selectors.current_result(campaign)
    assert current is not None and current.pk != old.pk and current.report["format"] == REPORT_FORMAT
    again = client.get(reverse("evaluation:campaign-results", args=[campaign.pk])).content.decode()
    assert 'id="older-method-results"' not in again and 'id="stale-results"' not in again
    assert organizer_api.get(url).json()["older_method"] is False
    assert CampaignResult.objects.filter(campaign=campaign).count() == 2


def test_current_ratings_results_are_left_alone(campaign, client, organizer, monkeypatch):
    from evaluation.campaigns.services import results_runs
    from evaluation.campaigns.services.campaigns import compute_campaign_results

    compute_campaign_results(campaign.pk)
    monkeypatch.setattr(results_runs, "request_campaign_results", lambda *a, **k: pytest.fail("computed again"))
    client.force_login(organizer)
    page = client.get(reverse("evaluation:campaign-results", args=[campaign.pk])).content.decode()
    assert 'id="older-method-results"' not in page and 'id="stale-results"' not in page


def test_an_older_report_whose_recomputation_failed_asks_for_the_button(make_annotator, organizer, client, monkeypatch):
    job = pairwise_job(3)
    vote(job, make_annotator("ann")[1], 9)
    _stored_before_the_change(job)
    PairwiseReport.objects.create(job=job, status=RunStatus.FAILED, error="The votes cannot be ranked yet: test.")
    monkeypatch.setattr(pairwise, "request_report", lambda *a, **k: pytest.fail("asked again after a failure"))
    client.force_login(organizer)
    page = client.get(reverse("evaluation:pairwise-ranking", args=[job.pk])).content.decode()
    assert "computed with an older method" in page and "Compute it again to replace it" in page
    assert "It is being computed again" not in page and 'id="pairwise-compute"' in page
