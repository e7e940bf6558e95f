"""An entries import says how many entries it added alike from the command, the page and the API:
those with outputs and those a score file named without outputs.

Organizer walk on DSTC9 Track 1: `import_entries --scores score.csv` printed "imported 11 entries",
while the test set then had 107 (the API's test set `entries`, the campaigns page's Entries column):
the 95 entries score.csv names without published outputs, which the page's message counts, went
unsaid."""
import io

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command

from evaluation.campaigns.services.imports import import_test_set

from .conftest import DSTC9
from .test_api_finalists_human_eval import zipped

pytestmark = pytest.mark.django_db


@pytest.fixture
def score_csv(tmp_path):
    """The fixture's scores with two rows in DSTC9's numeric ids for entries whose outputs were never published."""
    path = tmp_path / "score.csv"
    path.write_text((DSTC9 / "score.csv").read_text() + "7,0,0.91,0.72,0.31\n7,1,0.92,0.74,0.30\n")
    return path


def test_the_command_counts_the_entries_the_page_and_the_api_count(score_csv, organizer_api):
    import_test_set("DSTC9 Track 1", "by-command", DSTC9 / "labels.json")
    out = io.StringIO()
    call_command("import_entries", str(DSTC9 / "entries"), "--challenge", "DSTC9 Track 1", "--test-set", "by-command", "--scores", str(score_csv), stdout=out)

    by_api = import_test_set("DSTC9 Track 1", "by-api", DSTC9 / "labels.json")
    answer = organizer_api.post(
        f"/api/evaluation/test-sets/{by_api.pk}/entries/",
        {"archive": zipped(DSTC9 / "entries"), "scores": SimpleUploadedFile("score.csv", score_csv.read_bytes())}, format="multipart",
    ).json()
    listed = {t["name"]: t["entries"] for t in organizer_api.get("/api/evaluation/test-sets/").json()}

    assert answer["scored_only"] == 2 and answer["entries"] + answer["scored_only"] == listed["by-api"] == listed["by-command"]
    printed = out.getvalue()
    assert f"Imported {answer['entries']} entries with outputs and their objective scores: " in printed
    assert "The scores also named 2 entries without outputs (ranked, never finalists)." in printed
