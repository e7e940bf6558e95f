"""The leaderboard's count column says what it counts, the same way on the page, in the Markdown
and in the CSV header: test-set instances rated (on DSTC9, 1945 for team19/entry2), not ratings (it
has 3 ratings of each) nor dialogs. It was headed "n" everywhere and explained nowhere."""
import csv
import io
import re

import pytest
from django.urls import reverse

from evaluation.campaigns import leaderboard
from evaluation.campaigns.services.campaigns import compute_campaign_results

pytestmark = pytest.mark.django_db


def test_the_count_column_is_named_and_explained_alike_everywhere(campaign, client, organizer, organizer_api):
    report = compute_campaign_results(campaign.pk).report
    client.force_login(organizer)
    page = client.get(reverse("evaluation:campaign-results", args=[campaign.pk])).content.decode()
    markdown = client.get(reverse("evaluation:campaign-download", args=[campaign.pk, "leaderboard.md"])).content.decode()
    table = client.get(reverse("evaluation:campaign-download", args=[campaign.pk, "leaderboard.csv"])).content.decode()
    api = organizer_api.get(f"/api/evaluation/campaigns/{campaign.pk}/leaderboard/").json()

    head = page[page.index('<table id="leaderboard"'):page.index("</thead>", page.index('<table id="leaderboard"'))]
    assert "<th>Instances rated</th>" in head and "<th>n</th>" not in head
    assert "| Final | Instances rated | Unrated |" in markdown.splitlines()[0]
    header = next(csv.reader(io.StringIO(table)))
    assert "instances_rated" in header and "n" not in header
    assert {f"{q}_instances_rated" for q in campaign.questions} <= set(header)
    # The sentence that says what it counts, on the page and in the Markdown.
    words = leaderboard.INSTANCES_RATED_WORDS
    said = " ".join(re.sub(r"<[^>]+>", " ", re.search(r'id="instances-rated">(.*?)</p>', page, re.S).group(1)).split())
    assert said.replace("&lt;", "<").replace("&gt;", ">") == f"{words}."
    assert f"{words}." in markdown
    # What it counts: instances with a rating of every question, whatever the raters per instance.
    rows = {r["system"]: r for r in api["rows"]}
    for system in report["systems"]:
        row = rows[system["system"]]
        assert row["instances_rated"] == system["n"]
        assert all(row["instances_rated"] <= row[f"{q}_instances_rated"] <= system["questions"][q]["ratings"] for q in campaign.questions)
    assert any(system["questions"][q]["ratings"] > rows[system["system"]][f"{q}_instances_rated"]
               for system in report["systems"] for q in campaign.questions)  # several ratings per instance: not a count of ratings
    # The Spearman table's count is named too.
    assert "<th>Entries</th>" in page or "spearman" not in api or not api["spearman"]
