"""A campaign's stored results read its entries' objective scores (the Spearman correlation of each
metric with the human ranking), so scores that change after the results were computed make them
stale on the page, in the API and in the downloads, as new ratings do.

Organizer walk on the DSTC9 data: after `score_entries`, the campaign page, `GET .../leaderboard/`
(`stale: false`) and leaderboard.md went on showing correlations computed before it as current. (It
also replaced the published METEOR with Quorum's; it no longer does: test_published_scores_stay.py.)
"""
import csv
import io

import pytest
from django.core.management import call_command
from django.urls import reverse
from scipy import stats

from evaluation.campaigns.services.campaigns import compute_campaign_results, create_campaign
from evaluation.campaigns.services.imports import import_entries, import_human_eval, import_objective_scores
from evaluation.models import Entry

from .conftest import DSTC9

pytestmark = pytest.mark.django_db


@pytest.fixture
def scored_campaign(test_set):
    """The organizer's order: entries with their published scores, then the campaign's ratings."""
    import_entries(test_set, DSTC9 / "entries", scores_path=DSTC9 / "score.csv")
    campaign = create_campaign("human-eval", test_set, [])
    import_human_eval(campaign, DSTC9 / "human_eval")
    compute_campaign_results(campaign.pk)
    campaign.refresh_from_db()
    return campaign


def _shown(organizer_api, client, organizer, campaign):
    client.force_login(organizer)
    page = client.get(reverse("evaluation:campaign-results", args=[campaign.pk])).content.decode()
    markdown = client.get(reverse("evaluation:campaign-download", args=[campaign.pk, "leaderboard.md"]))
    return {
        "api": organizer_api.get(f"/api/evaluation/campaigns/{campaign.pk}/").json()["results"],
        "leaderboard_stale": organizer_api.get(f"/api/evaluation/campaigns/{campaign.pk}/leaderboard/").json()["stale"],
        "page_stale": 'id="stale-results"' in page,
        "download_stale": markdown.headers.get("X-Results-Stale") == "1",
    }


CURRENT = {"api": "current", "leaderboard_stale": False, "page_stale": False, "download_stale": False}
STALE = {"api": "stale", "leaderboard_stale": True, "page_stale": True, "download_stale": True}


def test_scores_computed_by_score_entries_make_the_results_stale_everywhere(scored_campaign, organizer_api, client, organizer):
    assert _shown(organizer_api, client, organizer, scored_campaign) == CURRENT
    published = {e.label: dict(e.objective_scores) for e in Entry.objects.filter(test_set=scored_campaign.test_set)}

    call_command("score_entries", "--challenge", "DSTC9 Track 1", "--test-set", "test", stdout=io.StringIO(), stderr=io.StringIO())

    assert _shown(organizer_api, client, organizer, scored_campaign) == STALE
    # The published scores are left as they were; computed again, the results correlate each
    # source apart (test_published_scores_stay.py says how each output names them).
    entries = {e.label: e for e in Entry.objects.filter(test_set=scored_campaign.test_set)}
    assert {label: e.objective_scores for label, e in entries.items()} == published
    compute_campaign_results(scored_campaign.pk)
    assert _shown(organizer_api, client, organizer, scored_campaign) == CURRENT
    board = organizer_api.get(f"/api/evaluation/campaigns/{scored_campaign.pk}/leaderboard/").json()
    final = {row["system"]: row["final"] for row in board["rows"] if row["kind"] == "entry"}
    shown = {(row["scores"], row["metric"]): row["rho"] for row in board["spearman"]}
    systems = sorted(final)
    for metric in ("detection_f1", "selection_r@1", "generation_bleu-1"):
        expected = stats.spearmanr([entries[s].objective_scores[metric] for s in systems], [final[s] for s in systems]).statistic
        assert shown[("uploaded", metric)] == pytest.approx(expected)
        expected = stats.spearmanr([entries[s].computed_scores[metric] for s in systems], [final[s] for s in systems]).statistic
        assert shown[("computed", metric)] == pytest.approx(expected)


def test_a_score_file_uploaded_again_makes_the_results_stale(scored_campaign, organizer_api, client, organizer, tmp_path):
    rows = list(csv.DictReader((DSTC9 / "score.csv").open()))
    for row in rows:
        row["selection_r@1"] = str(1 - float(row["selection_r@1"]))  # a corrected file: the order reversed
    corrected = tmp_path / "score.csv"
    with corrected.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)

    import_objective_scores(scored_campaign.test_set, corrected)

    assert _shown(organizer_api, client, organizer, scored_campaign) == STALE
