"""A field a reader does not know is named, with the accepted ones, instead of being dropped unsaid
(issue 11): the ratings CSV of `rank`/`plan_power`, the agreement CSV (command and API), the goals
JSONL and the team CSV. The API bodies are in test_api_hardening.py, check_rewrites in
tests/quality/test_check_rewrites.py, the corpus formats in tests/annotation/test_importers.py."""
import io

import pytest
from django.core.management import CommandError, call_command

from annotation.services.team import add_annotators, parse_team_csv
from evaluation.campaigns import ratings_csv
from evaluation.interactive import goals


def test_a_ratings_csv_with_targets_for_target_is_refused_naming_both(tmp_path):
    path = tmp_path / "ratings.csv"
    path.write_text("system,instance,rater,question,rating,targets\na,1,r1,q,4,1\n", encoding="utf-8")
    with pytest.raises(ratings_csv.RatingsFileError) as exc:
        ratings_csv.read(path, name="ratings.csv")
    assert str(exc.value) == (
        "ratings.csv: unknown column(s) targets; the columns are system,instance,rater,question,rating and optionally kind,target,predicted"
    )


def test_the_agreement_command_names_an_unknown_column(tmp_path):
    path = tmp_path / "a.csv"
    path.write_text("item,rater,value,value2\n1,a,1,2\n1,b,1,2\n", encoding="utf-8")
    with pytest.raises(CommandError, match="unknown column\\(s\\) value2: the header must be item,rater,value"):
        call_command("agreement", str(path), "--level", "nominal", stdout=io.StringIO())


def test_the_agreement_api_names_an_unknown_column(db, organizer_api):
    from django.core.files.uploadedfile import SimpleUploadedFile

    upload = SimpleUploadedFile("a.csv", b"item,rater,value,note\n1,a,1,x\n1,b,1,y\n", content_type="text/csv")
    response = organizer_api.post("/api/evaluation/agreement/", {"file": upload, "level": "nominal"}, format="multipart")
    assert response.status_code == 400
    assert "unknown column(s) note" in response.json()["file"][0]


def test_a_goals_line_with_an_unknown_key_is_refused():
    raw = b'{"id": "g1", "goal": {"restaurant": {"info": {"food": "thai"}}}, "databse": "restaurant"}\n'
    with pytest.raises(goals.GoalError, match="line 1: unknown key\\(s\\) 'databse'"):
        goals.parse_goals(raw)


def test_a_team_row_with_more_cells_than_columns_is_reported_and_not_added(db):
    rows = parse_team_csv("username,email,name\nann,ann@example.org,Lee, Ann\n")
    [result] = add_annotators(rows)
    assert not result.ok and "4 cells; the columns are username, email, name" in result.message
