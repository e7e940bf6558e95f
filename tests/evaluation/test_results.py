"""Computing, storing and exporting campaign results."""
import csv
import json

import pytest

from evaluation import tasks
from evaluation.campaigns.services.campaigns import (
    compute_campaign_results,
    create_campaign,
    refresh_inputs_version,
)
from evaluation.campaigns.services.exports import export_campaign
from evaluation.campaigns.services.results_runs import request_campaign_results
from evaluation.errors import EvaluationInputError
from evaluation.models import CampaignResult, Rating

from .conftest import DSTC9

pytestmark = pytest.mark.django_db


def eq1_by_hand(team, entry, question):
    labels = json.loads((DSTC9 / "labels.json").read_text())
    outputs = json.loads((DSTC9 / "human_eval" / team / f"{entry}.json").read_text())
    evals = json.loads((DSTC9 / "human_eval" / team / f"{entry}.human_eval.json").read_text())
    total = sum(sum(e[question]) / len(e[question]) for e in evals if e)
    p = total / sum(o["target"] for o in outputs)
    r = total / sum(label["target"] for label in labels)
    return 2 * p * r / (p + r)


def test_results_follow_eq1_and_are_stored_once(campaign):
    result = compute_campaign_results(campaign.pk)
    rows = {row["system"]: row for row in result.report["systems"]}
    team3 = rows["team3/entry0"]
    assert team3["weighted"]
    assert team3["questions"]["accuracy"]["score"] == pytest.approx(eq1_by_hand("team3", "entry0", "accuracy"))
    assert team3["final"] == pytest.approx((eq1_by_hand("team3", "entry0", "accuracy") + eq1_by_hand("team3", "entry0", "appropriateness")) / 2)
    assert rows["ground-truth/labels"]["rank"] is None and rows["baseline/entry0"]["rank"] is None
    assert all(rows[k]["rank"] is not None for k in ("team1/entry1", "team2/entry0", "team3/entry0"))
    entries = [s for s in result.report["systems"] if s["kind"] == "entry"]
    assert [s["rank"] for s in entries] == sorted(s["rank"] for s in entries)  # tie groups are monotone down the table
    again = compute_campaign_results(campaign.pk)
    assert again.pk == result.pk and CampaignResult.objects.count() == 1
    assert result.report["agreement"]["accuracy"]["raters"] is None  # positional raters: no diagnostics


def test_new_inputs_give_a_new_result_same_inputs_same_numbers(campaign):
    first = compute_campaign_results(campaign.pk)
    rating = Rating.objects.filter(campaign=campaign).order_by("pk").first()
    original = rating.value
    rating.value = 1 if original != 1 else 5
    rating.save()
    second = compute_campaign_results(campaign.pk)
    assert second.inputs_version != first.inputs_version
    assert second.report["systems"] != first.report["systems"]
    rating.value = original
    rating.save()
    third = compute_campaign_results(campaign.pk)
    assert third.pk == first.pk  # back to the first inputs: the stored result, not a recompute
    CampaignResult.objects.filter(pk=first.pk).delete()
    fourth = compute_campaign_results(campaign.pk)
    assert json.dumps(fourth.report, sort_keys=True) == json.dumps(first.report, sort_keys=True)


def test_campaign_without_ratings_is_a_clear_error(test_set):
    empty = create_campaign("empty", test_set, [])
    with pytest.raises(EvaluationInputError, match="has no entries"):
        compute_campaign_results(empty.pk)


def test_task_is_enqueued_on_commit(campaign, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        request_campaign_results(campaign)
        assert not CampaignResult.objects.exists()  # nothing runs before the commit
    assert len(callbacks) == 1
    assert CampaignResult.objects.filter(campaign=campaign, inputs_version=campaign.inputs_version).exists()
    assert tasks.compute_campaign_results.delay(campaign.pk).get()["inputs_version"] == campaign.inputs_version


def test_export_writes_every_file(campaign, tmp_path):
    compute_campaign_results(campaign.pk)
    refresh_inputs_version(campaign)
    written = export_campaign(campaign, tmp_path / "out")
    assert set(written) == {"leaderboard.json", "leaderboard.csv", "leaderboard.md", "pairwise.csv", "spearman.csv", "fragility.csv", "agreement.json", "instance_scores.csv", "scores.png", "ratings.png"}
    for name in ("scores.png", "ratings.png"):
        assert written[name].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with written["instance_scores.csv"].open() as handle:
        rows = list(csv.DictReader(handle))
    assert set(rows[0]) == {"team_id", "entry_id", "instance", "accuracy", "appropriateness", "accuracy_count", "appropriateness_count"}
    assert len(rows) == len(set(Rating.objects.values_list("entry_id", "instance")))
    board = json.loads(written["leaderboard.json"].read_text())
    assert board["rows"][0]["system"] == "ground-truth/labels"
    with written["fragility.csv"].open() as handle:
        fragile = list(csv.DictReader(handle))
    ranked = [row["system"] for row in board["rows"] if row["kind"] == "entry" and row["rank"] is not None]
    assert [(row["above"], row["below"]) for row in fragile if "adjacent" in row["place"]] == list(zip(ranked, ranked[1:], strict=False))
    assert fragile[0]["place"].startswith("rank 1") and fragile[0]["above"] == ranked[0]
    assert len({(row["above"], row["below"]) for row in fragile}) == len(fragile)  # rank 1 and adjacent: one row
    assert len(board["fragility"]) == len(fragile)
    agreement = json.loads(written["agreement.json"].read_text())
    assert set(agreement["agreement"]["accuracy"]["levels"]) == {"ordinal", "interval"}


def test_the_campaign_list_shows_the_result_the_campaign_page_shows(campaign):
    """The list (`campaigns_with_status`, in SQL for every campaign at once) and the campaign page
    (`shown_result_at`, the one rule in Python) must name the same result: current, stale or none,
    and when it was computed. Walked through every case: none, current, stale, and the inputs
    going back to an older result's while a newer stale one exists."""
    from datetime import timedelta

    from django.utils import timezone

    from evaluation.campaigns import selectors
    from evaluation.models import Campaign

    def listed_and_shown():
        row = selectors.campaigns_with_status().get(pk=campaign.pk)
        at, stale = selectors.shown_result_at(Campaign.objects.get(pk=campaign.pk))
        shown = "none" if at is None else "stale" if stale else "current"
        return (selectors.results_status(row), row.shown_computed_at), (shown, at)

    def set_inputs(version):
        Campaign.objects.filter(pk=campaign.pk).update(inputs_version=version)

    now = timezone.now()
    set_inputs("v1")
    listed, shown = listed_and_shown()
    assert listed == shown == ("none", None)

    first = CampaignResult.objects.create(campaign=campaign, inputs_version="v1", report={})
    CampaignResult.objects.filter(pk=first.pk).update(computed_at=now - timedelta(hours=2))
    listed, shown = listed_and_shown()
    assert listed == shown == ("current", now - timedelta(hours=2))

    set_inputs("v2")  # the ratings changed: the v1 result is stale
    listed, shown = listed_and_shown()
    assert listed == shown == ("stale", now - timedelta(hours=2))

    second = CampaignResult.objects.create(campaign=campaign, inputs_version="v2", report={})
    CampaignResult.objects.filter(pk=second.pk).update(computed_at=now - timedelta(hours=1))
    set_inputs("v3")  # stale again: the latest of the older results is shown
    listed, shown = listed_and_shown()
    assert listed == shown == ("stale", now - timedelta(hours=1))

    set_inputs("v1")  # back to the first inputs: their result is current, though v2's is newer
    listed, shown = listed_and_shown()
    assert listed == shown == ("current", now - timedelta(hours=2))


def test_the_page_offers_the_agreement_the_export_writes(campaign, client, organizer, tmp_path):
    """The auditor found agreement.json in the export but not among the page's downloads."""
    from django.urls import reverse

    compute_campaign_results(campaign.pk)
    refresh_inputs_version(campaign)
    client.force_login(organizer)
    url = reverse("evaluation:campaign-download", args=[campaign.pk, "agreement.json"])
    assert url in client.get(reverse("evaluation:campaign-results", args=[campaign.pk])).content.decode()
    downloaded = json.loads(client.get(url).content)
    exported = json.loads(export_campaign(campaign, tmp_path / "out")["agreement.json"].read_text())
    assert downloaded["agreement"] == exported["agreement"] and set(downloaded["agreement"]) == {"accuracy", "appropriateness"}
    assert downloaded["inputs_version"] == exported["inputs_version"]
