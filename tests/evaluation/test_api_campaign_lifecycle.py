"""The evaluation API reaches what the campaign pages do (issue 23 follow-ups): rename (PATCH) and
delete (DELETE; refused with 409 naming what depends on the campaign), the adaptive settings with
what a round adds (`unit`), and the finalists with where each score came from (computed by
score_entries or uploaded in score.csv). Organizers only: annotators get 403, anonymous callers 401."""
import csv
import io

import pytest

from evaluation.campaigns.services.campaigns import create_campaign
from evaluation.campaigns.services.crowd import create_crowd_job
from evaluation.campaigns.services.imports import import_entries, import_objective_scores
from evaluation.campaigns.services.objective import score_entries
from evaluation.models import Campaign, Entry

from .conftest import DSTC9
from .test_adaptive_campaign import _write_test_set
from .test_api import client_for

pytestmark = pytest.mark.django_db

CAMPAIGN = "/api/evaluation/campaigns/{}/"
ADAPTIVE = "/api/evaluation/campaigns/{}/adaptive/"


@pytest.fixture
def plain_campaign(tmp_path):
    test_set, entries = _write_test_set(tmp_path / "data")
    return create_campaign("pilot", test_set, entries)


def _settings(campaign):
    c = Campaign.objects.get(pk=campaign.pk)
    return (c.name, c.adaptive, c.adaptive_confidence, c.adaptive_top_k, c.adaptive_budget, c.adaptive_round_size, c.adaptive_unit)


# --- rename and delete ----------------------------------------------------------------------------


def test_an_organizer_renames_a_campaign_and_a_taken_or_blank_name_is_a_400_that_says_why(organizer_api, plain_campaign, campaign):
    renamed = organizer_api.patch(CAMPAIGN.format(plain_campaign.pk), {"name": "  Pilot   B "}, format="json")
    assert renamed.status_code == 200, renamed.content
    assert renamed.json()["name"] == "Pilot B" and Campaign.objects.get(pk=plain_campaign.pk).name == "Pilot B"

    taken = organizer_api.patch(CAMPAIGN.format(plain_campaign.pk), {"name": "human-eval"}, format="json")
    assert taken.status_code == 400 and "another campaign is called 'human-eval'" in taken.json()["detail"]
    blank = organizer_api.patch(CAMPAIGN.format(plain_campaign.pk), {"name": "   "}, format="json")
    assert blank.status_code == 400 and "name" in blank.json()
    misspelt = organizer_api.patch(CAMPAIGN.format(plain_campaign.pk), {"title": "x"}, format="json")
    assert misspelt.status_code == 400 and "title" in misspelt.json()
    assert Campaign.objects.get(pk=plain_campaign.pk).name == "Pilot B"


def test_a_campaign_nothing_depends_on_is_deleted_and_one_with_ratings_is_a_409_naming_them(organizer_api, plain_campaign, campaign):
    refused = organizer_api.delete(CAMPAIGN.format(campaign.pk))
    assert refused.status_code == 409
    body = refused.json()
    assert "imported ratings belong to it" in body["detail"] and "rename it" in body["detail"]
    assert len(body["dependents"]) == 1 and "imported ratings" in body["dependents"][0]
    assert Campaign.objects.filter(pk=campaign.pk).exists() and campaign.ratings.exists()

    deleted = organizer_api.delete(CAMPAIGN.format(plain_campaign.pk))
    assert deleted.status_code == 204
    assert not Campaign.objects.filter(pk=plain_campaign.pk).exists()
    assert organizer_api.get(CAMPAIGN.format(plain_campaign.pk)).status_code == 404


def test_a_crowd_job_keeps_a_campaign_through_the_api(organizer_api, plain_campaign):
    crowd = create_crowd_job(plain_campaign, redundancy=1)
    refused = organizer_api.delete(CAMPAIGN.format(plain_campaign.pk))
    assert refused.status_code == 409 and f"its crowd job “{crowd.job.name}”" in refused.json()["detail"]
    assert Campaign.objects.filter(pk=plain_campaign.pk).exists()


# --- adaptive settings ----------------------------------------------------------------------------


def test_the_adaptive_settings_and_the_round_unit_are_set_through_the_api(organizer_api, plain_campaign):
    shown = organizer_api.get(ADAPTIVE.format(plain_campaign.pk)).json()
    assert shown == {"adaptive": False, "confidence": 0.95, "top_k": None, "budget": None, "round_size": 100, "unit": "instance"}

    body = {"adaptive": True, "confidence": 0.9, "top_k": 2, "budget": 500, "round_size": 40, "unit": "rating"}
    written = organizer_api.patch(ADAPTIVE.format(plain_campaign.pk), body, format="json")
    assert written.status_code == 200, written.content
    assert written.json() == body
    assert _settings(plain_campaign)[1:] == (True, 0.9, 2, 500, 40, "rating")

    # A field left out keeps its value: only the unit goes back to whole instances.
    back = organizer_api.patch(ADAPTIVE.format(plain_campaign.pk), {"unit": "instance"}, format="json")
    assert back.status_code == 200 and _settings(plain_campaign)[1:] == (True, 0.9, 2, 500, 40, "instance")
    detail = organizer_api.get(CAMPAIGN.format(plain_campaign.pk)).json()
    assert detail["adaptive"]["unit"] == "instance"


@pytest.mark.parametrize(("body", "field"), [
    ({"unit": "raters"}, "unit"),
    ({"round_size": 1}, "round_size"),
    ({"confidence": 1.5}, "confidence"),
    ({"units": "rating"}, "units"),
    ({"adaptive": True, "top_k": 99}, "detail"),  # more than the ranked entries: the service says so
])
def test_bad_adaptive_settings_are_a_400_with_the_reason_and_change_nothing(organizer_api, plain_campaign, body, field):
    before = _settings(plain_campaign)
    refused = organizer_api.patch(ADAPTIVE.format(plain_campaign.pk), body, format="json")
    assert refused.status_code == 400 and field in refused.json(), refused.content
    assert _settings(plain_campaign) == before


def test_adaptive_settings_are_fixed_once_the_crowd_job_exists(organizer_api, plain_campaign):
    organizer_api.patch(ADAPTIVE.format(plain_campaign.pk), {"adaptive": True, "round_size": 40}, format="json")
    create_crowd_job(plain_campaign, redundancy=1)
    refused = organizer_api.patch(ADAPTIVE.format(plain_campaign.pk), {"unit": "rating"}, format="json")
    assert refused.status_code == 400 and "adaptive settings are fixed when the job is created" in refused.json()["detail"]
    assert _settings(plain_campaign)[-1] == "instance"


# --- who may ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("method", "path", "body"), [
    ("patch", CAMPAIGN, {"name": "taken over"}),
    ("delete", CAMPAIGN, None),
    ("get", ADAPTIVE, None),
    ("patch", ADAPTIVE, {"unit": "rating"}),
])
def test_only_organizers_rename_delete_or_change_adaptive_settings(make_annotator, plain_campaign, method, path, body):
    before = _settings(plain_campaign)
    annotator = make_annotator("ann")[0]
    for client, expected in ((client_for(), 401), (client_for(annotator), 403)):
        answer = getattr(client, method)(path.format(plain_campaign.pk), body, format="json")
        assert answer.status_code == expected
    assert _settings(plain_campaign) == before


# --- finalists: where each score came from ----------------------------------------------------------


def _extra_metric(tmp_path):
    """A score.csv with a metric Quorum does not compute (lm_fluency) for every entry of the fixtures."""
    rows = list(csv.DictReader(io.StringIO((DSTC9 / "score.csv").read_text())))
    out = tmp_path / "fluency.csv"
    out.write_text("team_id,entry_id,lm_fluency\n" + "".join(f"{r['team_id']},{r['entry_id']},{0.5 + i / 100}\n" for i, r in enumerate(rows)))
    return out


@pytest.fixture
def scored(test_set, tmp_path):
    """Entries with uploaded scores, the metrics Quorum computes computed, and a metric only uploaded."""
    import_entries(test_set, DSTC9 / "entries", scores_path=DSTC9 / "score.csv")
    score_entries(test_set)
    import_objective_scores(test_set, _extra_metric(tmp_path))
    return test_set


def test_the_finalists_say_which_scores_were_computed_and_which_uploaded(organizer_api, scored):
    # detection_prec only Quorum computed; detection_f1 the score file published and Quorum computed
    # too (its published value is what Eq. 2 reads); lm_fluency only the file gives.
    metrics = ["detection_prec", "detection_f1", "lm_fluency"]
    answer = organizer_api.post(f"/api/evaluation/test-sets/{scored.pk}/finalists/", {"metrics": metrics, "top": 3}, format="json")
    assert answer.status_code == 200, answer.content
    finalists = answer.json()["finalists"]
    assert finalists
    for row in finalists:
        entry = Entry.objects.get(test_set=scored, team__team_id=row["team_id"], entry_id=row["entry_id"])
        assert [s["metric"] for s in row["scores"]] == metrics
        precision, f1, fluency = row["scores"]
        assert (precision["source"], precision["value"]) == ("computed", pytest.approx(entry.computed_scores["detection_prec"]))
        assert (f1["source"], f1["value"]) == ("uploaded", pytest.approx(entry.objective_scores["detection_f1"]))
        assert (fluency["source"], fluency["value"]) == ("uploaded", pytest.approx(entry.objective_scores["lm_fluency"]))
    # The recomputation differs from the published value for some finalist, and the published one is read.
    assert any(Entry.objects.get(test_set=scored, team__team_id=r["team_id"], entry_id=r["entry_id"]).computed_scores["detection_f1"] != r["scores"][1]["value"]
               for r in finalists)


def test_a_computed_score_replaced_by_a_later_upload_shows_as_uploaded(organizer_api, scored, tmp_path):
    url = f"/api/evaluation/test-sets/{scored.pk}/finalists/"
    body = {"metrics": ["lm_fluency", "detection_prec"], "top": 1000}
    first = organizer_api.post(url, body, format="json").json()["finalists"][0]
    # A higher detection_prec only lifts this entry's mean reciprocal rank: it stays its team's finalist.
    changed = tmp_path / "changed.csv"
    changed.write_text(f"team_id,entry_id,detection_prec\n{first['team_id']},{first['entry_id']},1.0\n")
    import_objective_scores(scored, changed)
    rows = {(r["team_id"], r["entry_id"]): r for r in organizer_api.post(url, body, format="json").json()["finalists"]}
    assert rows[(first["team_id"], first["entry_id"])]["scores"][1] == {"metric": "detection_prec", "value": 1.0, "source": "uploaded"}
    others = [r for key, r in rows.items() if key != (first["team_id"], first["entry_id"])]
    assert others and all(r["scores"][1]["source"] == "computed" for r in others)


def test_the_finalists_page_shows_where_each_score_came_from(client, organizer, scored):
    client.force_login(organizer)
    page = client.post("/evaluation/", {"test_set": scored.pk, "metrics": "detection_prec, lm_fluency", "top": "3"}).content.decode()
    assert '<th>detection_prec</th><th>lm_fluency</th>' in page
    table = page[page.index('id="finalist-table"'):page.index("</table>", page.index('id="finalist-table"'))]
    assert "(computed by Quorum)" in table and "(from the uploaded score file)" in table
    assert "))" not in table, "a source in brackets inside the value's brackets"


def test_select_finalists_says_which_values_it_read(scored):
    """The command names, per metric, how many entries' values came from the uploaded score file and
    how many only Quorum computed, as the page and the API do per value."""
    from django.core.management import call_command

    out, err = io.StringIO(), io.StringIO()
    call_command("select_finalists", "--challenge", scored.challenge.name, "--test-set", scored.name,
                 "--metrics", "detection_prec,detection_f1", "--top", "3", stdout=out, stderr=err)
    competing = Entry.objects.filter(test_set=scored, is_baseline=False, is_ground_truth=False)
    uploaded = sum("detection_f1" in e.objective_scores for e in competing)
    computed = sum("detection_prec" in e.computed_scores for e in competing)
    assert uploaded and computed
    assert (f"note: Eq. 2 read, per metric, entries' values detection_prec: {computed} computed by Quorum; "
            f"detection_f1: {uploaded} from the uploaded score file") in err.getvalue()
    assert all("\t" in line for line in out.getvalue().splitlines())  # stdout stays the table
