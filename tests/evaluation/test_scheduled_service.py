"""RADDLE's evaluation service: the top-k entries by automatic score with an endpoint and no recent
human evaluation get an interactive campaign on schedule; results on the leaderboard with date and
intervals."""
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from evaluation.errors import EvaluationInputError
from evaluation.interactive.services.scheduled import link_entry_system, run_due_schedules, run_schedule, set_schedule
from evaluation.interactive.services.systems import import_goals
from evaluation.models import DialogSystem, Entry, EntryInteractiveRun, Team
from evaluation.tasks import run_scheduled_interactive_evaluations

GOALS = b'{"id": "g1", "goal": {"restaurant": {"info": {"food": "chinese"}}}}\n{"id": "g2", "goal": {"restaurant": {"info": {"food": "thai"}}}}\n'


@pytest.fixture
def board(test_set):
    """Five submissions (bleu: e4 > e3 > e2 > e1 > e0) and a baseline; every one but e3 has an endpoint."""
    team = Team.objects.create(challenge=test_set.challenge, team_id="team1")
    systems = {}
    for n in range(5):
        system = DialogSystem.objects.create(name=f"sys{n}", url=f"http://127.0.0.1:9/{n}", secret="x" * 20, public_id=f"p{n}")
        entry = Entry.objects.create(team=team, test_set=test_set, entry_id=f"e{n}", objective_scores={"bleu": n, "ter": 10 - n})
        if n != 3:
            entry.dialog_system = system
            entry.save()
        systems[n] = system
    Entry.objects.create(team=team, test_set=test_set, entry_id="base", objective_scores={"bleu": 99, "ter": 0}, is_baseline=True)
    goals = import_goals(name="goals", goals_file=GOALS)
    return test_set, goals, systems


def test_the_top_k_with_an_endpoint_and_no_recent_evaluation_get_a_campaign(board):
    test_set, goals, systems = board
    schedule = set_schedule(test_set=test_set, goal_set=goals, metrics=["bleu"], top_k=3, dialogs_per_goal=2, stale_after_days=60)
    result = run_schedule(schedule)
    # top 3 by bleu: e4, e3, e2; e3 has no endpoint; the baseline is not a submission.
    assert result["entries"] == ["team1/e4", "team1/e2"]
    job_endpoints = [item.payload["endpoint"] for item in EntryInteractiveRun.objects.first().job.items.all()]
    assert sorted(set(job_endpoints)) == ["p2", "p4"] and len(job_endpoints) == 2 * 2 * 2  # 2 goals x 2 systems x 2
    assert run_schedule(schedule)["job"] is None  # evaluated within 60 days: not due again
    later = timezone.now() + timedelta(days=61)
    assert run_schedule(schedule, now=later)["entries"] == ["team1/e4", "team1/e2"]


def test_lower_is_better_and_paused_systems(board):
    test_set, goals, systems = board
    schedule = set_schedule(test_set=test_set, goal_set=goals, metrics=["ter"], lower_is_better=["ter"], top_k=2)
    systems[4].paused_at, systems[4].paused_reason = timezone.now(), "5 consecutive failed turns"
    systems[4].save()
    assert run_schedule(schedule)["entries"] == []  # e4 is paused; e3 has no endpoint
    schedule.top_k = 3
    schedule.save()
    assert run_schedule(schedule)["entries"] == ["team1/e2"]


def test_bad_schedules_and_links_are_refused(board):
    test_set, goals, _systems = board
    with pytest.raises(EvaluationInputError, match="unknown metric.*'?rouge'?.*have: bleu, ter"):
        set_schedule(test_set=test_set, goal_set=goals, metrics=["rouge"])
    with pytest.raises(EvaluationInputError, match="top_k must be a whole number from 1 to 20"):
        set_schedule(test_set=test_set, goal_set=goals, metrics=["bleu"], top_k=0)
    with pytest.raises(EvaluationInputError, match="reference row"):
        link_entry_system(Entry.objects.get(entry_id="base"), DialogSystem.objects.first())


def test_the_beat_task_runs_every_enabled_schedule_and_the_leaderboard_shows_date_and_intervals(board, organizer):
    test_set, goals, _systems = board
    schedule = set_schedule(test_set=test_set, goal_set=goals, metrics=["bleu"], top_k=1)
    result, = run_scheduled_interactive_evaluations.apply().get()
    assert result["entries"] == ["team1/e4"]
    assert run_due_schedules() == [{"schedule": result["schedule"], "job": None, "entries": []}]
    client = Client()
    client.force_login(organizer)
    page = client.get(reverse("evaluation:scheduled-leaderboard", args=[test_set.pk])).content.decode()
    assert "the top 1 submissions by automatic score" in page
    schedule.refresh_from_db()
    assert f"last run {timezone.localtime(schedule.last_run_at):%Y-%m-%d %H:%M}." in page  # as every page writes a time
    assert timezone.now().strftime("%Y-%m-%d") in page and "under way: no dialog counts yet" in page
    rows = page.split('id="scheduled-leaderboard"')[1]
    assert rows.index("team1/e4") < rows.index("team1/e0")  # by automatic score


def test_interactive_service_command(board):
    test_set, goals, _systems = board
    out = StringIO()
    call_command("interactive_service", "link", str(test_set.pk), "team1/e3", "sys3", stdout=out)
    call_command("interactive_service", "schedule", str(test_set.pk), "--goals", "goals", "--metrics", "bleu", "--top-k", "2", stdout=out)
    call_command("interactive_service", "run", str(test_set.pk), stdout=out)
    assert "launched chat job" in out.getvalue() and "team1/e4, team1/e3" in out.getvalue()
    with pytest.raises(CommandError, match="no registered system named 'nope'"):
        call_command("interactive_service", "link", str(test_set.pk), "team1/e3", "nope")
    with pytest.raises(CommandError, match="no entry 'team9/x'"):
        call_command("interactive_service", "link", str(test_set.pk), "team9/x", "sys3")
    with pytest.raises(CommandError, match="no test set with id 999999"):
        call_command("interactive_service", "run", "999999")


def test_the_goals_api_lists_and_imports_goal_sets(db, organizer, make_annotator):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from rest_framework.test import APIClient

    api = APIClient()
    api.force_authenticate(organizer)
    answer = api.post("/api/evaluation/goals/", {
        "name": "g", "goals": SimpleUploadedFile("goals.jsonl", GOALS), "database_domain": "restaurant",
        "database": SimpleUploadedFile("restaurant_db.json", b'[{"name": "Golden Wok", "food": "chinese"}]'),
    }, format="multipart")
    assert answer.status_code == 201 and answer.json()["goals"] == 2 and answer.json()["database_domains"] == ["restaurant"]
    assert [g["name"] for g in api.get("/api/evaluation/goals/").json()] == ["g"]
    again = api.post("/api/evaluation/goals/", {"name": "g", "goals": SimpleUploadedFile("goals.jsonl", GOALS)}, format="multipart")
    assert again.status_code == 400 and "exists already" in again.json()["detail"]
    bad = api.post("/api/evaluation/goals/", {"name": "h", "goals": SimpleUploadedFile("goals.jsonl", b"{nope")}, format="multipart")
    assert bad.status_code == 400 and "detail" in bad.json()
    half = api.post("/api/evaluation/goals/", {"name": "h", "goals": SimpleUploadedFile("goals.jsonl", GOALS), "database_domain": "restaurant"}, format="multipart")
    assert half.status_code == 400
    annotator_api = APIClient()
    annotator_api.force_authenticate(make_annotator("w")[0])
    assert annotator_api.get("/api/evaluation/goals/").status_code == 403


def _organizer_client(organizer):
    client = Client()
    client.force_login(organizer)
    return client


def _schedule_post(goals, **changes):
    return {"goal_set": goals.pk, "metrics": ["bleu"], "lower_is_better": [], "top_k": 2, "dialogs_per_goal": 1,
            "stale_after_days": 60, "enabled": "on", **changes}


def test_the_page_links_endpoints_sets_the_schedule_and_runs_it(board, organizer):
    test_set, goals, systems = board
    client = _organizer_client(organizer)
    page = client.get(reverse("evaluation:scheduled-leaderboard", args=[test_set.pk])).content.decode()
    assert "No scheduled human evaluation" in page
    # The column is the live-chat evaluation: it said "Human evaluation: not yet" beside entries a
    # ratings campaign had evaluated.
    assert "<th>Live-chat evaluation <span" in page and "no chat evaluation yet" in page and ">not yet<" not in page
    assert "baselines and ground truth have no endpoint" in page  # help text of the entry field
    e3 = Entry.objects.get(entry_id="e3")
    answer = client.post(reverse("evaluation:scheduled-endpoint", args=[test_set.pk]), {"entry": e3.pk, "system": systems[3].pk})
    assert answer.status_code == 302
    assert Entry.objects.get(pk=e3.pk).dialog_system == systems[3]
    answer = client.post(reverse("evaluation:scheduled-schedule", args=[test_set.pk]), _schedule_post(goals))
    assert answer.status_code == 302
    schedule = test_set.interactive_schedule.__class__.objects.get(test_set=test_set)
    assert (schedule.metrics, schedule.top_k, schedule.enabled) == (["bleu"], 2, True)
    page = client.get(reverse("evaluation:scheduled-leaderboard", args=[test_set.pk])).content.decode()
    assert "Replace the schedule" in page and 'value="2"' in page  # the form shows the saved schedule
    client.post(reverse("evaluation:scheduled-run", args=[test_set.pk]))
    assert sorted(EntryInteractiveRun.objects.values_list("entry__entry_id", flat=True)) == ["e3", "e4"]
    page = client.get(reverse("evaluation:scheduled-leaderboard", args=[test_set.pk])).content.decode()
    assert "Launched chat job" in page and "team1/e3, team1/e4" not in page and "team1/e4, team1/e3" in page
    # Choosing no system removes the link.
    client.post(reverse("evaluation:scheduled-endpoint", args=[test_set.pk]), {"entry": e3.pk, "system": ""})
    assert Entry.objects.get(pk=e3.pk).dialog_system is None


@pytest.mark.parametrize("changes, message", [
    ({"metrics": ["rouge"]}, "Select a valid choice. rouge is not one of the available choices."),
    ({"metrics": []}, "This field is required."),
    ({"top_k": 0}, "Ensure this value is greater than or equal to 1."),
    ({"stale_after_days": "soon"}, "Enter a whole number."),
    ({"lower_is_better": ["ter"]}, "lower-is-better metric(s) ter are not among the chosen metrics"),
])
def test_a_bad_schedule_is_refused_on_the_page_and_nothing_is_written(board, organizer, changes, message):
    test_set, goals, _systems = board
    answer = _organizer_client(organizer).post(reverse("evaluation:scheduled-schedule", args=[test_set.pk]), _schedule_post(goals, **changes))
    assert answer.status_code == 400 and message in answer.content.decode()
    assert not EntryInteractiveRun.objects.exists() and not hasattr(type(test_set).objects.get(pk=test_set.pk), "interactive_schedule")


def test_a_bad_endpoint_post_is_refused(board, organizer, make_annotator):
    test_set, _goals, systems = board
    client = _organizer_client(organizer)
    base = Entry.objects.get(entry_id="base")
    answer = client.post(reverse("evaluation:scheduled-endpoint", args=[test_set.pk]), {"entry": base.pk, "system": systems[0].pk})
    assert answer.status_code == 400 and "Select a valid choice" in answer.content.decode()
    assert Entry.objects.get(pk=base.pk).dialog_system is None
    e0 = Entry.objects.get(entry_id="e0")
    answer = client.post(reverse("evaluation:scheduled-endpoint", args=[test_set.pk]), {"entry": e0.pk, "system": 999999})
    assert answer.status_code == 400 and Entry.objects.get(pk=e0.pk).dialog_system == systems[0]
    answer = client.post(reverse("evaluation:scheduled-run", args=[test_set.pk]), follow=True)
    assert "no schedule yet" in answer.content.decode()
    worker = Client()
    worker.force_login(make_annotator("w")[0])
    assert worker.post(reverse("evaluation:scheduled-endpoint", args=[test_set.pk]), {"entry": e0.pk, "system": ""}).status_code == 403
    assert Entry.objects.get(pk=e0.pk).dialog_system == systems[0]


def test_the_command_and_the_page_write_the_same_schedule(board, organizer):
    test_set, goals, systems = board
    fields = ("goal_set_id", "metrics", "lower_is_better", "top_k", "dialogs_per_goal", "stale_after_days", "enabled")
    call_command("interactive_service", "schedule", str(test_set.pk), "--goals", "goals", "--metrics", "bleu,ter",
                 "--lower-is-better", "ter", "--top-k", "4", "--dialogs-per-goal", "3", "--stale-days", "30", "--disable", stdout=StringIO())
    by_command = {f: getattr(test_set.__class__.objects.get(pk=test_set.pk).interactive_schedule, f) for f in fields}
    test_set.interactive_schedule.delete()
    answer = _organizer_client(organizer).post(reverse("evaluation:scheduled-schedule", args=[test_set.pk]), _schedule_post(
        goals, metrics=["bleu", "ter"], lower_is_better=["ter"], top_k=4, dialogs_per_goal=3, stale_after_days=30, enabled=""))
    assert answer.status_code == 302
    by_page = {f: getattr(test_set.__class__.objects.get(pk=test_set.pk).interactive_schedule, f) for f in fields}
    assert by_page == by_command == {"goal_set_id": goals.pk, "metrics": ["bleu", "ter"], "lower_is_better": ["ter"], "top_k": 4,
                                     "dialogs_per_goal": 3, "stale_after_days": 30, "enabled": False}
    # The same refusal both ways.
    with pytest.raises(CommandError, match="lower-is-better metric"):
        call_command("interactive_service", "schedule", str(test_set.pk), "--goals", "goals", "--metrics", "bleu", "--lower-is-better", "ter")


def test_every_field_of_the_service_forms_says_what_it_is_for(board):
    from evaluation.interactive.forms import EntryEndpointForm, InteractiveScheduleForm

    test_set, _goals, _systems = board
    for form in (EntryEndpointForm(test_set=test_set), InteractiveScheduleForm(test_set=test_set)):
        assert [name for name, field in form.fields.items() if len(field.help_text) < 20] == []
    assert InteractiveScheduleForm(test_set=test_set).fields["metrics"].choices == [("bleu", "bleu"), ("ter", "ter")]


def test_the_automatic_score_reads_the_published_value_first_and_says_so(board, organizer):
    """A value Quorum computed (score_entries) is read only where the uploaded score file has none;
    the page says so beside the metrics."""
    test_set, goals, _systems = board
    # Quorum's recomputation would reverse bleu; the published values stand. meteor only Quorum computed.
    for entry in Entry.objects.filter(test_set=test_set, is_baseline=False):
        n = int(entry.entry_id[1:])
        entry.computed_scores = {"bleu": -n, "meteor": n}
        entry.save(update_fields=["computed_scores"])
    schedule = set_schedule(test_set=test_set, goal_set=goals, metrics=["bleu"], top_k=3)
    assert run_schedule(schedule)["entries"] == ["team1/e4", "team1/e2"]  # by the published bleu (e3 has no endpoint)
    schedule = set_schedule(test_set=test_set, goal_set=goals, metrics=["meteor"], top_k=5)
    assert set(run_schedule(schedule, now=timezone.now() + timedelta(days=400))["entries"]) >= {"team1/e4"}
    client = Client()
    client.force_login(organizer)
    page = client.get(reverse("evaluation:scheduled-leaderboard", args=[test_set.pk])).content.decode()
    assert "from the uploaded score file where it has one, else the one Quorum computed" in page
