"""Reads of interactive evaluation: dialog systems, goal sets, chat jobs and their leaderboards,
the offensive-word screening queue, and a test set's scheduled interactive leaderboard."""
from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings
from django.db.models import Case, Count, IntegerField, Q, Value, When

from annotation import chat_relay, task_types
from annotation.chat_relay import session_key, session_key_of
from annotation.models import Item, Job, Response, SkippedItem, Slot, Worker
from evaluation.interactive import goals as goal_rules
from evaluation.interactive.services.chats import BUSY_ERROR, PAUSED_ERROR
from evaluation.models import (
    ChatScreening,
    ChatSession,
    ChatTurn,
    DialogSystem,
    EntryInteractiveRun,
    GoalSet,
    InteractiveSchedule,
    UserGoal,
)
from quorum.lazy_modules import lazy

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy("pandas")


def dialog_systems():
    return DialogSystem.objects.select_related("challenge").order_by("name")


def goal_sets():
    return GoalSet.objects.annotate(n_goals=Count("goals")).order_by("name")


def interactive_jobs():
    return Job.objects.filter(task_type__in=task_types.keys_with(task_types.RelaysChat)).order_by("-pk")


def interactive_jobs_listed():
    """The chat jobs as the systems page lists them, with how many dialogs are planned, collected (as
    the results page's run state counts them) and still open (a live job with none open has
    collected every dialog and waits for Finish)."""
    return interactive_jobs().annotate(
        n_dialogs=Count("items", distinct=True), n_open=Count("items", filter=Q(items__state=Item.State.OPEN), distinct=True),
        n_planned=Count("items__slots", distinct=True),
        n_collected=Count("items__responses", filter=Q(items__responses__status__in=Response.COUNTED), distinct=True),
    )


def interactive_ranking(job, bootstrap=None, seed=None):
    """The interactive leaderboard of a chat job (intervals, tie groups) and its counted dialogs."""
    from evaluation.stats import interactive, scoring  # with the first leaderboard: web workers skip numpy/scipy

    dialogs = interactive_dialogs(job)
    result = interactive.system_results(
        dialogs, bootstrap=bootstrap or scoring.DEFAULT_BOOTSTRAP, seed=scoring.DEFAULT_SEED if seed is None else seed,
        fragility_mark=settings.QUORUM_FRAGILITY_MARK_SHARE,
    )
    return result, dialogs


def interactive_board(job, bootstrap=None, seed=None) -> tuple[dict, list[dict]]:
    """What the results page and every download show (`evaluation.stats.interactive`'s writers):
    the leaderboard, the run's state (`run_status`), the screening counts, and each system of the
    job with no counted dialog and why (`unscored`)."""
    result, dialogs = interactive_ranking(job, bootstrap, seed)
    screening = chat_screenings(job)
    status = run_status(job)
    scored = {row["system"] for row in result["systems"]}
    left_out: dict[str, dict[str, int]] = {}
    for s in screening["queue"]:
        if s.review in UNCOUNTED_SCREENINGS:
            left_out.setdefault(s.system, dict.fromkeys(UNCOUNTED_SCREENINGS, 0))[s.review] += 1
    unscored = [
        {"system": row["system"], **left_out.get(row["system"], dict.fromkeys(UNCOUNTED_SCREENINGS, 0))}
        for row in status["systems"] if row["system"] not in scored
    ]
    board = {
        **result, "job": job.pk, "name": job.name, "status": status, "unscored": unscored,
        "screening": {k: screening[k] for k in ("pending", "kept", "dropped")},
    }
    return board, dialogs


def run_status(job) -> dict:
    """The run's state: {"job_state" (its label), "job_live", "systems": [{system, planned, done, paused_at, paused_reason,
    failed_calls_not_counted, dialogs_not_counted}]} per system of the job (planned: its dialogs' slots; done: the
    dialogs submitted; the last two: `uncounted_failures`)."""
    endpoints = job.items.values_list("payload__endpoint", flat=True)
    planned: dict[str, int] = {}
    for endpoint in endpoints:
        planned[endpoint] = planned.get(endpoint, 0) + job.redundancy
    done: dict[str, int] = {}
    for endpoint in Response.objects.counted().filter(item__job=job).values_list("item__payload__endpoint", flat=True):
        done[endpoint] = done.get(endpoint, 0) + 1
    systems = {s.public_id: s for s in DialogSystem.objects.filter(public_id__in=planned)}
    uncounted = uncounted_failures(job, list(systems.values()))
    rows: list[dict] = []
    for endpoint in planned:
        system = systems.get(endpoint)
        rows.append({
            "system": system.name if system else endpoint, "planned": planned[endpoint], "done": done.get(endpoint, 0),
            "paused_at": system.paused_at.isoformat(timespec="seconds") if system and system.paused_at else None, "paused_reason": system.paused_reason if system else "",
            "failed_calls_not_counted": uncounted.get(endpoint, (0, 0))[0], "dialogs_not_counted": uncounted.get(endpoint, (0, 0))[1],
        })
    rows.sort(key=lambda r: str(r["system"]))
    return {"job_state": job.get_state_display(), "job_live": job.state == Job.State.LIVE, "systems": rows}


def uncounted_failures(job, systems) -> dict[str, tuple[int, int]]:
    """Endpoint -> (calls that failed, dialogs they failed in) in this job's conversations that do not
    count on the leaderboard: left by their worker (Skip, or a claim that expired), not submitted yet,
    or waiting or dropped at review. The leaderboard's Failed calls read only counted dialogs, so
    without this a system whose failures made workers give up would read as never failing. A
    conversation is found from its slot and a worker who held it (holds it, answered it, or skipped
    it); one whose claim expired has no such worker left, and is found among every worker's keys of
    the slots of its own system and goal (`_expired_claims`)."""
    sessions = list(
        ChatSession.objects.filter(system__in=systems, turns__role=ChatTurn.Role.SYSTEM, turns__failed=True)
        .values_list("key", "system__public_id").distinct()
    )
    if not sessions:
        return {}
    counted = {session_key_of(slot, worker) for slot, worker in counted_responses(job).values_list("slot_id", "slot__worker_id")}
    slots = list(Slot.objects.filter(item__job=job).values_list("pk", "worker_id"))
    workers = ({w for _slot, w in slots if w} | set(Response.objects.filter(item__job=job).values_list("worker_id", flat=True))
               | set(SkippedItem.objects.filter(item__job=job).values_list("worker_id", flat=True)))
    keys = {session_key_of(slot, worker) for slot, _holder in slots for worker in workers} - counted
    found = {key: endpoint for key, endpoint in sessions if key in keys}
    unknown = [key for key, _endpoint in sessions if key not in found and key not in counted]
    found.update(_expired_claims(job, unknown, workers))
    failures = (ChatTurn.objects.filter(session__key__in=found, role=ChatTurn.Role.SYSTEM, failed=True)
                .exclude(error__in=NOT_CALLED).values("session__key").annotate(n=Count("pk")))
    out: dict[str, tuple[int, int]] = {}
    for row in failures:
        calls, dialogs = out.get(found[row["session__key"]], (0, 0))
        out[found[row["session__key"]]] = (calls + row["n"], dialogs + 1)
    return out


def _expired_claims(job, keys: list[str], known_workers: set) -> dict[str, str]:
    """Key -> endpoint of the conversations among `keys` held on this job's slots by a worker the job
    no longer names: their claim expired and was freed, so neither the slot nor a response or skip
    says who held it. Each conversation is tried against the slots of the items of its own system and
    goal (a few) and every other worker, so the work grows with the unfound conversations, not the job."""
    if not keys:
        return {}
    conversations = list(ChatSession.objects.filter(key__in=keys, opened_at__gte=job.created_at).values_list("key", "system__public_id", "goal"))
    # Most conversations of the same systems in other jobs were submitted there: known at one key each.
    elsewhere = Response.objects.filter(item__job__in=interactive_jobs().exclude(pk=job.pk),
                                        item__payload__endpoint__in={endpoint for _key, endpoint, _goal in conversations})
    submitted_elsewhere = {session_key_of(slot, worker) for slot, worker in elsewhere.values_list("slot_id", "worker_id")}
    conversations = [c for c in conversations if c[0] not in submitted_elsewhere]
    if not conversations:
        return {}
    items = list(job.items.values_list("pk", "payload__endpoint", "payload__goal"))
    slots_of: dict[int, list[int]] = {}
    for item, slot in Slot.objects.filter(item__job=job).values_list("item_id", "pk"):
        slots_of.setdefault(item, []).append(slot)
    others = [w for w in Worker.objects.values_list("pk", flat=True).iterator() if w not in known_workers]
    found: dict[str, str] = {}
    for key, endpoint, goal in conversations:
        candidates = [slot for item, item_endpoint, item_goal in items if item_endpoint == endpoint and (item_goal or None) == (goal or None)
                      for slot in slots_of.get(item, [])]
        if any(session_key_of(slot, worker) == key for slot in candidates for worker in others):
            found[key] = endpoint
    return found


def counted_responses(job):
    """The responses of a chat job that count on its leaderboard: flagged ones only once kept."""
    return Response.objects.counted().filter(item__job=job).exclude(chat_screening__review__in=UNCOUNTED_SCREENINGS)


#: Chats flagged by the offensive-word filter count only once an organizer keeps them.
UNCOUNTED_SCREENINGS = ("pending", "dropped")


def interactive_dialogs(job) -> list[dict]:
    """The counted dialogs of a chat job with their system's name, goal and entity database;
    flagged ones only once kept. `failed_calls`: the dialog's calls to the system that failed
    (`failed_calls`; from its transcript where its conversation is not recorded, `transcript_failed_calls`)."""
    responses = list(counted_responses(job).select_related("item", "slot").order_by("pk"))
    failed = failed_calls([session_key(r.slot) for r in responses])
    names = dict(DialogSystem.objects.filter(public_id__in={r.item.payload["endpoint"] for r in responses}).values_list("public_id", "name"))
    goal_ids = {int(r.item.payload["goal_id"]) for r in responses if str(r.item.payload.get("goal_id", "")).isdigit()}
    databases = {g.pk: g.goal_set.database for g in UserGoal.objects.filter(pk__in=goal_ids).select_related("goal_set")}
    return [
        {
            "system": names.get(r.item.payload["endpoint"], r.item.payload["endpoint"]),
            "answers": r.answers, "goal": r.item.payload.get("goal") or {}, "goal_text": r.item.payload.get("goal_text", []),
            "database": (databases.get(int(r.item.payload["goal_id"])) if str(r.item.payload.get("goal_id", "")).isdigit() else None) or {},
            "goal_id": str(r.item.payload.get("goal_id", "")), "response_id": r.pk, "worker": r.worker_id,
            "failed_calls": failed.get(session_key(r.slot), transcript_failed_calls(r.answers.get("transcript"))),
        }
        for r in responses
    ]


def transcript_failed_calls(transcript) -> int:
    """A dialog's failed calls read from its transcript, where its conversation is not recorded (its
    rows removed): the failed system turns but Quorum's own replies while the system was paused or
    busy (`chat_relay.UNAVAILABLE`, `BUSY`), which are failed turns of the transcript but no call."""
    return sum(1 for t in transcript or [] if isinstance(t, dict) and t.get("role") == "system" and t.get("failed")
               and t.get("text") not in QUORUMS_REPLIES)


#: The texts Quorum answers with itself when it did not call the system.
QUORUMS_REPLIES = (chat_relay.UNAVAILABLE, chat_relay.BUSY)


def _offer_words(offered) -> str:
    """An offered entity in words ("name Golden Wok, food chinese, area centre"), not a Python dict."""
    if isinstance(offered, dict):
        return ", ".join(f"{key} {value}" for key, value in offered.items() if key != "domain" and value not in (None, ""))
    return str(offered) if offered else ""


def _rating_words(answers: dict, name: str) -> str:
    value = answers.get(name)
    if isinstance(value, int):
        reason = answers.get(f"{name}_reason") or ""
        return f"{value} of 5" + (f" ({reason})" if reason else "")
    if answers.get("system_unavailable"):
        return "— (not asked: the system was paused)"
    return "—"


def dialog_in_words(dialog: dict) -> dict:
    """What a transcript on the results page says, in words (one dialog of `interactive_dialogs`):
    each turn with its offer as fields, the ratings with "—" and why where none was given, and
    whether the dialog was grounded-successful ("yes", "no", or why it cannot be: no database)."""
    answers = dialog["answers"]
    transcript = answers.get("transcript") or []
    offers = [t["offered"] for t in transcript if isinstance(t, dict) and isinstance(t.get("offered"), dict)]
    if not dialog.get("database"):
        grounded = "cannot be told: the goal set has no database"
    else:
        grounded = "yes" if goal_rules.grounded_success(dialog.get("goal") or {}, offers, dialog["database"]) else "no"
    return {
        "turns": [
            {"speaker": "Worker" if t.get("role") == "user" else "System", "text": t.get("text", ""), "failed": bool(t.get("failed")),
             "offer": _offer_words(t.get("offered"))}
            for t in transcript if isinstance(t, dict)
        ],
        "understanding": _rating_words(answers, "understanding"), "appropriateness": _rating_words(answers, "appropriateness"),
        "grounded": grounded,
    }


#: A failed system turn Quorum answered itself without calling the system: it was paused, or busy
#: with as many calls as allowed. Not a failure of the system's.
NOT_CALLED = (PAUSED_ERROR, BUSY_ERROR)


def failed_calls(keys) -> dict[str, int]:
    """Conversation key -> its system turns where the system was called and failed (timed out, broke
    the contract, no reply recorded); a key without a recorded conversation is absent. Quorum's own
    refusals after a pause (or while the system was busy) are not counted: the system was not called."""
    counts = dict.fromkeys(
        ChatTurn.objects.filter(session__key__in=keys).values_list("session__key", flat=True).distinct(), 0)
    failures = (ChatTurn.objects.filter(session__key__in=keys, role=ChatTurn.Role.SYSTEM, failed=True)
                .exclude(error__in=NOT_CALLED).values("session__key").annotate(n=Count("pk")))
    counts.update({row["session__key"]: row["n"] for row in failures})
    return counts


def waiting_first():
    """Order of a review queue: flagged rows still waiting for a decision first."""
    return Case(When(review="pending", then=Value(0)), default=Value(1), output_field=IntegerField())


def chat_screenings(job) -> dict:
    """A chat job's offensive-word queue: its flagged chats (waiting ones first, with their system's
    name) and how many wait, were kept and were dropped."""
    queue = list(ChatScreening.objects.filter(response__item__job=job).select_related("response__item").order_by(waiting_first(), "response_id"))
    names = dict(DialogSystem.objects.values_list("public_id", "name"))
    for s in queue:
        s.system = names.get(  # type: ignore[attr-defined]  # a display attribute the review template reads
            s.response.item.payload.get("endpoint"), "?")
    counts = {state: sum(s.review == state for s in queue) for state in ("pending", "kept", "dropped")}
    return {"queue": queue, **counts}


def entry_metrics(test_set) -> list[str]:
    """The objective metrics the test set's entries have scores for, sorted: what a schedule's
    automatic score may be computed over."""
    return sorted({m for entry in test_set.entries.only("objective_scores", "computed_scores") for m in entry.scores_for_ranking()})


def interactive_leaderboard(test_set) -> dict:
    """A test set's submissions by automatic score (Eq. 2 over its schedule's metrics) with their
    latest scheduled human evaluation: date, success, grounded success and the final score with its
    interval from that run's chat job. {"schedule", "rows"}."""
    schedule = InteractiveSchedule.objects.filter(test_set=test_set).first()
    entries = list(test_set.entries.filter(is_baseline=False, is_ground_truth=False).select_related("team", "dialog_system"))
    automatic = _automatic_scores(schedule, entries)
    latest = {}
    for earlier in EntryInteractiveRun.objects.filter(entry__in=entries).select_related("job").order_by("created_at"):
        latest[earlier.entry_id] = earlier
    results_by_job: dict = {}
    rows = [_leaderboard_row(e, automatic.get(e.pk), latest.get(e.pk), results_by_job) for e in entries]
    rows.sort(key=lambda r: (r["automatic"] is None, -(r["automatic"] or 0), r["entry"]))
    screened = [chat_screenings(job_id) for job_id in results_by_job]
    left_out = {state: sum(c[state] for c in screened) for state in UNCOUNTED_SCREENINGS}
    return {"schedule": schedule, "rows": rows, "left_out": left_out}


def _automatic_scores(schedule, entries: list) -> dict:
    """Entry id -> Eq. 2 over the schedule's metrics, for the entries scored on all of them."""
    if not schedule:
        return {}
    scored = [e for e in entries if all(m in e.scores_for_ranking() for m in schedule.metrics)]
    if not scored:
        return {}
    from evaluation.stats import scoring  # with the first leaderboard: web workers skip numpy/scipy

    frame = pd.DataFrame([{m: e.scores_for_ranking()[m] for m in schedule.metrics} for e in scored], index=[e.pk for e in scored])
    return scoring.mrr_overall(frame, schedule.metrics, lower_is_better=schedule.lower_is_better).to_dict()


def _leaderboard_row(entry, automatic, run, results_by_job: dict) -> dict:
    """One entry's row; `results_by_job` caches each chat job's interactive results across rows."""
    system = entry.dialog_system.name if entry.dialog_system else None
    row = {"entry": entry.label, "automatic": automatic, "system": system, "human": None}
    if run is not None:
        if run.job_id not in results_by_job:
            results_by_job[run.job_id] = {r["system"]: r for r in interactive_ranking(run.job)[0]["systems"]}
        human = results_by_job[run.job_id].get(system or "")
        row["human"] = {"date": run.created_at, "job": run.job_id, "final": None, **(human or {})}
    return row
