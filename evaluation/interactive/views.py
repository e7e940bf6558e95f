"""Organizer pages of interactive evaluation: dialog systems (registered with the contract check)
and user goals. Thin: the services write, the selectors read."""
from __future__ import annotations

import json
from functools import partial, wraps
from typing import TYPE_CHECKING

from django.contrib import messages
from django.core.serializers.json import DjangoJSONEncoder
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from evaluation.campaigns import selectors as campaign_selectors
from evaluation.errors import EvaluationInputError
from evaluation.interactive import selectors
from evaluation.interactive.forms import (
    ChatJobForm,
    EntryEndpointForm,
    GoalsUploadForm,
    InteractiveScheduleForm,
    SystemChangeForm,
    SystemRegistrationForm,
)
from evaluation.interactive.services.chats import create_chat_job, resume_system
from evaluation.interactive.services.scheduled import link_entry_system, run_schedule, set_schedule
from evaluation.interactive.services.screening import review_chat, screen_chat_job
from evaluation.interactive.services.systems import (
    change_system,
    check_system_again,
    delete_system,
    import_goals,
    register_system,
)
from evaluation.models import ChatScreening, DialogSystem, TestSet
from quorum import limits, progress
from quorum.lazy_modules import lazy
from quorum.roles import organizer_required
from quorum.strict_json import json_safe

if TYPE_CHECKING:
    from evaluation.stats import fragility, interactive
else:
    fragility = lazy("evaluation.stats.fragility")
    interactive = lazy("evaluation.stats.interactive")

#: The downloads, each by one writer of evaluation.stats.interactive over the board the page shows.
RESULT_FORMATS = {
    "csv": ("text/csv", lambda board, job: interactive.to_csv(board)),
    "pairwise.csv": ("text/csv", lambda board, job: interactive.pairwise_csv(board)),
    "md": ("text/markdown", lambda board, job: interactive.to_markdown(board, job_name=job.name)),
    "json": ("application/json", lambda board, job: json.dumps(json_safe(interactive.to_json_dict(board)), indent=2, cls=DjangoJSONEncoder)),
}


def keep_or_drop(request, decide, back):
    """The post of an offensive-word review queue (FED sets, chat jobs): `decide(keep=...)` on
    "keep" or "drop", its refusal shown as a message; back to the queue either way."""
    decision = request.POST.get("decision")
    if decision not in ("keep", "drop"):
        messages.error(request, "Choose keep or drop.")
    else:
        try:
            decide(keep=decision == "keep")
        except EvaluationInputError as exc:
            messages.error(request, f"Not changed: {exc}")
        else:
            messages.success(request, "Kept: it is evaluated." if decision == "keep" else "Dropped: it is left out.")
    return redirect(back)


def _page(request, status=200, system_form=None, goals_form=None, chat_form=None):
    context = {
        "chat_form": chat_form or ChatJobForm(),
        "systems": selectors.dialog_systems(),
        "goal_sets": selectors.goal_sets(),
        "system_form": system_form or SystemRegistrationForm(),
        "goals_form": goals_form or GoalsUploadForm(),
        "interactive_jobs": selectors.interactive_jobs_listed(),
    }
    return render(request, "evaluation/systems.html", context, status=status)


@organizer_required
def systems_page(request):
    return _page(request)


SIGNATURE_REFUSED = ("HTTP 401", "HTTP 403")


def _check_message(request, system):
    if system.checked_at is None:
        messages.info(request, f"The contract check of “{system.name}” runs in the background; its row below shows each rule as it comes.")
        return
    if system.check_passed:
        messages.success(request, f"“{system.name}” passed the contract check; it is offered for chat jobs.")
        return
    failed = [r for r in system.check_results if not r["passed"]]
    hint = ""
    if any(code in (r.get("reason") or "") for r in failed for code in SIGNATURE_REFUSED):
        hint = (
            " The system refused Quorum's signed requests: the secret registered here probably differs from the "
            "system's. Set the right one with “Change URL or secret” on its row."
        )
    messages.warning(
        request,
        f"“{system.name}” failed the contract check ({', '.join(r['rule'] for r in failed)}), so it is not offered for "
        f"chat jobs; see why below, fix it and press Check again.{hint}",
    )


def limits_checks(view):
    """A view that starts a contract check, held to the organizer's limit (quorum.limits): past it
    the systems page says so with status 429 and nothing is changed or checked."""
    @wraps(view)
    def limited(request, *args, **kwargs):
        refusal = limits.spend("system_checks", request.user.pk)
        if refusal is None:
            return view(request, *args, **kwargs)
        messages.error(request, refusal.message)
        answer = _page(request, status=429)
        answer["Retry-After"] = str(refusal.retry_after)
        return answer
    return limited


@organizer_required
@require_POST
@limits_checks
def system_register(request):
    form = SystemRegistrationForm(request.POST)
    if form.is_valid():
        try:
            system = register_system(**form.cleaned_data)
        except EvaluationInputError as exc:
            form.add_error(None, f"Not registered: {exc}")
        else:
            _check_message(request, system)
            return redirect(reverse("evaluation:systems") + f"#system-{system.pk}")
    return _page(request, status=400, system_form=form)


@organizer_required
@require_POST
@limits_checks
def system_check(request, pk):
    system = check_system_again(get_object_or_404(DialogSystem, pk=pk))
    _check_message(request, system)
    return redirect(reverse("evaluation:systems") + f"#system-{system.pk}")


@organizer_required
@require_POST
@limits_checks
def system_change(request, pk):
    system = get_object_or_404(DialogSystem, pk=pk)
    form = SystemChangeForm(request.POST)
    if not form.is_valid() or not (form.cleaned_data["url"] or form.cleaned_data["secret"]):
        errors = "; ".join(f"{k}: {' '.join(v)}" for k, v in form.errors.items()) if form.errors else "give a new URL or secret"
        messages.error(request, f"“{system.name}” was not changed: {errors}.")
        return redirect(reverse("evaluation:systems") + f"#system-{system.pk}")
    try:
        system = change_system(system, **form.cleaned_data)
    except EvaluationInputError as exc:
        messages.error(request, f"“{system.name}” was not changed: {exc}.")
    else:
        _check_message(request, system)
    return redirect(reverse("evaluation:systems") + f"#system-{system.pk}")


@organizer_required
@require_POST
def system_delete(request, pk):
    system = get_object_or_404(DialogSystem, pk=pk)
    if request.POST.get("confirm") != "yes":  # the row's box; a browser without `required` still asks
        messages.error(request, f"Not deleted: tick “Yes, delete “{system.name}”” beside the button to confirm.")
        return redirect(reverse("evaluation:systems") + f"#system-{system.pk}")
    try:
        delete_system(system)
    except EvaluationInputError as exc:
        messages.error(request, f"Not deleted: {exc}.")
        return redirect(reverse("evaluation:systems") + f"#system-{system.pk}")
    messages.success(request, f"Deleted “{system.name}”; its name may be registered again.")
    return redirect(reverse("evaluation:systems"))


@organizer_required
@require_POST
@limits_checks
def system_resume(request, pk):
    system = get_object_or_404(DialogSystem, pk=pk)
    if system.paused_at:
        system = resume_system(system)  # the contract check first: resumed only if it passes
        if system.checked_at is None:
            messages.info(request, f"“{system.name}” is being checked; it is resumed if its contract check passes, else it stays paused with the check's reason.")
        elif system.paused_at:
            messages.warning(request, f"“{system.name}” stays paused: {system.paused_reason}. Fix it and press Resume again.")
        else:
            messages.success(request, f"“{system.name}” passed the contract check and is resumed: new chats go to it again.")
    return redirect(reverse("evaluation:systems") + f"#system-{system.pk}")


@organizer_required
def system_check_progress(request, pk):
    """A system's row as its contract check goes on (quorum/progress.py's JSON with the row as
    `html`): static/progress.js replaces the row with it until the check has ended."""
    system = get_object_or_404(selectors.dialog_systems(), pk=pk)
    finished = system.checked_at is not None
    state = {"status": "succeeded" if finished else "running", "finished": finished, "done": len(system.check_results or [])}
    return progress.state_response(request, state, "evaluation/_system_row.html", {"system": system})


@organizer_required
@require_POST
def goals_upload(request):
    form = GoalsUploadForm(request.POST, request.FILES)
    if form.is_valid():
        data = form.cleaned_data
        databases = {data["database_domain"]: data["database"].read()} if data.get("database") else {}
        try:
            goal_set = import_goals(name=data["name"], goals_file=data["goals"].read(), databases=databases)
        except EvaluationInputError as exc:
            form.add_error(None, f"Nothing was imported: {exc}")
        else:
            messages.success(request, f"Imported goal set “{goal_set.name}”: {goal_set.goals.count()} goals.")
            return redirect(reverse("evaluation:systems") + "#goals")
    return _page(request, status=400, goals_form=form)


@organizer_required
@require_POST
def chat_job_create(request):
    form = ChatJobForm(request.POST)
    if form.is_valid():
        data = form.cleaned_data
        try:
            job = create_chat_job(
                name=data["name"], systems=list(data["systems"]), goal_set=data["goal_set"], dialogs_per_goal=data["dialogs_per_goal"],
                min_user_turns=data["min_user_turns"], reward=data["reward"], instructions=data["instructions"], created_by=request.user,
                language=data["language"],
            )
        except EvaluationInputError as exc:
            form.add_error(None, f"No job was created: {exc}")
        else:
            messages.success(request, f"Launched “{job.name}”: {job.items.count()} dialogs.")
            return redirect(reverse("evaluation:systems") + "#interactive-jobs")
    return _page(request, status=400, chat_form=form)


@organizer_required
def interactive_results(request, pk, fmt=None):
    """Per system: success (worker), success with grounding, their average (which ranks), the two
    ratings, each with its bootstrap interval over goals, tie groups and rank ranges; every counted
    dialog's transcript. As a page, or as CSV / Markdown to publish."""
    job = get_object_or_404(selectors.interactive_jobs(), pk=pk)
    board, dialogs = selectors.interactive_board(job)
    if fmt is not None:
        if fmt not in RESULT_FORMATS:  # a job with nothing ranked still answers: its state, and why (`nothing_to_rank`)
            raise Http404("No such format.")
        content_type, write = RESULT_FORMATS[fmt]
        response = HttpResponse(write(board, job), content_type=f"{content_type}; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="job-{job.pk}-interactive.{fmt}"'
        return response
    dialogs = [{**d, "words": selectors.dialog_in_words(d)} for d in dialogs]  # transcripts in words, not Python values
    context = {"job": job, "result": board, "rows": board["systems"], "dialogs": dialogs, "screening": selectors.chat_screenings(job),
               "shown": interactive.to_json_dict(board), "pairwise_rows": [interactive.pairwise_cells(p) for p in board["pairwise"]],
               "pairwise_header": interactive.PAIRWISE_HEADER,
               "fragility": fragility.display_rows(board.get("fragility")), "fragility_mark": fragility.mark_text(board.get("fragility"))}
    return render(request, "evaluation/interactive_results.html", context)


@organizer_required
@require_POST
def chat_review(request, pk, screening_pk):
    """Keep or drop a chat the offensive-word filter flagged."""
    screening = get_object_or_404(ChatScreening, pk=screening_pk, response__item__job_id=pk)
    return keep_or_drop(request, partial(review_chat, screening), reverse("evaluation:interactive-results", args=[pk]) + "#review")


@organizer_required
@require_POST
def chat_screen(request, pk):
    """Screen the job's chats not screened yet (after the word list changed, or was broken)."""
    job = get_object_or_404(selectors.interactive_jobs(), pk=pk)
    try:
        flagged = screen_chat_job(job)
    except EvaluationInputError as exc:
        messages.error(request, f"Not screened: {exc}")
    else:
        messages.success(request, f"Screened: {flagged} more chat{'' if flagged == 1 else 's'} flagged.")
    return redirect(reverse("evaluation:interactive-results", args=[pk]) + "#review")


def _schedule_initial(test_set) -> dict:
    schedule = getattr(test_set, "interactive_schedule", None)
    if schedule is None:
        return {}
    fields = ("goal_set", "metrics", "lower_is_better", "top_k", "dialogs_per_goal", "stale_after_days", "enabled")
    return {name: getattr(schedule, name) for name in fields}


def _scheduled_page(request, test_set, status=200, endpoint_form=None, schedule_form=None):
    rated = campaign_selectors.campaigns_with_status().filter(test_set=test_set)
    context = {
        "test_set": test_set, **selectors.interactive_leaderboard(test_set),
        # Where a test set's responses were rated (DSTC9 Track 1), its leaderboard is the campaign's: say so first.
        "rating_campaigns": [{"campaign": c, "results": campaign_selectors.results_status(c)} for c in rated],
        "endpoint_form": endpoint_form or EntryEndpointForm(test_set=test_set),
        "schedule_form": schedule_form or InteractiveScheduleForm(test_set=test_set, initial=_schedule_initial(test_set)),
    }
    return render(request, "evaluation/scheduled_leaderboard.html", context, status=status)


@organizer_required
def scheduled_leaderboard(request, pk):
    """A test set's leaderboard with RADDLE's scheduled human evaluations (date and intervals), and
    the forms that set the service up: entries' endpoints and the schedule."""
    return _scheduled_page(request, get_object_or_404(TestSet, pk=pk))


@organizer_required
@require_POST
def scheduled_endpoint(request, pk):
    test_set = get_object_or_404(TestSet, pk=pk)
    form = EntryEndpointForm(request.POST, test_set=test_set)
    if form.is_valid():
        try:
            entry = link_entry_system(form.cleaned_data["entry"], form.cleaned_data["system"])
        except EvaluationInputError as exc:
            form.add_error(None, f"Not changed: {exc}")
        else:
            system = entry.dialog_system
            messages.success(request, f"{entry.label}: {f'evaluated through “{system.name}”' if system else 'endpoint removed'}.")
            return redirect(reverse("evaluation:scheduled-leaderboard", args=[pk]) + "#endpoints")
    return _scheduled_page(request, test_set, status=400, endpoint_form=form)


@organizer_required
@require_POST
def scheduled_schedule(request, pk):
    test_set = get_object_or_404(TestSet, pk=pk)
    form = InteractiveScheduleForm(request.POST, test_set=test_set)
    if form.is_valid():
        try:
            schedule = set_schedule(test_set=test_set, **form.cleaned_data)
        except EvaluationInputError as exc:
            form.add_error(None, f"Not saved: {exc}")
        else:
            state = "runs on schedule" if schedule.enabled else "saved, disabled"
            messages.success(request, f"Schedule of {test_set} {state}: top {schedule.top_k} by {', '.join(schedule.metrics)}.")
            return redirect(reverse("evaluation:scheduled-leaderboard", args=[pk]) + "#schedule")
    return _scheduled_page(request, test_set, status=400, schedule_form=form)


@organizer_required
@require_POST
def scheduled_run(request, pk):
    """Run the schedule now (what beat does daily), as `interactive_service run` does."""
    test_set = get_object_or_404(TestSet, pk=pk)
    schedule = getattr(test_set, "interactive_schedule", None)
    if schedule is None:
        messages.error(request, "This test set has no schedule yet: save one below first.")
    else:
        try:
            result = run_schedule(schedule)
        except EvaluationInputError as exc:
            messages.error(request, f"Not run: {exc}")
        else:
            if result["job"] is None:
                messages.info(request, "No entry is due (evaluated recently, no running endpoint, or outside the top k).")
            else:
                messages.success(request, f"Launched chat job {result['job']} for {', '.join(result['entries'])}.")
    return redirect("evaluation:scheduled-leaderboard", pk=pk)
