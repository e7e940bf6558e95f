"""The campaign page, its Markdown and its CSVs show the same figures: the page and the Markdown
write each by one rule (`quorum.numbers`), from the full value the CSV carries."""
import csv
import io
import re
from html.parser import HTMLParser

import pytest

from quorum import numbers


class _Tables(HTMLParser):
    """The text of every cell of the page's tables, by table id."""

    def __init__(self):
        super().__init__()
        self.tables, self._table, self._row, self._cell = {}, None, None, None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self._table = self.tables.setdefault(dict(attrs).get("id"), [])
        elif tag == "tr" and self._table is not None:
            self._row = []
            self._table.append(self._row)
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self._row.append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def _markdown_table(text, first_header):
    start = text.index(f"| {first_header} |")
    lines = []
    for line in text[start:].splitlines():
        if not line.startswith("|"):
            break
        lines.append([cell.strip() for cell in line.strip("|").split("|")])
    return [lines[0]] + lines[2:]


@pytest.mark.django_db
def test_the_campaign_page_its_markdown_and_its_csvs_show_the_same_figures(campaign, client, organizer):
    from django.urls import reverse

    from evaluation.campaigns.services.campaigns import compute_campaign_results

    compute_campaign_results(campaign.pk)
    client.force_login(organizer)
    page = _Tables()
    page.feed(client.get(reverse("evaluation:campaign-results", args=[campaign.pk])).content.decode())
    download = lambda name: client.get(reverse("evaluation:campaign-download", args=[campaign.pk, name])).content.decode()  # noqa: E731
    markdown = download("leaderboard.md")
    board = {row["system"]: row for row in csv.DictReader(io.StringIO(download("leaderboard.csv")))}
    pairs = {(row["a"], row["b"]): row for row in csv.DictReader(io.StringIO(download("pairwise.csv")))}

    page_board = page.tables["leaderboard"]
    assert page_board[1:] == _markdown_table(markdown, "Rank")[1:]
    final = page_board[0].index("Final [95% CI]")
    for row in page_board[1:]:
        system = row[2].split(" (")[0]
        value = board[system]
        if value["final"]:
            # The page's figure is the CSV's value rounded, never a rounding of a rounding.
            expected = f"{numbers.decimals(float(value['final']))} {numbers.interval(float(value['final_ci_low']), float(value['final_ci_high']))}"
            assert row[final] == expected, system
    shown_pairs = page.tables["pairwise"]
    md_pairs = _markdown_table(markdown, "A")
    assert len(shown_pairs) == len(md_pairs) > 1
    for shown, written in zip(shown_pairs[1:], md_pairs[1:], strict=True):
        assert shown == written
        value = pairs[(shown[0], shown[1])]
        assert shown[2] == numbers.decimals(float(value["difference"]), 4)
        assert shown[4] == numbers.p_value(float(value["p_unadjusted"]))
        assert shown[5] == numbers.p_value(float(value["p_holm"]))
    assert any(re.fullmatch(r"< 0\.001|0\.\d{3}|1\.000", row[5]) for row in shown_pairs[1:])
