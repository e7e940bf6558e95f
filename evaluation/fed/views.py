"""Organizer pages of FED questionnaires: sets to rate (from transcripts or a static JSONL), the
offensive-word review queue, the FED job and its results. Thin: services write, selectors read."""
from functools import partial

from django.contrib import messages
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.defaultfilters import pluralize
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotation.selectors.jobs import job_progress
from evaluation.errors import EvaluationInputError
from evaluation.fed import selectors
from evaluation.fed.forms import FedFromChatsForm, FedLaunchForm, FedStaticForm
from evaluation.fed.results import request_fed_results, results_if_asked
from evaluation.fed.results_file import results_csv
from evaluation.fed.services import create_fed_set_from_chats, import_fed_static, launch_fed_job, review_candidate
from evaluation.interactive import selectors as interactive_selectors
from evaluation.interactive.views import keep_or_drop
from evaluation.models import FedCandidate, FedSet
from quorum.progress import attempt_state, page_again, state_response
from quorum.roles import organizer_required


def _list(request, status=200, chats_form=None, static_form=None):
    context = {
        "fed_sets": selectors.fed_sets(), "chats_form": chats_form or FedFromChatsForm(), "static_form": static_form or FedStaticForm(),
    }
    return render(request, "evaluation/fed_sets.html", context, status=status)


@organizer_required
def fed_sets(request):
    """The sets and the two ways to make one; `?chat_job=<id>` (the link on a chat job's results page)
    picks that job in the form from interactive dialogs."""
    return _list(request, chats_form=FedFromChatsForm(initial=_chats_initial(request.GET.get("chat_job", ""))))


def _chats_initial(chat_job: str) -> dict:
    job = interactive_selectors.interactive_jobs().filter(pk=int(chat_job)).first() if chat_job.isdigit() else None
    return {"chat_job": job.pk, "name": f"{job.name} (FED)"[:200]} if job is not None else {}


def _created(request, fed_set):
    flagged = fed_set.candidates.exclude(review="clean").count()
    note = f"; {flagged} flagged by the offensive-word filter wait for your review" if flagged else ""
    messages.success(request, f"“{fed_set.name}”: {fed_set.candidates.count()} to rate{note}.")
    return redirect("evaluation:fed-set", pk=fed_set.pk)


@organizer_required
@require_POST
def fed_from_chats(request):
    form = FedFromChatsForm(request.POST)
    if form.is_valid():
        try:
            fed_set = create_fed_set_from_chats(name=form.cleaned_data["name"], chat_job=form.cleaned_data["chat_job"], level=form.cleaned_data["level"])
        except EvaluationInputError as exc:
            form.add_error(None, f"Nothing was created: {exc}")
        else:
            return _created(request, fed_set)
    return _list(request, status=400, chats_form=form)


@organizer_required
@require_POST
def fed_static(request):
    form = FedStaticForm(request.POST, request.FILES)
    if form.is_valid():
        try:
            fed_set = import_fed_static(name=form.cleaned_data["name"], jsonl=form.cleaned_data["jsonl"].read(), level=form.cleaned_data["level"])
        except EvaluationInputError as exc:
            form.add_error(None, f"Nothing was imported: {exc}")
        else:
            return _created(request, fed_set)
    return _list(request, status=400, static_form=form)


def _set_page(request, fed_set, status=200, launch_form=None):
    stored = results_if_asked(fed_set, by=request.user)  # stored once per state of the answers; asked for when not current
    results = stored.results
    context = {
        "fed_set": fed_set, "queue": selectors.fed_review_queue(fed_set), "launch_form": launch_form or FedLaunchForm(),
        "stored": stored, "results": results,
        "any_clipped": any(q["ci_clipped"] for r in results for q in r["questions"]),
        "agreement": stored.agreement,
        "ratings": job_progress(fed_set.job) if fed_set.job_id else None,
        **_results_line(fed_set, stored),
    }
    return render(request, "evaluation/fed_set.html", context, status=status)


def _results_line(fed_set, stored, *, followed: bool = False) -> dict:
    """The context of the results computation's line (`_fed_results_run.html`): the latest attempt,
    the endpoint that follows it and, once `followed` to its end, the link to the page again."""
    shown_at = stored.shown.computed_at if stored.shown else None
    stored_at = shown_at or (stored.run.finished_at if stored.run else None)
    shown = ""
    if followed and stored.run is not None and stored.run.finished and stored_at is not None:
        shown = page_again(reverse("evaluation:fed-set", args=[fed_set.pk]), {}, stored_at, "results")
    return {
        "results_run": stored.run, "results_shown_at": shown_at, "results_shown_url": shown, "results_note": stored.note,
        "results_progress_url": reverse("evaluation:fed-results-run-progress", args=[fed_set.pk]),
    }


@organizer_required
def fed_set(request, pk):
    return _set_page(request, get_object_or_404(selectors.fed_sets(), pk=pk))


@organizer_required
def fed_results_download(request, pk):
    """The stored results and agreement the page shows, as one CSV (`results_file`); results that are
    not current say so on every row (`note`). 404 until results are stored."""
    fed_set = get_object_or_404(FedSet.objects.select_related("job"), pk=pk)
    stored = results_if_asked(fed_set, by=request.user)
    if stored.shown is None:
        raise Http404("No results are stored for this set yet: its page says how their computation stands.")
    response = HttpResponse(results_csv(stored.results, stored.agreement, note=stored.note), content_type="text/csv; charset=utf-8")
    older = "" if stored.current else "not-current-"
    response["Content-Disposition"] = f'attachment; filename="fed-{fed_set.pk}-{older}results.csv"'
    return response


@organizer_required
def fed_results_run_progress(request, pk):
    """The set's latest results computation as JSON, with the page's fragment for it. 404 when none was recorded."""
    fed_set = get_object_or_404(FedSet.objects.select_related("job"), pk=pk)
    stored = selectors.stored_fed_results(fed_set)
    line = _results_line(fed_set, stored, followed=True)
    if stored.run is None:
        raise Http404("No results computation was recorded for this set.")
    return state_response(request, attempt_state(stored.run), "evaluation/_fed_results_run.html", line)


@organizer_required
@require_POST
def fed_compute(request, pk):
    """Compute the set's results again now (in the background; the page follows it): after a failed
    computation a read does not ask again until an answer moves."""
    fed_set = get_object_or_404(FedSet.objects.select_related("job"), pk=pk)
    if fed_set.job_id is None:
        messages.error(request, "This set has no results to compute: launch it first.")
    else:
        request_fed_results(fed_set, by=request.user)
        messages.info(request, "The results are being computed again; this page shows them when they are stored.")
    return redirect(reverse("evaluation:fed-set", args=[pk]) + "#results")


@organizer_required
@require_POST
def fed_review(request, pk, candidate_pk):
    candidate = get_object_or_404(FedCandidate, pk=candidate_pk, fed_set_id=pk)
    return keep_or_drop(request, partial(review_candidate, candidate), reverse("evaluation:fed-set", args=[pk]) + "#review")


@organizer_required
@require_POST
def fed_launch(request, pk):
    fed_set = get_object_or_404(FedSet, pk=pk)
    form = FedLaunchForm(request.POST)
    if form.is_valid():
        try:
            job = launch_fed_job(fed_set, raters=form.cleaned_data["raters"], reward=form.cleaned_data["reward"], created_by=request.user)
        except EvaluationInputError as exc:
            form.add_error(None, f"Not launched: {exc}")
        else:
            items = job.items.count()
            messages.success(request, f"Launched “{job.name}”: {items} item{pluralize(items)}.")
            return redirect("evaluation:fed-set", pk=pk)
    return _set_page(request, get_object_or_404(selectors.fed_sets(), pk=pk), status=400, launch_form=form)
