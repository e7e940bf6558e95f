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
    assert page_board[1:] == _markdown_table(markdown, "Tie-group rank")[1:]
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


@pytest.mark.django_db
def test_the_interactive_page_and_its_downloads_show_the_same_figures_run_state_and_systems(client, organizer, monkeypatch):
    """Organizer walk, defects 4 and 5: the Markdown and CSV lacked the pairwise table and the run's
    state, a system with no counted dialog had no row, and there was no JSON download."""
    import json

    from django.utils import timezone

    from evaluation.interactive import selectors
    from evaluation.interactive.services.chats import create_chat_job
    from evaluation.interactive.services.systems import import_goals, register_system
    from evaluation.models import DialogSystem

    goals = import_goals(name="g", goals_file=b"".join(b'{"id": "g%d", "goal": {"restaurant": {"info": {"food": "chinese"}}}}\n' % g for g in range(6)))
    systems = [register_system(name=name, url="http://127.0.0.1:9", secret="a-secret-of-twenty-chars") for name in ("a", "b", "quiet")]
    job = create_chat_job(name="round 1", systems=systems, goal_set=goals)
    DialogSystem.objects.filter(name="quiet").update(paused_at=timezone.now(), paused_reason="5 consecutive failed turns")
    goal = {"restaurant": {"info": {"food": "chinese"}}}
    database = {"restaurant": [{"name": "Golden Wok", "food": "chinese"}]}

    def dialogs(_job):
        out = []
        for system, fits in (("a", [1, 1, 1, 1, 1, 0]), ("b", [1, 0, 0, 1, 0, 0])):
            for g, fit in enumerate(fits):
                transcript = [{"role": "system", "text": "x", "failed": False, "offered": {"name": "Golden Wok"} if fit else None}]
                out.append({"system": system, "goal_id": str(g), "goal": goal, "goal_text": [], "database": database, "worker": None,
                            "response_id": len(out) + 1, "answers": {"outcome": "success" if fit else "fail", "transcript": transcript,
                                                                     "understanding": 4, "appropriateness": 3}})
        return out

    monkeypatch.setattr(selectors, "interactive_dialogs", dialogs)
    client.force_login(organizer)
    html = client.get(reverse_results(job)).content.decode()
    page = _Tables()
    page.feed(html)
    download = lambda fmt: client.get(reverse_results(job, fmt)).content.decode()  # noqa: E731
    markdown, board, pairs = download("md"), list(csv.DictReader(io.StringIO(download("csv")))), list(csv.DictReader(io.StringIO(download("pairwise.csv"))))
    shown = json.loads(download("json"))
    assert 'id="results-json"' in html

    assert page.tables["interactive-ranking"] == _markdown_table(markdown, "Tie-group rank")
    assert page.tables["interactive-pairwise"] == _markdown_table(markdown, "A")
    assert [row["system"] for row in board] == [row[2] for row in page.tables["interactive-ranking"][1:]] == ["a", "b", "quiet"]
    assert board[2]["note"].startswith("no dialog collected yet") and shown["unscored"][0]["reason"] == "no dialog collected yet"
    for row, cells in zip(board[:2], page.tables["interactive-ranking"][1:3], strict=True):
        assert cells[6] == f"{numbers.decimals(float(row['final']))} {numbers.interval(float(row['final_ci_low']), float(row['final_ci_high']))}"
    assert len(pairs) == len(shown["pairwise"]) == 1 and float(pairs[0]["difference"]) == shown["pairwise"][0]["difference"]

    # The run's state comes first on the page and in the Markdown, and on every CSV row.
    status = " ".join(shown["status_lines"])
    assert status.startswith("0 of 18 dialogs collected; the job is live")  # done counts submitted responses: none here
    assert "quiet paused since" in status and "5 consecutive failed turns" in status and "provisional" in status
    assert html.index('id="run-status"') < html.index('id="interactive-ranking"') < html.index('id="methods"')
    assert markdown.splitlines()[2] == "> " + status
    assert all(row["run"] == status for row in board)
    assert shown == client.get(f"/api/evaluation/interactive/{job.pk}/").json()


def reverse_results(job, fmt=None):
    from django.urls import reverse

    return reverse("evaluation:interactive-results-file", args=[job.pk, fmt]) if fmt else reverse("evaluation:interactive-results", args=[job.pk])
