"""Registering dialog systems (the contract check runs in the background and is shown; the secret
never is) and
importing user goals with their entity database, by page and API; grounded success (pure)."""
import datetime
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from evaluation.errors import EvaluationInputError
from evaluation.interactive import goals
from evaluation.interactive.services.systems import import_goals, register_system
from evaluation.interactive.systems.check import run_check
from evaluation.interactive.systems.reference import RESTAURANTS, ReferenceSystem
from evaluation.models import DialogSystem, GoalSet, UserGoal

from .systems import Broken, running

SECRET = "a-secret-of-twenty-chars"
GOAL = {"restaurant": {"info": {"food": "chinese", "area": "centre"}, "reqt": ["phone"]}, "message": ["You want a <span class='emphasis'>chinese</span> restaurant."]}


def _organizer_client(organizer):
    client = Client()
    client.force_login(organizer)
    return client


def test_registering_a_system_runs_the_check_and_the_page_shows_it_with_the_secret_masked(db, organizer, django_capture_on_commit_callbacks):
    with running(ReferenceSystem(SECRET)) as url:
        client = _organizer_client(organizer)
        with django_capture_on_commit_callbacks(execute=True):
            answer = client.post("/evaluation/systems/register/", {"name": "ref", "url": url, "secret": SECRET, "challenge": "DSTC9 Track 2"})
        assert answer.status_code == 302
    system = DialogSystem.objects.get(name="ref")
    assert system.check_passed and {r["rule"] for r in system.check_results} >= {"health", "retried turn", "end"}
    assert system.public_id and "ref" not in system.public_id
    page = client.get("/evaluation/systems/").content.decode()
    assert "PASS retried turn" in page and SECRET not in page and SECRET[-4:] in page


def test_a_system_that_fails_the_check_is_registered_with_the_reasons(db, django_capture_on_commit_callbacks):
    with running(Broken("error", secret=SECRET)) as url, django_capture_on_commit_callbacks(execute=True):
        system = register_system(name="broken", url=url, secret=SECRET)
    system.refresh_from_db()
    assert not system.check_passed
    assert any(r["rule"] == "turns" and "HTTP 500" in r["reason"] for r in system.check_results)


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"name": "x", "url": "ftp://x", "secret": SECRET}, r"not an http\(s\) URL"),
        ({"name": "x", "url": "http://127.0.0.1:9", "secret": "short"}, "at least 16"),
        ({"name": " ", "url": "http://127.0.0.1:9", "secret": SECRET}, "needs a name"),
    ],
)
def test_bad_registrations_are_refused_and_nothing_is_stored(db, organizer, fields, message):
    with pytest.raises(EvaluationInputError, match=message):
        register_system(**fields)
    answer = _organizer_client(organizer).post("/evaluation/systems/register/", fields)
    assert answer.status_code == 400 and not DialogSystem.objects.exists()


def test_the_api_registers_lists_and_never_returns_the_secret(db, organizer, make_annotator, django_capture_on_commit_callbacks):
    api = APIClient()
    api.force_authenticate(organizer)
    with running(ReferenceSystem(SECRET)) as url:
        with django_capture_on_commit_callbacks() as queued:
            created = api.post("/api/evaluation/systems/", {"name": "ref", "url": url, "secret": SECRET}, format="json")
        assert created.status_code == 201, created.content
        body = created.json()  # answered before the check ran: it is queued, the system is being checked
        assert body["checked_at"] is None and body["check_results"] == [] and len(queued) == 1
        queued[0]()
    listed = api.get("/api/evaluation/systems/").json()
    body, = listed["results"] if isinstance(listed, dict) else listed
    assert body["check_passed"] is True and "secret" not in body and body["masked_secret"].endswith(SECRET[-4:])
    assert SECRET not in api.get("/api/evaluation/systems/").content.decode()
    assert api.post("/api/evaluation/systems/", {"name": "ref", "url": "http://127.0.0.1:9", "secret": SECRET}, format="json").status_code == 400
    annotator = APIClient()
    annotator.force_authenticate(make_annotator("w")[0])
    assert annotator.get("/api/evaluation/systems/").status_code == 403


def test_goals_from_multiwoz_data_json_with_a_database(db, organizer):
    data = {"PMUL1.json": {"goal": GOAL, "log": []}, "PMUL2.json": {"goal": {"hotel": {"info": {"area": "north"}}}, "log": []}}
    answer = _organizer_client(organizer).post("/evaluation/goals/", {
        "name": "mwoz", "goals": SimpleUploadedFile("data.json", json.dumps(data).encode()),
        "database_domain": "restaurant", "database": SimpleUploadedFile("restaurant_db.json", json.dumps(RESTAURANTS).encode()),
    })
    assert answer.status_code == 302
    goal_set = GoalSet.objects.get(name="mwoz")
    assert sorted(goal_set.goals.values_list("key", flat=True)) == ["PMUL1.json", "PMUL2.json"]
    assert len(goal_set.database["restaurant"]) == len(RESTAURANTS)


def test_goals_from_jsonl_and_bad_files_are_refused_whole(db, organizer):
    good = b'{"id": "g1", "goal": {"restaurant": {"info": {"food": "thai"}}}}\n'
    assert import_goals(name="jsonl", goals_file=good).goals.count() == 1
    with pytest.raises(EvaluationInputError, match="line 2"):
        import_goals(name="bad", goals_file=good + b'{"id": "g2"}\n')
    answer = _organizer_client(organizer).post("/evaluation/goals/", {"name": "bad2", "goals": SimpleUploadedFile("g.jsonl", b"nope\n")})
    assert answer.status_code == 400 and "line 1" in answer.content.decode()
    assert not GoalSet.objects.filter(name__startswith="bad").exists() and UserGoal.objects.count() == 1


DB = {"restaurant": RESTAURANTS}


def test_grounded_success_needs_an_offered_record_that_satisfies_the_goal():
    offer = {"domain": "restaurant", "name": "Golden Wok", "food": "chinese", "area": "centre"}
    assert goals.grounded_success(GOAL, [offer], DB)
    assert goals.grounded_success(GOAL, [{**offer, "people": "2", "reference": "QR1"}], DB)  # booking keys are not entity slots
    assert not goals.grounded_success(GOAL, [], DB)  # nothing offered
    assert not goals.grounded_success(GOAL, [{**offer, "name": "Nowhere"}], DB)  # not in the database
    wrong_area = {"domain": "restaurant", "name": "Lotus Corner", "food": "thai", "area": "north"}
    assert not goals.grounded_success(GOAL, [wrong_area], DB)  # a record, but not what the goal asks
    assert goals.grounded_success(GOAL, [wrong_area, offer], DB)  # the last offer counts
    assert not goals.grounded_success(GOAL, [{**offer, "area": "north"}], DB)  # offered values contradict the record
    assert goals.goal_text(GOAL) == ["You want a chinese restaurant."]


def test_the_systems_table_heads_the_state_as_state_and_writes_dates_as_the_other_pages_do(db, organizer):
    system = register_system(name="ref", url="http://127.0.0.1:9", secret=SECRET)
    checked = timezone.make_aware(datetime.datetime(2026, 11, 27, 20, 45))
    system.checked_at, system.paused_at, system.paused_reason = checked, checked, "3 consecutive failed turns (the limit is 3)"
    system.save()
    page = _organizer_client(organizer).get("/evaluation/systems/").content.decode()
    assert "<th>State</th>" in page and "<th>Chats</th>" not in page
    assert "ago (2026-11-27 20:45)</span>" in page and "paused</strong> since 2026-11-27 20:45:" in page
    assert "p.m." not in page


def test_a_system_whose_check_failed_is_not_shown_running(db, organizer):
    """Organizer walk, defect 12: every rule FAIL, yet State read "running" in green."""
    failed = register_system(name="down", url="http://127.0.0.1:9", secret=SECRET)
    DialogSystem.objects.filter(pk=failed.pk).update(checked_at=timezone.now(), check_passed=False)
    waiting = register_system(name="new", url="http://127.0.0.1:9", secret=SECRET)
    DialogSystem.objects.filter(pk=waiting.pk).update(checked_at=None, check_passed=False)
    good = register_system(name="good", url="http://127.0.0.1:9", secret=SECRET)
    DialogSystem.objects.filter(pk=good.pk).update(checked_at=timezone.now(), check_passed=True)
    page = _organizer_client(organizer).get("/evaluation/systems/").content.decode()

    def state(system):
        return page.split(f'id="system-{system.pk}"', 1)[1].split("</tr>", 1)[0]

    assert "running" not in state(failed) and "not usable: its contract check failed" in state(failed)
    assert "running" not in state(waiting) and "waiting for its contract check" in state(waiting)
    assert '<span class="ok">running</span>' in state(good)


def test_the_contract_check_is_followed_on_the_page_without_a_reload(db, organizer):
    """Organizer walk, defect 14: the row said "reload to follow". Now the row carries the
    progress URL that static/progress.js follows (as imports and exports do), and the URL answers
    the row as it stands, without the URL once the check has ended."""
    system = register_system(name="new", url="http://127.0.0.1:9", secret=SECRET)
    DialogSystem.objects.filter(pk=system.pk).update(checked_at=None, check_results=[{"rule": "health", "passed": True, "reason": "ok"}])
    client = _organizer_client(organizer)
    page = client.get("/evaluation/systems/").content.decode()
    url = f"/evaluation/systems/{system.pk}/check/progress/"
    assert f'<tr id="system-{system.pk}" data-progress-url="{url}">' in page and "reload" not in page
    run = client.get(url).json()
    assert run["finished"] is False and run["html"].lstrip().startswith(f'<tr id="system-{system.pk}" data-progress-url=')
    assert "1 rule done so far" in run["html"]
    DialogSystem.objects.filter(pk=system.pk).update(checked_at=timezone.now(), check_passed=True)
    run = client.get(url).json()
    assert run["finished"] is True and "data-progress-url" not in run["html"] and "passed" in run["html"]
    assert Client().get(url).status_code in (302, 403)  # organizers only


def test_a_zipped_goals_file_is_read_and_a_wrong_file_says_what_goals_must_be(db):
    """Organizer walk, defect 11: MultiWOZ's .zip was refused as 'not UTF-8 text (byte 10)'."""
    import io
    import zipfile

    def zipped(files):
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
            for name, body in files.items():
                archive.writestr(name, body)
        return out.getvalue()

    data_json = json.dumps({"PMUL1.json": {"goal": GOAL, "log": []}}).encode()
    goal_set = import_goals(name="zipped", goals_file=zipped({"data.json": data_json, "__MACOSX/._data.json": b"\x00\x01"}))
    assert [g.key for g in goal_set.goals.all()] == ["PMUL1.json"]
    with pytest.raises(EvaluationInputError, match=r"exactly one \.json or \.jsonl goals file; it holds a\.json, b\.json"):
        import_goals(name="two", goals_file=zipped({"a.json": data_json, "b.json": data_json}))
    with pytest.raises(EvaluationInputError, match=r"not UTF-8 text \(byte 0\); it must be a MultiWOZ data\.json, a JSONL .* or a \.zip"):
        import_goals(name="binary", goals_file=b"\xff\xfe\x00garbage")
    assert GoalSet.objects.count() == 1


def test_the_systems_page_nits_of_the_organizer_walk(db, organizer, django_capture_on_commit_callbacks):
    """Delete asks for a ticked box (refused without it, nothing deleted); the URL help uses a public
    example and says private addresses are refused by default; a JSONL given as the database reads
    'it is not JSON' once; Resume says it checks the system first; a refused signature is named."""
    system = register_system(name="team-7", url="http://127.0.0.1:9", secret=SECRET)
    client = _organizer_client(organizer)
    page = client.get("/evaluation/systems/").content.decode()
    assert "10.0.0.5" not in page and "QUORUM_SYSTEM_ALLOWED_HOSTS" in page and ">URL<" in page
    assert f'id="system-{system.pk}-delete-confirm" required' in page
    answer = client.post(f"/evaluation/systems/{system.pk}/delete/", follow=True)
    assert "Not deleted: tick" in answer.content.decode() and DialogSystem.objects.filter(pk=system.pk).exists()
    answer = client.post(f"/evaluation/systems/{system.pk}/delete/", {"confirm": "yes"}, follow=True)
    assert "Deleted “team-7”" in answer.content.decode() and not DialogSystem.objects.filter(pk=system.pk).exists()

    with pytest.raises(EvaluationInputError) as refused:
        import_goals(name="g", goals_file=json.dumps({"id": "g1", "goal": GOAL}).encode(), databases={"restaurant": b'{"a": 1}\n{"b": 2}\n'})
    assert str(refused.value).startswith("database restaurant: it is not JSON (Extra data") and "not JSON (it is" not in str(refused.value)
    assert "not JSONL" in str(refused.value)

    paused = register_system(name="team-b", url="http://127.0.0.1:9", secret=SECRET)
    DialogSystem.objects.filter(pk=paused.pk).update(paused_at=timezone.now(), paused_reason="5 consecutive failed turns")
    assert "Resume runs the contract check first: it is resumed only if the check passes" in client.get("/evaluation/systems/").content.decode()
    with django_capture_on_commit_callbacks(execute=True):  # the check, queued at the commit
        answer = client.post(f"/evaluation/systems/{paused.pk}/resume/", follow=True).content.decode()
    assert "“team-b” is being checked; it is resumed if its contract check passes, else it stays paused" in answer
    page = client.get("/evaluation/systems/").content.decode()
    assert "paused</strong>" in page and "not resumed, its contract check failed (health:" in page  # nothing answers on port 9

    with running(ReferenceSystem(SECRET)) as url:
        results = run_check(url, "another-secret-of-20-chars")
    health = next(r for r in results if r.rule == "health")
    assert not health.passed and "HTTP 401" in health.reason and "the secret is probably not the one it expects" in health.reason
