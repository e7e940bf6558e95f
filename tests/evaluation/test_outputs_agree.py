"""Wherever an organizer reads a leaderboard, it says the same thing digit for digit: the page, its
CSV/Markdown/JSON downloads, the API and the management commands, on the DSTC9 human-evaluation
campaign and on one interactive (live-chat) run. The two rank columns are named apart ("Tie-group
rank", "Rank range") with the sentence that says what each is, and the interactive column of failed
calls is "Failed calls" / `failed_calls` everywhere."""
import csv
import io
import json
from html import unescape

import pytest
from django.core.management import call_command
from django.urls import reverse

from evaluation.stats.report_format import RANK_COLUMNS_WORDS, RANK_RANGE, TIE_GROUP
from quorum import numbers

from .test_figures_agree import _markdown_table, _Tables

pytestmark = pytest.mark.django_db


def _command(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def _page_tables(html) -> dict:
    tables = _Tables()
    tables.feed(html)
    return tables.tables


def test_the_dstc9_leaderboard_reads_the_same_on_the_page_downloads_api_and_commands(campaign, client, organizer, organizer_api):
    from evaluation.campaigns.services.campaigns import compute_campaign_results

    compute_campaign_results(campaign.pk)
    client.force_login(organizer)
    html = client.get(reverse("evaluation:campaign-results", args=[campaign.pk])).content.decode()
    download = lambda name: client.get(reverse("evaluation:campaign-download", args=[campaign.pk, name])).content.decode()  # noqa: E731
    api_url = reverse("evaluation-api:campaign-leaderboard", args=[campaign.pk])
    api = lambda fmt: organizer_api.get(api_url, {"format": fmt}).content.decode()  # noqa: E731

    markdown, csv_text = download("leaderboard.md"), download("leaderboard.csv")
    assert markdown == api("md") == _command("leaderboard", str(campaign.pk))
    assert csv_text == api("csv") == _command("leaderboard", str(campaign.pk), "--format", "csv")
    assert json.loads(download("leaderboard.json"))["rows"] == json.loads(api("json"))["rows"]

    board = _page_tables(html)["leaderboard"]
    written = _markdown_table(markdown, TIE_GROUP)
    assert board[0][:2] == written[0][:2] == [TIE_GROUP, RANK_RANGE]
    assert board[1:] == written[1:]  # every cell of every row, as the page shows it
    for text in (unescape(html), markdown):
        assert RANK_COLUMNS_WORDS in text
    rows = {row["system"]: row for row in csv.DictReader(io.StringIO(csv_text))}
    shown = {row["system"]: row for row in json.loads(api("json"))["rows"]}
    final = board[0].index("Final [95% CI]")
    for cells in board[1:]:
        system = cells[2].split(" (")[0]
        row, data = rows[system], shown[system]
        assert (cells[1], row["rank_range"], data["rank_range"] or "") == (row["rank_range"],) * 3
        assert cells[0] in (row["rank"], "ref") and row["rank"] == ("" if data["rank"] is None else str(data["rank"]))
        if row["final"]:
            assert float(row["final"]) == data["final"]
            assert cells[final] == f"{numbers.decimals(data['final'])} {numbers.interval(data['final_ci_low'], data['final_ci_high'])}"


def test_an_interactive_run_reads_the_same_on_the_page_downloads_api_and_command(client, organizer, organizer_api, monkeypatch):
    from evaluation.interactive import selectors
    from evaluation.interactive.services.chats import create_chat_job
    from evaluation.interactive.services.systems import import_goals, register_system

    goals = import_goals(name="g", goals_file=b"".join(b'{"id": "g%d", "goal": {"restaurant": {"info": {"food": "chinese"}}}}\n' % g for g in range(8)))
    systems = [register_system(name=name, url="http://127.0.0.1:9", secret="a-secret-of-twenty-chars") for name in ("a", "b", "c")]
    job = create_chat_job(name="round 1", systems=systems, goal_set=goals)
    goal = {"restaurant": {"info": {"food": "chinese"}}}
    database = {"restaurant": [{"name": "Golden Wok", "food": "chinese"}]}

    def dialogs(_job):
        out = []
        for system, fits in (("a", [1, 1, 1, 1, 1, 1, 1, 0]), ("b", [1, 0, 1, 1, 0, 1, 0, 0]), ("c", [0, 0, 1, 0, 0, 0, 0, 0])):
            for g, fit in enumerate(fits):
                transcript = [{"role": "system", "text": "x", "failed": not fit, "offered": {"name": "Golden Wok"} if fit else None}]
                out.append({"system": system, "goal_id": str(g), "goal": goal, "goal_text": [], "database": database, "worker": None,
                            "response_id": len(out) + 1, "failed_calls": (g % 3) * (1 - fit),
                            "answers": {"outcome": "success" if fit else "fail", "transcript": transcript,
                                        "understanding": 3 + fit, "appropriateness": 2 + fit + g % 2}})
        return out

    monkeypatch.setattr(selectors, "interactive_dialogs", dialogs)
    client.force_login(organizer)
    results = lambda fmt=None: reverse("evaluation:interactive-results", args=[job.pk]) if fmt is None else reverse(  # noqa: E731
        "evaluation:interactive-results-file", args=[job.pk, fmt])
    html = client.get(results()).content.decode()
    markdown, csv_text = client.get(results("md")).content.decode(), client.get(results("csv")).content.decode()
    downloaded = json.loads(client.get(results("json")).content.decode())
    api = organizer_api.get(reverse("evaluation-api:interactive-results", args=[job.pk])).json()

    assert markdown == _command("rank_interactive", str(job.pk))
    assert csv_text == _command("rank_interactive", str(job.pk), "--format", "csv")
    assert api["systems"] == downloaded["systems"] and api["status_lines"] == downloaded["status_lines"]

    board = _page_tables(html)["interactive-ranking"]
    assert board == _markdown_table(markdown, TIE_GROUP)
    assert board[0][:2] == [TIE_GROUP, RANK_RANGE] and board[0][-1] == "Failed calls"
    for text in (unescape(html), markdown):
        assert RANK_COLUMNS_WORDS in text
    rows = list(csv.DictReader(io.StringIO(csv_text)))
    failed = [int(row["failed_calls"]) for row in rows]
    assert failed == [row["failed_calls"] for row in api["systems"]] == [int(cells[-1]) for cells in board[1:]]
    assert failed == [row["failed_turns"] for row in api["systems"]] and sum(failed) > 0  # the API's old key agrees
    final = board[0].index("Final [95% CI]")
    for cells, row, data in zip(board[1:], rows, api["systems"], strict=True):
        assert cells[0] == row["rank"] == str(data["rank"]) and cells[1] == f"{row['rank_low']}-{row['rank_high']}" == f"{data['rank_low']}-{data['rank_high']}"
        assert float(row["final"]) == data["final"]
        assert cells[final] == f"{numbers.decimals(data['final'])} {numbers.interval(data['final_ci_low'], data['final_ci_high'])}"
