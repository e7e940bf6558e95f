"""Quality control through the REST API: voting, reviews, overrides, worker quality, unblocking.

The permission matrix is a table, as in test_api.py: every endpoint, every role, the status each must get.
"""
import pytest

from annotation.models import CheckOverride, Job, QualityPolicy, Response, ReviewRound, WorkerStanding
from annotation.services.claims import claim_next_slot, submit_response
from annotation.services.quality import apply_flags, set_quality
from annotation.services.voting import vote_job_of
from tests.factories import MISSING_ID, good_answers, make_corpus, make_live_job
from tests.quality.helpers import vote, write

from .test_api import client_for
from .test_quality_pages import soft_blocked

pytestmark = pytest.mark.django_db

VOTING = {"votes_per_response": 3, "against_threshold": 2, "max_rounds": 2, "on_voted_down": "reject"}


@pytest.fixture
def world(make_annotator):
    job = make_live_job(make_corpus(dialogs=2, user_turns=1), name="rewrites")
    author = make_annotator("author")[1]
    response = write(job, author)
    return {"job": job, "response": response, "worker": author}


# --- permission matrix ------------------------------------------------------------------------------

# (method, path template, body, status for an organizer). Anonymous callers get 401, annotators 403.
ENDPOINTS = [
    ("get", "/api/jobs/{job}/voting/", None, 200),
    ("post", "/api/jobs/{job}/voting/", VOTING, 200),
    ("get", "/api/jobs/{job}/reviews/", None, 200),
    ("get", "/api/jobs/{job}/quality/", None, 200),
    ("post", "/api/jobs/{job}/quality/", {"gold_start_rate": 0.3}, 200),
    ("post", "/api/responses/{response}/override/", {"status": "rejected", "check": "flags", "reason": "pasted"}, 200),
    ("get", "/api/workers/{worker}/quality/", None, 200),
    ("post", "/api/workers/{worker}/unblock/", "unblock", 200),
]


def _state():
    return (
        list(QualityPolicy.objects.values_list("job_id", "voting_enabled", "gold_start_rate")),
        list(Response.objects.order_by("pk").values_list("pk", "status")),
        list(WorkerStanding.objects.values_list("pk", "state")),
        CheckOverride.objects.count(),
        Job.objects.count(),
    )


@pytest.mark.parametrize("method,template,body,organizer_status", ENDPOINTS, ids=[f"{m} {t}" for m, t, _, _ in ENDPOINTS])
@pytest.mark.parametrize("role", ["anonymous", "annotator", "organizer"])
def test_permission_matrix(role, method, template, body, organizer_status, world, organizer, make_annotator):
    if body == "unblock":
        soft_blocked(world["job"], world["worker"])
        body = {"job": world["job"].pk}
    user = {"anonymous": None, "annotator": make_annotator("ann")[0], "organizer": organizer}[role]
    path = template.format(**{key: obj.pk for key, obj in world.items()})
    before = _state()
    client = client_for(user)
    response = client.get(path) if method == "get" else client.post(path, body, format="json")
    expected = {"anonymous": 401, "annotator": 403, "organizer": organizer_status}[role]
    assert response.status_code == expected, getattr(response, "data", response)
    if role != "organizer":
        assert "detail" in response.data
        assert _state() == before
    if role == "annotator":
        assert "organizer" in str(response.data["detail"])
    if role == "organizer" and method == "post":
        assert _state() != before


def test_missing_objects_are_404(organizer):
    client = client_for(organizer)
    for path in [f"/api/jobs/{MISSING_ID}/voting/", f"/api/jobs/{MISSING_ID}/reviews/", f"/api/jobs/{MISSING_ID}/quality/", f"/api/workers/{MISSING_ID}/quality/"]:
        assert client.get(path).status_code == 404, path
    assert client.post(f"/api/jobs/{MISSING_ID}/voting/", VOTING, format="json").status_code == 404
    assert client.post(f"/api/responses/{MISSING_ID}/override/", {"status": "accepted", "reason": "x"}, format="json").status_code == 404
    assert client.post(f"/api/workers/{MISSING_ID}/unblock/", {"job": 1}, format="json").status_code == 404


def test_object_permission_is_checked(world, organizer, monkeypatch):
    from quorum.api.permissions import IsOrganizer

    monkeypatch.setattr(IsOrganizer, "has_object_permission", lambda self, request, view, obj: False)
    client = client_for(organizer)
    assert client.get(f"/api/jobs/{world['job'].pk}/voting/").status_code == 403
    assert client.get(f"/api/workers/{world['worker'].pk}/quality/").status_code == 403
    refused = client.post(f"/api/responses/{world['response'].pk}/override/", {"status": "rejected", "reason": "x"}, format="json")
    assert refused.status_code == 403 and not CheckOverride.objects.exists()


# --- voting -----------------------------------------------------------------------------------------


def test_the_api_sets_what_a_vote_pays_until_the_first_vote(world, organizer, make_annotator):
    client = client_for(organizer)
    job = world["job"]
    url = f"/api/jobs/{job.pk}/voting/"
    assert client.post(url, {**VOTING, "vote_reward": "0.15"}, format="json").status_code == 200
    vote_job = vote_job_of(job)
    assert str(vote_job.reward) == "0.15"
    assert client.post(url, {**VOTING, "vote_reward": "-1"}, format="json").status_code == 400
    voter = make_annotator("voter")[1]
    slot = claim_next_slot(job=vote_job, worker=voter)
    submit_response(slot_id=slot.pk, worker=voter, answers={"vote": "for", "reason": ""})
    refused = client.post(url, {**VOTING, "vote_reward": "0.50"}, format="json")
    assert refused.status_code == 400 and "pay stays $0.15 per vote" in str(refused.data["vote_reward"])
    vote_job.refresh_from_db()
    assert str(vote_job.reward) == "0.15"


def test_enable_voting_then_read_the_summary_as_votes_come_in(world, organizer, make_annotator):
    client = client_for(organizer)
    job = world["job"]
    before = client.get(f"/api/jobs/{job.pk}/voting/").data
    assert before["voting_enabled"] is False and before["settings"] is None and before["vote_job"] is None

    on = client.post(f"/api/jobs/{job.pk}/voting/", VOTING, format="json")
    assert on.status_code == 200
    assert on.data["voting_enabled"] is True and on.data["settings"] == {
        **VOTING, "decision_rule": "published", "model_sure": 0.85, "model_max_votes": 5,  # the published rule unless asked
    }
    vote_job = vote_job_of(job)
    assert on.data["vote_job"] == vote_job.pk and on.data["responses_reviewed"] == 1 and on.data["voting"] == 1
    assert on.data["vote_alpha"] is None and on.data["vote_alpha_note"].startswith("n/a")

    for name, verdict in (("v1", "against"), ("v2", "against"), ("v3", "for")):
        vote(vote_job, make_annotator(name)[1], verdict, reason=f"{name} says {verdict}")
    summary = client.get(f"/api/jobs/{job.pk}/voting/").data
    assert (summary["voted_down"], summary["recollected"], summary["flagged"], summary["votes"]) == (1, 1, 0, 3)
    # One response voted on: its agreement has no interval, and the API says why in words.
    assert summary["vote_alpha_ci_low"] is None and summary["vote_alpha_ci_withheld"] == "no interval: too few responses, 1 of the 50 needed"
    assert summary["recollection_rate"] == 1.0
    world["response"].refresh_from_db()
    assert world["response"].status == Response.Status.REJECTED  # on_voted_down: reject

    off = client.post(f"/api/jobs/{job.pk}/voting/", {**VOTING, "enabled": False}, format="json")
    assert off.status_code == 200 and off.data["voting_enabled"] is False


@pytest.mark.parametrize(
    "changes, field",
    [
        ({"against_threshold": 4}, "against_threshold"),
        ({"votes_per_response": 0}, "votes_per_response"),
        ({"max_rounds": "three"}, "max_rounds"),
        ({"on_voted_down": "burn"}, "on_voted_down"),
    ],
)
def test_bad_voting_settings_are_400_naming_the_field(changes, field, world, organizer):
    response = client_for(organizer).post(f"/api/jobs/{world['job'].pk}/voting/", {**VOTING, **changes}, format="json")
    assert response.status_code == 400
    assert field in response.data and response.data[field]
    assert not QualityPolicy.objects.exists() and vote_job_of(world["job"]) is None


def test_voting_refused_by_the_service_is_400_with_the_reason(organizer):
    from annotation.services.jobs import create_job, launch_job

    job = launch_job(create_job(corpus=make_corpus(dialogs=1, user_turns=1), name="scores", task_type="hard_score"))
    response = client_for(organizer).post(f"/api/jobs/{job.pk}/voting/", VOTING, format="json")
    assert response.status_code == 400
    assert "cannot be voted on" in response.data["non_field_errors"][0]
    assert vote_job_of(job) is None


# --- reviews ----------------------------------------------------------------------------------------


def test_reviews_list_items_with_rounds_and_responses_with_flags(make_annotator, organizer):
    job = make_live_job(make_corpus(dialogs=2, user_turns=1), name="rewrites")
    client = client_for(organizer)
    client.post(f"/api/jobs/{job.pk}/voting/", {**VOTING, "max_rounds": 1}, format="json")
    paster = make_annotator("paster")[1]
    slot = claim_next_slot(job=job, worker=paster)
    down = submit_response(slot_id=slot.id, worker=paster, answers=good_answers(slot.item),
                           telemetry={"paraphrase": {"pasted_chars": 90, "typed_chars": 1}})
    vote_job = vote_job_of(job)
    for name in ("v1", "v2", "v3"):
        vote(vote_job, make_annotator(name)[1], "against", reason="copied")

    apply_flags(job)  # the sweep stores the flags; the API only reads them
    flagged = client.get(f"/api/jobs/{job.pk}/reviews/").data
    assert [row["response_id"] for row in flagged["responses"]] == [down.pk]
    row = flagged["responses"][0]
    assert row["response_flags"] == ["pasted"] and "pasted" in row["worker_flags"]
    assert row["vote_state"] == ReviewRound.State.EXHAUSTED and row["worker_id"] == paster.pk
    (item,) = flagged["items"]
    assert item["final_state"] == "flagged"
    assert item["rounds"][0]["votes_against"] == 3 and item["rounds"][0]["reasons"] == ["against: copied"] * 3

    write(job, make_annotator("clean")[1])
    assert len(client.get(f"/api/jobs/{job.pk}/reviews/").data["responses"]) == 1
    assert len(client.get(f"/api/jobs/{job.pk}/reviews/?all=true").data["responses"]) == 2


# --- overrides --------------------------------------------------------------------------------------


def test_override_records_the_reason_and_changes_the_status(world, organizer):
    response = client_for(organizer).post(
        f"/api/responses/{world['response'].pk}/override/",
        {"status": "excluded", "check": "flags", "reason": "Pasted from a search engine."}, format="json",
    )
    assert response.status_code == 200
    assert response.data["new_status"] == "excluded" and response.data["previous_status"] == "accepted"
    assert response.data["reason"] == "Pasted from a search engine." and response.data["by"] == "olga"
    world["response"].refresh_from_db()
    assert world["response"].status == Response.Status.EXCLUDED


@pytest.mark.parametrize(
    "body, field",
    [
        ({"status": "rejected", "check": "flags"}, "reason"),
        ({"status": "rejected", "check": "flags", "reason": "   "}, "reason"),
        ({"status": "deleted", "check": "flags", "reason": "x"}, "status"),
        ({"status": "rejected", "check": "mood", "reason": "x"}, "check"),
        ({"status": "accepted", "check": "vote", "reason": "x", "recollect": True}, "non_field_errors"),
    ],
)
def test_bad_overrides_are_400_naming_the_field_and_change_nothing(body, field, world, organizer):
    response = client_for(organizer).post(f"/api/responses/{world['response'].pk}/override/", body, format="json")
    assert response.status_code == 400
    assert field in response.data, response.data
    world["response"].refresh_from_db()
    assert world["response"].status == Response.Status.ACCEPTED and not CheckOverride.objects.exists()


# --- quality settings -------------------------------------------------------------------------------


def test_quality_settings_read_and_change(world, organizer):
    client = client_for(organizer)
    defaults = client.get(f"/api/jobs/{world['job'].pk}/quality/").data
    assert defaults["gold_start_rate"] == 0.5 and defaults["flags_reject"] is False
    changed = client.post(f"/api/jobs/{world['job'].pk}/quality/", {"paste_share": 0.8, "onboarding_items": 2}, format="json")
    assert changed.status_code == 200 and changed.data["paste_share"] == 0.8 and changed.data["onboarding_items"] == 2
    assert changed.data["gold_start_rate"] == 0.5  # untouched


@pytest.mark.parametrize("body, field", [({"paste_share": 2}, "paste_share"), ({"session_gap_minutes": 0}, "session_gap_minutes")])
def test_bad_quality_settings_are_400(body, field, world, organizer):
    response = client_for(organizer).post(f"/api/jobs/{world['job'].pk}/quality/", body, format="json")
    assert response.status_code == 400 and field in response.data
    assert not QualityPolicy.objects.exists()


# --- workers ----------------------------------------------------------------------------------------


def test_worker_quality_then_unblock(world, organizer):
    job, worker = world["job"], world["worker"]
    soft_blocked(job, worker)
    client = client_for(organizer)
    body = client.get(f"/api/workers/{worker.pk}/quality/").data
    assert body["external_id"] == "author"
    (entry,) = body["jobs"]
    assert entry["job"] == job.pk and entry["standing"] == "soft_blocked"
    assert (entry["gold_answered"], entry["gold_failed"]) == (1, 1) and "onboarding" in entry["block_reason"]
    assert entry["responses"] == 2  # one real rewrite and the gold answer

    done = client.post(f"/api/workers/{worker.pk}/unblock/", {"job": job.pk}, format="json")
    assert done.status_code == 200 and done.data["state"] == "qualified"
    again = client.post(f"/api/workers/{worker.pk}/unblock/", {"job": job.pk}, format="json")
    assert again.status_code == 400 and "not soft-blocked" in again.data["job"][0]


def test_unblock_needs_an_existing_job(world, organizer):
    response = client_for(organizer).post(f"/api/workers/{world['worker'].pk}/unblock/", {}, format="json")
    assert response.status_code == 400 and "job" in response.data
    response = client_for(organizer).post(f"/api/workers/{world['worker'].pk}/unblock/", {"job": MISSING_ID}, format="json")
    assert response.status_code == 400 and "job" in response.data


def test_worker_flags_carry_their_evidence(make_annotator, organizer):
    job = make_live_job(make_corpus(dialogs=2, user_turns=1), name="rewrites")
    set_quality(job, paste_share=0.5)
    worker = make_annotator("paster")[1]
    for _ in range(2):
        slot = claim_next_slot(job=job, worker=worker)
        submit_response(slot_id=slot.id, worker=worker, answers=good_answers(slot.item),
                        telemetry={"paraphrase": {"pasted_chars": 40, "typed_chars": 0}})
    apply_flags(job)  # the sweep stores the flags; the API only reads them
    (entry,) = client_for(organizer).get(f"/api/workers/{worker.pk}/quality/").data["jobs"]
    assert entry["flags_computed_at"] is not None
    (flag,) = [f for f in entry["flags"] if f["code"] == "pasted"]
    assert flag["count"] == 2 and flag["value"] == 1.0 and "mostly pasted" in flag["message"]


def test_schema_lists_the_quality_endpoints(client):
    import json

    schema = json.loads(client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").content)
    for path in ["/api/jobs/{id}/voting/", "/api/jobs/{id}/reviews/", "/api/jobs/{id}/quality/",
                 "/api/responses/{id}/override/", "/api/workers/{id}/quality/", "/api/workers/{id}/unblock/"]:
        assert path in schema["paths"], path
