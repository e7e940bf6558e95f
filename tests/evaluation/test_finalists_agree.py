"""Finalist selection on the real DSTC9 Track 1 scores: the campaigns page, the API and
`manage.py select_finalists` show the same finalists, the same overall figure and the same
entries passed over.

Organizer walk: by knowledge selection's R@1 alone, team20/entry4's overall is 1/32; the page wrote
0.0313 (quorum.numbers, half up from 0.03125) and the command 0.0312 (Python's format). By the
twelve DSTC9 metrics, ten teams have outputs to rate: the page warned that team07's and team13's
entries (and the other entries of finalist teams) were passed over for lack of outputs, while the
command and the API listed ten finalists of a top 12 without a word.
"""
import io
import re

import pytest
from django.core.management import call_command
from django.urls import reverse

from evaluation.campaigns.services.imports import import_entries, import_test_set
from quorum import numbers
from tests.shared_data import DSTC9_HUMAN_EVAL, missing, shared_data

DATA = shared_data(DSTC9_HUMAN_EVAL)
DSTC9_METRICS = (
    "detection_f1,selection_mrr@5,selection_r@1,selection_r@5,generation_bleu-1,generation_bleu-2,generation_bleu-3,"
    "generation_bleu-4,generation_meteor,generation_rouge_1,generation_rouge_2,generation_rouge_l"
)

pytestmark = [pytest.mark.django_db, pytest.mark.skipif(not (DATA / "results").is_dir(), reason=missing(DATA))]


@pytest.fixture(scope="module")
def test_set(django_db_setup, django_db_blocker):
    with django_db_blocker.unblock():
        test_set = import_test_set("DSTC9 Track 1", "test", DATA / "data_eval" / "test" / "labels.json")
        import_entries(test_set, DATA / "results", scores_path=DATA / "results" / "score.csv")
        yield test_set
        test_set.challenge.delete()  # module-scoped rows outlive the tests' transactions


def _everywhere(test_set, metrics, client, organizer, organizer_api):
    client.force_login(organizer)
    form = {"test_set": test_set.pk, "metrics": metrics, "top": "12", "lower_is_better": "", "campaign": ""}
    page = client.post(reverse("evaluation:campaigns"), form).content.decode()
    shown = re.findall(r"<tr><td>(\d+)</td><td>(team\d+)</td><td>(entry\d+)</td><td>([^<(]*)", page)
    api = organizer_api.post(f"/api/evaluation/test-sets/{test_set.pk}/finalists/", {"metrics": metrics.split(","), "top": 12}, format="json").json()
    out, err = io.StringIO(), io.StringIO()
    call_command("select_finalists", "--challenge", "DSTC9 Track 1", "--test-set", "test", "--metrics", metrics, stdout=out, stderr=err)
    printed = [tuple(line.split("\t")) for line in out.getvalue().splitlines()[1:]]
    return {"page": page, "shown": [(r, t, e, o.strip()) for r, t, e, o in shown], "api": api, "printed": printed, "stderr": err.getvalue()}


def test_the_overall_figure_is_written_alike_on_the_page_and_by_the_command(test_set, client, organizer, organizer_api):
    seen = _everywhere(test_set, "selection_r@1", client, organizer, organizer_api)
    from_api = [(str(f["rank"]), f["team_id"], f["entry_id"], numbers.decimals(f["overall"], 4)) for f in seen["api"]["finalists"]]
    assert seen["shown"] == from_api == seen["printed"]
    # The case that told them apart: a value half-way at the fifth decimal (1/32), rounded half up.
    assert any(f"{f['overall']:.4f}" != numbers.decimals(f["overall"], 4) for f in seen["api"]["finalists"])


def test_entries_passed_over_for_lack_of_outputs_are_named_by_the_page_the_api_and_the_command(test_set, client, organizer, organizer_api):
    seen = _everywhere(test_set, DSTC9_METRICS, client, organizer, organizer_api)
    warning = re.search(r"Passed over for lack of outputs to rate \(known from their scores only\): ([^.]*)\.", seen["page"])
    named = warning.group(1).split(", ")
    assert seen["api"]["without_outputs"] == named
    assert f"passed over for lack of outputs to rate (known from their scores only): {', '.join(named)};" in seen["stderr"]
    # Two teams of a top 12 have no entry with outputs, which is why only ten are finalists.
    finalist_teams = {f["team_id"] for f in seen["api"]["finalists"]}
    assert len(finalist_teams) == 10
    assert {name.split("/")[0] for name in named} - finalist_teams == {"team07", "team13"}
