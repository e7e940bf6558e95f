"""`score_entries` keeps Quorum's recomputation beside the published objective scores, never over
them, and every output of a campaign's correlations says which scores each row reads.

Organizer walk on the DSTC9 data: `score_entries` replaced every entry's published METEOR with
Quorum's (team19/entry2 0.3869 -> 0.3792), so once results were computed again the leaderboard's
METEOR correlation with the human score moved from rho 0.6727 to 0.5273 without anyone choosing it,
and no output said which scores it had read. The published values now stay; the correlations are
computed on each source apart, each row naming its source, on the page, in leaderboard.md,
spearman.csv, the API's JSON and Markdown and `manage.py leaderboard`.
"""
import csv
import html
import io
import re

import pytest
from django.core.management import call_command
from django.urls import reverse

from evaluation.campaigns.services.campaigns import compute_campaign_results, create_campaign
from evaluation.campaigns.services.imports import import_entries, import_human_eval
from evaluation.campaigns.services.objective import score_entries
from evaluation.models import Entry

from .conftest import DSTC9

pytestmark = pytest.mark.django_db

UPLOADED = "from the uploaded score file"
COMPUTED = "computed by Quorum"


@pytest.fixture
def campaign_before_and_after(test_set):
    import_entries(test_set, DSTC9 / "entries", scores_path=DSTC9 / "score.csv")
    campaign = create_campaign("human-eval", test_set, [])
    import_human_eval(campaign, DSTC9 / "human_eval")
    before = compute_campaign_results(campaign.pk).report
    published = {e.label: dict(e.objective_scores) for e in Entry.objects.filter(test_set=test_set)}
    score_entries(test_set)
    after = compute_campaign_results(campaign.pk).report
    campaign.refresh_from_db()
    return campaign, before, after, published


def test_score_entries_leaves_the_published_scores_and_their_correlation_as_they_were(campaign_before_and_after):
    campaign, before, after, published = campaign_before_and_after
    assert {e.label: e.objective_scores for e in Entry.objects.filter(test_set=campaign.test_set)} == published
    assert after["spearman"] == before["spearman"]  # on the published values, computed as before
    # The recomputation is beside them, and on this fixture it orders some metric differently.
    assert set(after["spearman_computed"]) >= set(after["spearman"])
    assert any(after["spearman_computed"][m]["rho"] != after["spearman"][m]["rho"] for m in after["spearman"])


def _page_rows(page: str) -> list[tuple]:
    table = page[page.index('<table id="spearman">'):page.index("</table>", page.index('<table id="spearman">'))]
    rows = re.findall(r"<tr><td>([^<]+)</td><td>([^<]+)</td><td>([^<]+)</td>", table)
    return [(metric, html.unescape(scores), rho) for metric, scores, rho in rows]


def _markdown_rows(markdown: str) -> list[tuple]:
    part = markdown[markdown.index("## Spearman correlation"):]
    return [tuple(c.strip() for c in line.strip("|").split("|")[:3]) for line in part.splitlines() if line.startswith("| ") and not line.startswith("| Metric")]


def test_every_output_says_which_scores_each_correlation_reads(campaign_before_and_after, client, organizer, organizer_api):
    campaign, _before, after, _published = campaign_before_and_after
    client.force_login(organizer)
    page = client.get(reverse("evaluation:campaign-results", args=[campaign.pk])).content.decode()
    download = client.get(reverse("evaluation:campaign-download", args=[campaign.pk, "leaderboard.md"])).content.decode()
    spearman_csv = client.get(reverse("evaluation:campaign-download", args=[campaign.pk, "spearman.csv"])).content.decode()
    api = organizer_api.get(f"/api/evaluation/campaigns/{campaign.pk}/leaderboard/").json()
    api_md = organizer_api.get(f"/api/evaluation/campaigns/{campaign.pk}/leaderboard/?format=md").content.decode()
    out = io.StringIO()
    call_command("leaderboard", campaign.name, stdout=out)

    from quorum import numbers

    def rho(value):
        return "n/a" if value["rho"] is None else numbers.decimals(value["rho"], 4)

    expected = [(m, UPLOADED, rho(v)) for m, v in after["spearman"].items()]
    expected += [(m, COMPUTED, rho(v)) for m, v in after["spearman_computed"].items()]
    assert _page_rows(page) == expected
    for markdown in (download, api_md, out.getvalue()):
        assert _markdown_rows(markdown) == expected
    csv_rows = list(csv.DictReader(io.StringIO(spearman_csv)))
    assert [(r["metric"], r["scores_text"], rho({"rho": float(r["rho"]) if r["rho"] else None})) for r in csv_rows] == expected
    assert [(r["metric"], r["scores"], rho(r)) for r in api["spearman"]] == [
        (m, "uploaded" if s == UPLOADED else "computed", rho) for m, s, rho in expected
    ]
    # The sentence above the table says the same in each: published values, the recomputation beside them.
    sentence = api["method"]["objective_scores"]
    assert "uploaded score file (what the challenge published)" in sentence and "never replaces them" in sentence
    assert sentence in html.unescape(page) and sentence in download and sentence in out.getvalue()


def test_a_report_stored_before_the_sources_were_apart_says_it_read_them_merged(campaign_before_and_after):
    from evaluation.campaigns import leaderboard

    _campaign, _before, after, _published = campaign_before_and_after
    old = {k: v for k, v in after.items() if k != "spearman_computed"}
    old["method"] = {k: v for k, v in after["method"].items() if k != "objective_scores"}
    rows = leaderboard.spearman_rows(old)
    assert rows and {r["scores"] for r in rows} == {"merged"}
    assert "Quorum's values where it computed one" in leaderboard.to_markdown(old)


def test_the_objective_scores_page_says_the_published_values_stay(campaign_before_and_after, client, organizer):
    campaign, *_ = campaign_before_and_after
    client.force_login(organizer)
    page = client.get(reverse("evaluation:objective-scores", args=[campaign.test_set.pk])).content.decode()
    said = " ".join(re.sub(r"<[^>]+>", " ", re.search(r'id="objective-sources">(.*?)</p>', page, re.S).group(1)).split())
    assert "never over them" in said and "reads the uploaded value where there is one" in said
