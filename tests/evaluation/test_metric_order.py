"""The campaign results' Spearman table listed metrics shortest name first (PostgreSQL's order of a
JSON object's keys), not in the order of the uploaded score.csv's columns. It keeps the file's order,
on the page, in the API and in leaderboard.md."""
import csv

import pytest
from django.urls import reverse

from evaluation.campaigns.services.campaigns import compute_campaign_results, create_campaign
from evaluation.campaigns.services.imports import import_entries, import_human_eval, import_objective_scores
from evaluation.stats import report

from .conftest import DSTC9

pytestmark = pytest.mark.django_db

# Longest name first: not the order PostgreSQL gives the keys back in, nor the DSTC9 scorer's.
COLUMNS = ["generation_bleu-1", "selection_r@1", "detection_f1"]


def _score_file(path, columns, **more):
    rows = [{**row, **more} for row in csv.DictReader((DSTC9 / "score.csv").open())]
    columns = [*columns, *more]
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, ["team_id", "entry_id", *columns], extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    return path


def test_the_spearman_table_lists_metrics_in_the_score_files_order(test_set, tmp_path, organizer, organizer_api, client):
    import_entries(test_set, DSTC9 / "entries", scores_path=_score_file(tmp_path / "score.csv", COLUMNS))
    campaign = create_campaign("human-eval", test_set, [])
    import_human_eval(campaign, DSTC9 / "human_eval")
    compute_campaign_results(campaign.pk)

    client.force_login(organizer)
    page = client.get(reverse("evaluation:campaign-results", args=[campaign.pk])).content.decode()
    table = page[page.index('<table id="spearman">'):]
    assert [table.index(f"<td>{m}</td>") for m in COLUMNS] == sorted(table.index(f"<td>{m}</td>") for m in COLUMNS)
    board = organizer_api.get(f"/api/evaluation/campaigns/{campaign.pk}/leaderboard/").json()
    assert [row["metric"] for row in board["spearman"]] == COLUMNS
    markdown = client.get(reverse("evaluation:campaign-download", args=[campaign.pk, "leaderboard.md"])).content.decode()
    spearman_md = markdown[markdown.index("## Spearman"):]
    assert [spearman_md.index(f"| {m} |") for m in COLUMNS] == sorted(spearman_md.index(f"| {m} |") for m in COLUMNS)

    # A later file's new column comes after the ones already given.
    import_objective_scores(test_set, _score_file(tmp_path / "more.csv", ["selection_r@1", "generation_bleu-1"], zz="0.5"))
    test_set.refresh_from_db()
    assert test_set.score_columns == [*COLUMNS, "zz"]


def test_metrics_the_order_does_not_name_follow_as_the_scores_first_give_them():
    systems = [report.SystemSpec("a", objective={"b": 1, "a": 2}, computed={"c": 3}), report.SystemSpec("b", objective={"d": 1})]
    assert report._metric_order(["a", "x"], systems) == ["a", "b", "c", "d"]
