"""The leaderboard's rank range says what the pairwise table beside it says, on the page, in the
Markdown and in the API's JSON: from 1 + the entries the table calls significantly better (Holm) to
the number of entries less those it calls significantly worse.

Organizer walk on the real DSTC9 ratings: every finalist but team21 is in the first tie group, and
the range ran from the group's first place: team20/entry4 read "1-9" beside a pairwise table whose
"Better (Holm)" column named six entries better than it (team19, team03, team10, team15, team17,
team18), so it could not be first, nor second. It reads "7-9" now; its tie-group rank is still 1,
and the reading guide says a pair inside a group can still differ and the range says so.
"""
import html
import re

import pytest
from django.urls import reverse

from evaluation.campaigns import leaderboard
from evaluation.campaigns.services.campaigns import compute_campaign_results
from evaluation.stats import scoring

pytestmark = pytest.mark.django_db


def _ranges_from_table(systems, pairs):
    """{system: 'low-high'} as the pairwise table reads: pairs as (a, b, better or None)."""
    ranked = set(systems)
    out = {}
    for system in systems:
        mine = [(a, b, better) for a, b, better in pairs if system in (a, b) and {a, b} <= ranked]
        above = sum(better is not None and better != system for _a, _b, better in mine)
        below = sum(better == system for _a, _b, better in mine)
        out[system] = f"{1 + above}-{len(systems) - below}"
    return out


def _cells(text):
    return [html.unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", text, re.S)]


def _page_tables(page):
    board = page[page.index('<table id="leaderboard"'):page.index("</table>", page.index('<table id="leaderboard"'))]
    rows = [_cells(r) for r in re.findall(r"<tr[^>]*>(.*?)</tr>", board, re.S)[1:]]
    ranges = {r[2]: r[1] for r in rows if r[0] != "ref"}
    table = page[page.index('<table id="pairwise">'):page.index("</table>", page.index('<table id="pairwise">'))]
    pairs = [(c[0], c[1], None if c[6] == "no difference shown" else c[6]) for c in (_cells(r) for r in re.findall(r"<tr>(.*?)</tr>", table, re.S)[1:])]
    return ranges, pairs


def _markdown_tables(markdown):
    board = markdown[markdown.index("| Tie-group rank |"):].split("\n\n")[0].splitlines()[2:]
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in board]
    ranges = {r[2]: r[1] for r in rows if r[0] != "ref"}
    part = markdown[markdown.index("| A | B |"):].split("\n\n")[0].splitlines()[2:]
    pair_rows = [[c.strip() for c in line.strip("|").split("|")] for line in part]
    return ranges, [(c[0], c[1], None if c[6] == "no difference shown" else c[6]) for c in pair_rows]


def test_the_range_is_what_the_pairwise_table_says_on_every_output(campaign, client, organizer, organizer_api):
    compute_campaign_results(campaign.pk)
    client.force_login(organizer)
    page = client.get(reverse("evaluation:campaign-results", args=[campaign.pk])).content.decode()
    markdown = organizer_api.get(f"/api/evaluation/campaigns/{campaign.pk}/leaderboard/?format=md").content.decode()
    api = organizer_api.get(f"/api/evaluation/campaigns/{campaign.pk}/leaderboard/").json()

    api_ranges = {r["system"]: r["rank_range"] for r in api["rows"] if r["kind"] == "entry" and r["rank"] is not None}
    api_pairs = [(p["a"], p["b"], p["better"]) for p in api["pairwise"]]
    for ranges, pairs in (_page_tables(page), _markdown_tables(markdown), (api_ranges, api_pairs)):
        assert ranges == _ranges_from_table(list(ranges), pairs)
        assert ranges == api_ranges
    # The wording says what the range is, and that a group's rows can still differ.
    assert "1 plus the number of entries significantly better than it" in api["method"]["rank_range"]
    assert "two rows of one group can still differ" in api["method"]["rank"]
    assert "a pair inside a group can still differ" in page


def test_a_row_beaten_inside_its_group_has_its_range_start_after_the_group():
    # a beats c; no line can be drawn (b beats neither): one group ranked 1, and c's range starts at 2.
    pairs = [{"a": "a", "b": "b", "difference": 0.1, "significant_holm": False},
             {"a": "a", "b": "c", "difference": 0.2, "significant_holm": True},
             {"a": "b", "b": "c", "difference": 0.1, "significant_holm": False}]
    groups = scoring.holm_rank_groups(["a", "b", "c"], pairs)
    assert groups.rank == [1, 1, 1]
    assert list(zip(groups.rank_low, groups.rank_high, strict=True)) == [(1, 2), (1, 3), (2, 3)]
    assert _ranges_from_table(["a", "b", "c"], [(p["a"], p["b"], p["a"] if p["significant_holm"] else None) for p in pairs]) == {
        "a": "1-2", "b": "1-3", "c": "2-3"}
    assert leaderboard.rows  # the leaderboard writes rank_low-rank_high (test_dstc9_golden.py on the real data)
