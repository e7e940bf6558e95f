"""The Markdown leaderboard (the download, `manage.py leaderboard` and `manage.py rank`) says what
each score is in the words the campaign page's "How to read this" uses: Eq. 1's S_f or the plain
mean of instance means.

Organizer walk on DSTC9 Track 1: `rank` on the published ratings without the detection columns put
team18/entry3 first at 4.472, the campaign's leaderboard.md put team19/entry2 first at 4.392 (Table
V); neither file said that the first is a plain mean and the second Eq. 1, which only the page said."""
import html
import io
import re

import pytest
from django.core.management import call_command
from django.urls import reverse

from evaluation.campaigns.services.campaigns import compute_campaign_results

pytestmark = pytest.mark.django_db


def _scores_line(markdown: str) -> str:
    return next(line for line in markdown.splitlines() if line.startswith("Scores: "))


def test_the_markdown_says_what_the_page_says_each_score_is(campaign, client, organizer):
    compute_campaign_results(campaign.pk)
    client.force_login(organizer)
    page = client.get(reverse("evaluation:campaign-results", args=[campaign.pk])).content.decode()
    guide = html.unescape(" ".join(re.sub(r"<[^>]+>", " ", re.search(r'id="reading-scores">(.*?)</p>', page, re.S).group(1)).split()))
    said = guide.removeprefix("How to read this: ").split("; the final score")[0]
    downloaded = client.get(reverse("evaluation:campaign-download", args=[campaign.pk, "leaderboard.md"])).content.decode()
    out = io.StringIO()
    call_command("leaderboard", campaign.name, stdout=out)
    for markdown in (downloaded, out.getvalue()):
        assert _scores_line(markdown).startswith(f"Scores: {said}.")
    assert "Eq. 1's S_f" in said


def test_rank_on_plain_ratings_says_its_scores_are_plain_means(tmp_path):
    rows = ["system,instance,rater,question,rating"]
    rows += [f"{system},{i},r{r},accuracy,{1 + (i + r + len(system)) % 5}" for system in ("a/e0", "b/e0") for i in range(8) for r in range(3)]
    path = tmp_path / "ratings.csv"
    path.write_text("\n".join(rows) + "\n")
    out = io.StringIO()
    call_command("rank", str(path), "--no-rater-ids", stdout=out)
    line = _scores_line(out.getvalue())
    assert "the mean over rated instances of each instance's mean rating" in line and "S_f" not in line
