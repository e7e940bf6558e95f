"""The campaign detail in the evaluation API shows an adaptive campaign's settings, looks and pair
states, and the stored judge reports, as the OpenAPI schema documents them (checked against the
schema by schemathesis, in-process), to organizers only."""
import io

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import response_schema_conformance

from evaluation.campaigns.services.adaptive import run_look
from evaluation.judges.services import import_judge_scores
from evaluation.models import CampaignLook

from .test_adaptive_campaign import _adaptive_campaign, _complete_first_round
from .test_judges import judge_csv

DETAIL = "/api/evaluation/campaigns/{id}/"


def _detail(user, pk):
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client.get(DETAIL.format(id=pk))


def _conforms(organizer, pk):
    """The detail response, validated against the generated schema (the fuzz test's check). The
    WSGI app closes the connection after each request (and the test's transaction with it) unless
    told not to, as Django's test client does while it serves one."""
    token = Token.objects.get_or_create(user=organizer)[0]
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        schema = schemathesis.openapi.from_wsgi("/api/schema/", get_wsgi_application())
        case = schema[DETAIL]["GET"].Case(path_parameters={"id": pk})
        case.call_and_validate(headers={"Authorization": f"Token {token.key}"}, checks=[not_a_server_error, response_schema_conformance])
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


@pytest.mark.postgres
@pytest.mark.django_db
def test_detail_shows_settings_looks_pair_states_and_why_it_stopped(tmp_path, organizer, make_annotator):
    crowd = _adaptive_campaign(tmp_path, budget=300)
    campaign = crowd.campaign
    body = _detail(organizer, campaign.pk).json()["adaptive"]
    # Before any look: the settings and the fixed look grid, no looks, nothing stopped.
    assert body["confidence"] == 0.95 and body["budget"] == 300 and body["top_k"] is None and body["round_size"] == 40
    assert body["round_sizes"] == [40, 80, 120, 160, 200] and body["critical_value"] == pytest.approx(crowd.critical_value)
    assert body["looks"] == [] and body["pairs"] == [] and body["stopped"] is False and body["stop_reason"] is None
    assert body["spent"] == 160 and body["full_design"] == 800  # 4 entries x 40, against 4 x 200

    _complete_first_round(crowd.job)
    look = run_look(campaign.pk)
    body = _detail(organizer, campaign.pk).json()["adaptive"]
    [shown] = body["looks"]
    assert shown["number"] == 1 and shown["decision"] == look.decision and shown["ratings_spent"] == 160
    assert shown["added_ratings"] == look.added_ratings and shown["critical_value"] == pytest.approx(crowd.critical_value)
    assert shown["active"] == look.active and shown["decision_text"] == look.get_decision_display()
    by_pair = {(p["a"], p["b"]): p for p in body["pairs"]}
    assert len(by_pair) == 6  # every pair of the 4 entries
    for pair in look.pairs:
        got = by_pair[(pair["a"], pair["b"])]
        assert got["state"] == pair["state"] and got["better"] == pair["better"] and got["instances"] == 40
        assert got["low"] == pytest.approx(pair["low"]) and got["high"] == pytest.approx(pair["high"])
        assert got["low"] <= got["difference"] <= got["high"]
    # The clearly best entry is resolved ahead of the clearly worst after one round.
    assert by_pair[("best/e", "worst/e")]["state"] == "resolved" and by_pair[("best/e", "worst/e")]["better"] == "best/e"
    _conforms(organizer, campaign.pk)

    # Stopped: the reason is the last look's decision in words.
    CampaignLook.objects.filter(pk=look.pk).update(decision=CampaignLook.Decision.BUDGET)
    body = _detail(organizer, campaign.pk).json()["adaptive"]
    assert body["stopped"] is True and body["stop_reason"] == "Stopped: the next round would pass the ratings budget"


@pytest.mark.django_db
def test_detail_shows_the_stored_judge_report(campaign, organizer):
    body = _detail(organizer, campaign.pk).json()
    assert body["adaptive"] is None and body["judges"] == []
    run = import_judge_scores(campaign, io.StringIO(judge_csv(campaign)), "llm")
    [judge] = _detail(organizer, campaign.pk).json()["judges"]
    assert judge["name"] == "llm" and judge["stale"] is False
    report = judge["report"]
    assert report["agreement"]["items"]["pearson"]["r"] == pytest.approx(run.report["agreement"]["items"]["pearson"]["r"])
    assert report["agreement"]["items"]["pearson"]["r"] > 0.8  # the judge is the human mean plus small noise
    assert report["alt_test"] == run.report["alt_test"]
    systems = {row["system"]: row for row in report["systems"]}
    assert set(systems) == {row["system"] for row in run.report["systems"]} and len(systems) >= 2
    for row in run.report["systems"]:
        if "ppi" in row:
            assert systems[row["system"]]["ppi"]["low"] == pytest.approx(row["ppi"]["low"])
    assert len(report["pairs"]) == len(run.report["pairs"])
    _conforms(organizer, campaign.pk)


@pytest.mark.django_db
def test_only_organizers_see_it(campaign, make_annotator):
    assert _detail(None, campaign.pk).status_code == 401
    assert _detail(make_annotator("ann")[0], campaign.pk).status_code == 403
