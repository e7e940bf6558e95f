"""Organizer pages for campaigns. They read stored results only; computing is a task."""
from __future__ import annotations

import json
from datetime import timedelta
from typing import TYPE_CHECKING

from django.contrib import messages
from django.db import transaction
from django.http import FileResponse, Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import dateformat, timezone
from django.views.decorators.http import require_POST

from evaluation.campaigns import leaderboard, plots, selectors
from evaluation.campaigns.finalist_scores import finalist_rows
from evaluation.campaigns.forms import AdaptiveForm, CrowdJobForm, EntriesUploadForm, PlanForm, TestSetLogsForm, TestSetUploadForm
from evaluation.campaigns.services.campaigns import (
    create_finalist_campaign,
    remove_campaign_entry,
    select_finalists,
    set_adaptive,
)
from evaluation.campaigns.services.crowd import create_crowd_job, launch_crowd_job
from evaluation.campaigns.services.lifecycle import delete_campaign, dependents, rename_campaign
from evaluation.campaigns.services.pairwise import recompute_if_older as recompute_pairwise_if_older
from evaluation.campaigns.services.pairwise import request_report as request_pairwise_report
from evaluation.campaigns.services.results_runs import recompute_if_older_method, request_campaign_results
from evaluation.campaigns.services.runs import start_human_eval_import, start_plan
from evaluation.campaigns.services.uploads import (
    entries_imported_text,
    import_entries_upload,
    import_test_set_logs_upload,
    import_test_set_upload,
)
from evaluation.errors import EvaluationInputError
from evaluation.judges import selectors as judges_selectors
from evaluation.judges.services import import_judge_scores, import_pairwise_verdicts
from evaluation.models import Campaign, CampaignRun, PairwiseReport, TestSet
from evaluation.stats import report_format
from quorum import numbers
from quorum.lazy_modules import lazy
from quorum.progress import attempt_state, is_finished, page_again, progress_response, state_response
from quorum.roles import organizer_required

if TYPE_CHECKING:
    from evaluation.stats import fragility, pairwise_report, scoring
else:
    fragility = lazy("evaluation.stats.fragility")
    pairwise_report = lazy("evaluation.stats.pairwise_report")
    scoring = lazy("evaluation.stats.scoring")


def _with_cells(rows, questions):
    """Cells formatted by the leaderboard module (the same text as the Markdown export), because
    templates cannot index by a variable key."""
    for row, starts in zip(rows, leaderboard.starts_group(rows), strict=True):
        row["starts_group"] = starts
        row["rank_cell"] = leaderboard.rank_cell(row)
        row["system_cell"] = leaderboard.system_cell(row)
        row["cells"] = [leaderboard.score_cell(row[q], row[q + "_ci_low"], row[q + "_ci_high"]) for q in questions]
        row["final_cell"] = leaderboard.score_cell(row["final"], row["final_ci_low"], row["final_ci_high"])
    return rows


def _pairwise_with_cells(pairs):
    """The pairwise rows with their interval cell as the Markdown writes it."""
    for pair in pairs:
        pair["interval_cell"] = leaderboard.interval_cell(pair)
    return pairs


SETUP_FORMS = {"test_set_form": TestSetUploadForm, "logs_form": TestSetLogsForm, "entries_form": EntriesUploadForm}


def _list_page(request, extra=None, status=200, **bound_forms):
    """The campaign list with its set-up forms: blank ones, except a refused form shown with its errors."""
    forms = {key: bound_forms.get(key) or form_class() for key, form_class in SETUP_FORMS.items()}
    test_sets = list(selectors.test_sets())
    context = {
        "campaigns": selectors.campaigns(), "pairwise_jobs": selectors.pairwise_jobs(), "test_sets": test_sets,
        "finalist_metric_names": selectors.finalist_metric_names(test_sets), **forms, **(extra or {}),
    }
    return render(request, "evaluation/campaign_list.html", context, status=status)


@organizer_required
def campaign_list(request):
    """Campaigns, the set-up forms, and finalist selection by mean reciprocal rank (a POST shows the finalists)."""
    return _list_page(request, _select_finalists(request) if request.method == "POST" else None)


def _setup_upload(request, form_key, run):
    """Check the form, run the import (`run(cleaned_data)` returns the success message) and come
    back to the list; a refusal is shown on the form with a 400, and nothing was written."""
    form = SETUP_FORMS[form_key](request.POST, request.FILES)
    if form.is_valid():
        try:
            message = run(form.cleaned_data)
        except EvaluationInputError as exc:
            form.add_error(None, f"Nothing was imported: {exc}")
        else:
            messages.success(request, message)
            return redirect(reverse("evaluation:campaigns") + "#setup")
    return _list_page(request, status=400, **{form_key: form})


def _import_test_set(data) -> str:
    test_set = import_test_set_upload(
        data["challenge"], data["name"], labels=data["labels"], knowledge=data["knowledge"], logs=data["logs"], archive=data["archive"]
    )
    contexts = "with" if test_set.logs else "without"
    return f"Imported test set “{test_set.challenge} / {test_set.name}”: {numbers.count(test_set.size)} instances, {contexts} dialog contexts."


def _import_logs(data) -> str:
    test_set = import_test_set_logs_upload(data["test_set"], logs=data.get("logs"), knowledge=data.get("knowledge"))
    stored = " and ".join(what for what, given in (("dialog contexts", data.get("logs")), ("reference knowledge", data.get("knowledge"))) if given)
    return f"Stored the {stored} of “{test_set.challenge} / {test_set.name}”."


def _import_entries(data) -> str:
    summary = import_entries_upload(
        data["test_set"], data["archive"], scores=data["scores"], baseline_teams=data["baseline_teams"], ground_truth=data["ground_truth"]
    )
    return entries_imported_text(summary)


@organizer_required
@require_POST
def test_set_upload(request):
    return _setup_upload(request, "test_set_form", _import_test_set)


@organizer_required
@require_POST
def test_set_logs_upload(request):
    return _setup_upload(request, "logs_form", _import_logs)


@organizer_required
@require_POST
def entries_upload(request):
    return _setup_upload(request, "entries_form", _import_entries)


def _select_finalists(request) -> dict:
    form = {k: request.POST.get(k, "").strip() for k in ("test_set", "metrics", "top", "lower_is_better", "campaign")}
    test_set = TestSet.objects.filter(pk=form["test_set"]).first() if form["test_set"].isdigit() else None
    metrics = [m.strip() for m in form["metrics"].split(",") if m.strip()]
    lower = [m.strip() for m in form["lower_is_better"].split(",") if m.strip()]
    error = None
    if test_set is None:
        error = "Choose a test set."
    elif not metrics:
        error = "Name at least one objective metric, as in the scores CSV."
    elif not form["top"].isdigit() or int(form["top"]) < 1:
        error = "The number of finalist teams must be a whole number of at least 1."
    if error:
        return {"finalist_form": form, "finalist_error": error}
    try:
        finalists = select_finalists(test_set, metrics, int(form["top"]), lower_is_better=lower)
        campaign = create_finalist_campaign(form["campaign"], test_set, finalists) if form["campaign"] else None
    except EvaluationInputError as exc:
        return {"finalist_form": form, "finalist_error": str(exc)}
    if campaign is not None:
        messages.success(request, f"Created campaign “{campaign.name}” with the finalists and the reference rows.")
    left_out = finalists.attrs.get("left_out", [])
    if left_out:
        messages.warning(request, f"Left out of the ranking for lack of a value for every chosen metric: {', '.join(left_out)}.")
    skipped = finalists.attrs.get("without_outputs", [])
    if skipped:
        messages.warning(
            request,
            f"Passed over for lack of outputs to rate (known from their scores only): {', '.join(skipped)}. "
            "Import their outputs with the entries form to include them.",
        )
    rows = finalist_rows(finalists, metrics)
    # Where every value came from one source, the table says so once: repeated in each of 12 metrics'
    # cells it made the table twice as wide as the page.
    sources = {score["source_label"] for row in rows for score in row["scores"]}
    return {
        "finalist_form": form, "finalists": rows, "finalist_metrics": metrics, "created": campaign,
        "finalist_one_source": sources.pop() if len(sources) == 1 else None,
    }


@organizer_required
@require_POST
def campaign_import_human_eval(request, pk):
    """Start the import of a zipped DSTC9 human-evaluation folder into the campaign (all or nothing,
    in the background); the page follows it. A file that is not a zip is refused at once."""
    campaign = get_object_or_404(Campaign, pk=pk)
    try:
        start_human_eval_import(campaign, request.FILES.get("file"), replace=bool(request.POST.get("replace")), created_by=request.user)
    except EvaluationInputError as exc:
        messages.error(request, f"Nothing was imported: {exc}")
    else:
        messages.success(request, "The import has started; its progress and outcome are shown under the import form.")
    return redirect(reverse("evaluation:campaign-results", args=[pk]) + "#human-eval-import")


@organizer_required
def campaign_run_progress(request, pk, run_pk):
    """A planner run's or a human-evaluation import's state as JSON, with the page's fragment for it."""
    run = get_object_or_404(CampaignRun.objects.select_related("campaign"), pk=run_pk, campaign_id=pk)
    return progress_response(request, run, "evaluation/_campaign_run.html", {"campaign": run.campaign})


@organizer_required
def campaign_results_run_progress(request, pk):
    """The campaign's latest results computation as JSON, with the page's fragment for it (its line
    above the results). 404 when the campaign has none recorded."""
    campaign = get_object_or_404(Campaign, pk=pk)
    shown_at, stale = selectors.shown_result_at(campaign)
    line = _results_line(campaign, shown_at, followed=True)
    if line["results_run"] is None:
        raise Http404("No results computation was recorded for this campaign.")
    return state_response(request, attempt_state(line["results_run"]), "evaluation/_results_run.html", {**line, "stale": stale})


def reading_guide(report: dict) -> dict:
    """The words of the page's "How to read this", from what the stored report says it computed:
    the score (Eq. 1's S_f for a row weighted by its knowledge-turn detection, else the mean of the
    instances' mean ratings; `score`), what the interval's resamples vary (instances, and raters
    only when `method.raters_resampled`; `interval`) and the rank range's rule (`rank_range`)."""
    method = report.get("method", {})
    score = leaderboard.score_text(report)
    level = f"{method.get('ci', 0.95):.0%}"
    if method.get("raters_resampled"):
        interval = (
            f"its bracket the {level} bootstrap interval over test-set instances and raters: where the score would fall in about "
            f"{level.rstrip('%')} of 100 campaigns run again on other instances with other raters from the same population"
        )
    else:
        interval = (
            f"its bracket the {level} bootstrap interval over test-set instances only (rater ids unknown or one rater, so raters were "
            f"not resampled): where the score would fall in about {level.rstrip('%')} of 100 campaigns run again on other instances, "
            "not counting what a different set of raters would change"
        )
    return {"score": score, "interval": interval, "rank_range": method.get("rank_range", "")}


def _results_line(campaign, shown_at, *, followed: bool = False) -> dict:
    """The context of the results computation's line (`_results_run.html`) next to the result shown,
    computed at `shown_at` (None: none): the latest attempt, the endpoint that follows it and, once
    `followed` to its end, the link that loads the page again with the stored results."""
    state = selectors.results_run_state(campaign, shown_at)
    stored_at = shown_at or (state.finished_at if state else None)
    shown = ""
    if followed and state is not None and state.finished and stored_at is not None:
        shown = page_again(reverse("evaluation:campaign-results", args=[campaign.pk]), {}, stored_at, "results")
    return {
        "results_run": state, "results_shown_at": shown_at, "results_shown_url": shown,
        "results_progress_url": reverse("evaluation:campaign-results-run-progress", args=[campaign.pk]),
    }


@organizer_required
@require_POST
def campaign_import_judge(request, pk):
    """Import an automatic judge's scores (CSV system,instance,question,score); all or nothing."""
    campaign = get_object_or_404(Campaign.objects.select_related("test_set"), pk=pk)
    upload = request.FILES.get("file")
    if upload is None:
        messages.error(request, "Choose a .csv file of judge scores to import.")
        return redirect("evaluation:campaign-results", pk=pk)
    try:
        run = import_judge_scores(campaign, upload, request.POST.get("judge", ""), name=upload.name)
    except EvaluationInputError as exc:
        messages.error(request, f"Nothing was imported: {exc}")
    else:
        messages.success(request, f"Imported the scores of judge {run.name!r}.")
    return redirect("evaluation:campaign-results", pk=pk)


@organizer_required
@require_POST
def campaign_compute(request, pk):
    """Queue the computation of the campaign's results (a Celery task); the page says how the
    attempt stands (queued, running, failed with the reason) and shows the results when stored."""
    campaign = get_object_or_404(Campaign, pk=pk)
    try:
        request_campaign_results(campaign, by=request.user)
    except EvaluationInputError as exc:
        messages.error(request, str(exc))
    else:
        messages.info(request, "Results are being computed; they appear here when stored.")
    return redirect("evaluation:campaign-results", pk=pk)


@organizer_required
def campaign_results(request, pk):
    """The campaign page; a POST is the planner's form, which starts a planner run (the page follows
    its progress) or is shown again with what to fix (400, nothing started)."""
    campaign = get_object_or_404(Campaign.objects.select_related("test_set__challenge"), pk=pk)
    if request.method == "GET":  # results an older method computed are computed again, followed on the page
        recompute_if_older_method(campaign, by=request.user)
    plan_form = PlanForm(request.POST or None, request.FILES or None, initial={"pilot_campaign": campaign.pk})
    if request.method == "POST":
        if plan_form.is_valid():
            try:
                start_plan(campaign, plan_form.cleaned_data, created_by=request.user)
            except EvaluationInputError as exc:
                plan_form.add_error(None, f"No plan: {exc}")
            else:
                return redirect(reverse("evaluation:campaign-results", args=[pk]) + "#planner")
        return _results_page(request, campaign, plan_form=plan_form, status=400)
    return _results_page(request, campaign, plan_form=plan_form)


def _results_page(request, campaign, *, plan_form=None, adaptive_form=None, crowd_form=None, status=200):
    current = selectors.current_result(campaign)
    shown = current or selectors.latest_result(campaign)
    crowd = selectors.crowd_progress(campaign)
    # create_crowd_job refuses a campaign of imported ratings: the page says so instead of a form
    # (a refused post still shows its form, as the adaptive one, so its reason is seen).
    imported = crowd is None and selectors.has_ratings(campaign)
    closed = campaign.state == Campaign.State.CLOSED
    context = {
        "campaign": campaign,
        "campaign_entries": list(campaign.entries.select_related("team").order_by("team__team_id", "entry_id")),
        "delete_blockers": dependents(campaign),
        "result": shown,
        "stale": shown is not None and current is None,
        "older_method_note": leaderboard.older_method_words(shown.report or {}) if shown is not None and current is None else "",
        # The latest computation, named above the results while queued, running or failed.
        **_results_line(campaign, shown.computed_at if shown else None),
        "rows": _with_cells(leaderboard.rows(shown.report), campaign.questions) if shown else [],
        "questions": campaign.questions,
        "agreement": shown.report["agreement"] if shown else {},
        "pairwise": _pairwise_with_cells(leaderboard.pairwise_rows(shown.report)) if shown else [],
        "spearman": leaderboard.spearman_rows(shown.report) if shown else [],
        "correlation_text": leaderboard.correlation_text(shown.report) if shown else "",
        "instances_rated": leaderboard.INSTANCES_RATED, "instances_rated_words": leaderboard.INSTANCES_RATED_WORDS,
        "tie_group": report_format.TIE_GROUP, "rank_range": report_format.RANK_RANGE, "rank_columns": report_format.RANK_COLUMNS_WORDS,
        "correlated_entries": leaderboard.CORRELATED_ENTRIES,
        "fragility": leaderboard.fragility_rows(shown.report) if shown else [],
        "length_association": leaderboard.length_rows(shown.report) if shown else [],
        "fragility_mark": fragility.mark_text(shown.report.get("fragility")) if shown else "",
        "method": shown.report["method"] if shown else {},
        "reading": reading_guide(shown.report) if shown else {},
        "n_unrated": shown.report.get("n_unrated", 0) if shown else 0,
        "clipped_note": leaderboard.clipped_note(shown.report) if shown else "",
        "crowd": crowd,
        "adaptive": selectors.adaptive_status(campaign, crowd),
        # The settings can change only until the crowd job exists (its rounds and boundary are fixed
        # then); a refused post shows its form whatever the state, so its reason is seen.
        # A closed campaign (e.g. imported ratings) shows neither: they no longer apply.
        "adaptive_form": adaptive_form or (None if crowd or closed else AdaptiveForm.for_campaign(campaign)),
        "imported_ratings": imported,
        "crowd_form": crowd_form or (None if crowd or imported or closed else CrowdJobForm()),
        "judges": judges_selectors.judge_runs(campaign),
        "plan_form": plan_form or PlanForm(initial={"pilot_campaign": campaign.pk}),
        **_runs(campaign),
        "report_files": list(REPORT_FILES),
        "instance_scores_written": shown is not None and selectors.exported_file(shown, "instance_scores.csv") is not None,
    }
    return render(request, "evaluation/campaign_results.html", context, status=status)


RUN_SHOWN_OPEN = timedelta(minutes=15)


def _runs(campaign) -> dict:
    """The latest planner run and human-evaluation import, and whether one is recent enough (under
    way, or finished in the last RUN_SHOWN_OPEN) to unfold the set-up section it is shown in."""
    runs = {"plan_run": selectors.latest_run(campaign, CampaignRun.Kind.PLAN), "import_run": selectors.latest_run(campaign, CampaignRun.Kind.HUMAN_EVAL_IMPORT)}
    since = timezone.now() - RUN_SHOWN_OPEN
    recent = [r for r in runs.values() if r is not None and (not is_finished(r) or (r.finished_at or r.created_at) > since)]
    return {**runs, "run_to_show": bool(recent)}


@organizer_required
@require_POST
def campaign_set_adaptive(request, pk):
    """Write the campaign's adaptive settings (checked by `set_adaptive`); a refusal re-shows the
    form with what to fix and writes nothing."""
    campaign = get_object_or_404(Campaign.objects.select_related("test_set__challenge"), pk=pk)
    form = AdaptiveForm.for_campaign(campaign, request.POST)
    if form.is_valid():
        data = form.cleaned_data
        try:
            set_adaptive(
                campaign, adaptive=data["adaptive"], confidence=data["confidence"], top_k=data["top_k"], budget=data["budget"], round_size=data["round_size"],
                unit=data["unit"] or "instance",
            )
        except EvaluationInputError as exc:
            form.add_error(None, f"Nothing was changed: {exc}.")
        else:
            messages.success(request, "Adaptive rating is on; it applies when the crowd job is created." if data["adaptive"] else "Adaptive rating is off.")
            return redirect(reverse("evaluation:campaign-results", args=[pk]) + "#adaptive-settings")
    return _results_page(request, campaign, adaptive_form=form, status=400)


def _n(count: int, one: str, many: str) -> str:
    return f"{numbers.count(count)} {one if count == 1 else many}"


def _created_message(crowd, items, launched) -> str:
    raters = _n(crowd.job.redundancy, "rater", "raters")
    what = f"{_n(items, 'item', 'items')} x {raters} on {_n(len(crowd.instances), 'instance', 'instances')}"
    if crowd.round_sizes:
        what = (
            f"its first round, {_n(items, 'item', 'items')} x {raters} on the first {numbers.count(crowd.round_sizes[0])} of "
            f"{numbers.count(len(crowd.instances))} instances (adaptive: looks at {', '.join(map(numbers.count, crowd.round_sizes))} instances)"
        )
    then = "launched: raters can start now." if launched else "a draft: launch it when its crowd is set up."
    return f"Created the crowd job “{crowd.job.name}”: {what}; {then}"


@organizer_required
@require_POST
def campaign_create_crowd_job(request, pk):
    """Create the campaign's crowd rating job and, if asked, launch it: one transaction, so a
    refused launch leaves no job. A refusal re-shows the form with the reason and creates nothing."""
    campaign = get_object_or_404(Campaign.objects.select_related("test_set__challenge"), pk=pk)
    form = CrowdJobForm(request.POST)
    if form.is_valid():
        data = form.cleaned_data
        try:
            with transaction.atomic():
                crowd = create_crowd_job(
                    campaign, redundancy=data["raters"], sample_size=data["sample_size"], sample_seed=data["sample_seed"],
                    order_seed=data["order_seed"], reward=data["reward"], created_by=request.user,
                )
                if data["launch"]:
                    launch_crowd_job(campaign)
        except EvaluationInputError as exc:
            form.add_error(None, f"Nothing was created: {exc}.")
        else:
            items = selectors.crowd_progress(campaign)["items"]
            messages.success(request, _created_message(crowd, items, data["launch"]))
            return redirect(reverse("evaluation:campaign-results", args=[pk]) + "#crowd")
    return _results_page(request, campaign, crowd_form=form, status=400)


@organizer_required
@require_POST
def campaign_launch_crowd_job(request, pk):
    """Open the campaign's draft crowd job to raters; a refusal (e.g. its crowd's budget) is shown as a message."""
    campaign = get_object_or_404(Campaign, pk=pk)
    try:
        launch_crowd_job(campaign)
    except EvaluationInputError as exc:
        messages.error(request, f"Not launched: {exc}.")
    else:
        messages.success(request, "Launched: the crowd job is open to raters.")
    return redirect(reverse("evaluation:campaign-results", args=[pk]) + "#crowd")


PLOTS = {"scores": plots.scores_with_intervals, "ratings": plots.rating_distributions}


@organizer_required
def campaign_plot(request, pk, kind):
    """A PNG drawn from the stored report (no statistic is recomputed here)."""
    draw = PLOTS.get(kind)
    campaign = get_object_or_404(Campaign, pk=pk)
    shown = selectors.current_result(campaign) or selectors.latest_result(campaign)
    if draw is None or shown is None:
        raise Http404("No such plot, or no results yet.")
    response = HttpResponse(content_type="image/png")
    draw(shown.report, response)
    response["Cache-Control"] = "private, max-age=300"
    return response


# Files rendered from the stored report (cheap, like the API's leaderboard); instance scores read
# every rating, so the task that computes the results writes them and this view only serves them.
REPORT_FILES = {
    "leaderboard.json": ("application/json", lambda report: leaderboard.render(report, "json")),
    "leaderboard.csv": ("text/csv", lambda report: leaderboard.render(report, "csv")),
    "leaderboard.md": ("text/markdown", lambda report: leaderboard.render(report, "md")),
    "pairwise.csv": ("text/csv", leaderboard.pairwise_csv),
    "spearman.csv": ("text/csv", leaderboard.spearman_csv),
    "fragility.csv": ("text/csv", leaderboard.fragility_csv),
    "agreement.json": ("application/json", leaderboard.agreement_json),
}
WRITTEN_FILES = {"instance_scores.csv": "text/csv"}


@organizer_required
def campaign_download(request, pk, name):
    """One file of the results the page shows (current, else the latest older ones), as an attachment."""
    campaign = get_object_or_404(Campaign, pk=pk)
    shown, stale = selectors.shown_result(campaign)
    if shown is None or name not in {**REPORT_FILES, **WRITTEN_FILES}:
        raise Http404("No such file, or no results yet.")
    # Results older than the campaign's inputs say so as the API's leaderboard does: `stale` and
    # `computed_at` in the JSON (current results: the file the computation wrote), a first paragraph in the Markdown, "stale" in every file's name and
    # the header X-Results-Stale (a CSV has no place for a sentence that a reader would not parse).
    filename = f"campaign-{campaign.pk}-{shown.inputs_version[:12]}-{'stale-' if stale else ''}{name}"
    if name in REPORT_FILES:
        content_type, render_as = REPORT_FILES[name]
        if stale and name == "leaderboard.json":
            body = json.dumps({**leaderboard.to_json_dict(shown.report), "stale": stale, "older_method": selectors.older_method(shown),
                               "computed_at": shown.computed_at.isoformat()}, indent=2)
        else:
            body = render_as(shown.report)
        if stale and name == "leaderboard.md":
            body = leaderboard.out_of_date_note(shown.report, dateformat.format(timezone.localtime(shown.computed_at), "Y-m-d H:i T")) + "\n\n" + body
        response = HttpResponse(body, content_type=f"{content_type}; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
    else:
        path = selectors.exported_file(shown, name)
        if path is None:
            raise Http404("This file is written when the results are computed; compute them again to write it.")
        response = FileResponse(path.open("rb"), as_attachment=True, filename=filename, content_type=f"{WRITTEN_FILES[name]}; charset=utf-8")
    if stale:
        response["X-Results-Stale"] = "1"
    return response




RANKING_FORMATS = {"csv": ("text/csv", "to_csv"), "md": ("text/markdown", "to_markdown")}  # pairwise_report's writers


@organizer_required
def pairwise_ranking(request, pk, fmt=None):
    """A pairwise job's stored ranking report (Bradley-Terry strengths with bootstrap intervals,
    the votes that hold each order, the style-controlled ranking, position bias), its age and the
    recomputation under way; as a page, or as CSV / Markdown to publish. Nothing is fitted here."""
    job = get_object_or_404(selectors.pairwise_jobs(), pk=pk)
    stored = selectors.stored_pairwise_report(job)
    if stored.older_method and recompute_pairwise_if_older(job, stored) is not stored.under_way:
        stored = selectors.stored_pairwise_report(job)  # with the recomputation just asked for, to follow
    body = stored.body
    if fmt is not None:
        if fmt not in RANKING_FORMATS or body is None or not body["rows"]:
            raise Http404("No such format, or no stored ranking yet.")
        content_type, writer = RANKING_FORMATS[fmt]
        render_as = getattr(pairwise_report, writer)
        note = stored.older_method_note
        if fmt == "md":
            text = render_as(body["rows"], job_name=job.name, controls=body["controls"], rank_sets=body.get("judge_sets", []), note=note)
        else:
            text = render_as(body["rows"], note=note)
        response = HttpResponse(text, content_type=f"{content_type}; charset=utf-8")
        older = "older-method-" if note else ""
        response["Content-Disposition"] = f'attachment; filename="job-{job.pk}-{older}ranking.{fmt}"'
        if note:
            response["X-Report-Older-Method"] = "1"
        return response
    checks = body["controls"] if body else None
    context = {"job": job, "stored": stored, "rows": body["rows"] if body else [], "controls": checks,
               "fragility": checks["fragility_rows"] if checks else [], "fragility_mark": checks["fragility_mark"] if checks else "",
               "judge_sets": body.get("judge_sets", []) if body else [], "row_order": pairwise_report.ROW_ORDER if body and body["rows"] else "",
               # bradley_terry._holm_groups: the ratings leaderboard's rule on the strengths' resamples
               "rank_rule": scoring.tie_group_rule(), "rank_range_rule": scoring.rank_range_rule(),
               "tie_group": report_format.TIE_GROUP, "rank_range": report_format.RANK_RANGE, "rank_columns": report_format.RANK_COLUMNS_WORDS}
    return render(request, "evaluation/pairwise_ranking.html", context)


@organizer_required
@require_POST
def pairwise_compute(request, pk):
    """Compute the job's ranking report now (in the background; the page follows it)."""
    job = get_object_or_404(selectors.pairwise_jobs(), pk=pk)
    request_pairwise_report(job, delay=0, created_by=request.user)
    messages.info(request, "The ranking is being computed; this page shows it when it is stored.")
    return redirect("evaluation:pairwise-ranking", pk=pk)


@organizer_required
def pairwise_report_progress(request, pk, report_pk):
    """A pairwise ranking computation's state as JSON, with the page's fragment for it."""
    report = get_object_or_404(PairwiseReport, pk=report_pk, job_id=pk)
    return progress_response(request, report, "evaluation/_pairwise_report_run.html")


@organizer_required
@require_POST
def pairwise_import_judge(request, pk):
    """Import an automatic judge's verdicts on a pairwise job's pairs (CSV pair,preferred[,probability]); all or nothing."""
    job = get_object_or_404(selectors.pairwise_jobs(), pk=pk)
    upload = request.FILES.get("file")
    if upload is None:
        messages.error(request, "Choose a .csv file of judge verdicts to import.")
        return redirect(reverse("evaluation:pairwise-ranking", args=[pk]) + "#judge-rank-sets")
    try:
        run = import_pairwise_verdicts(job, upload, request.POST.get("judge", ""), name=upload.name)
    except EvaluationInputError as exc:
        messages.error(request, f"Nothing was imported: {exc}")
    else:
        messages.success(request, f"Imported the verdicts of judge {run.name!r} on {run.verdicts.count()} pairs.")
    return redirect(reverse("evaluation:pairwise-ranking", args=[pk]) + "#judge-rank-sets")


@organizer_required
@require_POST
def campaign_entry_remove(request, pk, entry_pk):
    campaign = get_object_or_404(Campaign, pk=pk)
    entry = get_object_or_404(campaign.entries, pk=entry_pk)
    try:
        remove_campaign_entry(campaign, entry)
    except EvaluationInputError as exc:
        messages.error(request, f"Not removed: {exc}.")
    else:
        messages.success(request, f"Took {entry.label} out of the campaign.")
    return redirect(reverse("evaluation:campaign-results", args=[campaign.pk]) + "#campaign-entries")


@organizer_required
@require_POST
def campaign_rename(request, pk):
    campaign = get_object_or_404(Campaign, pk=pk)
    try:
        campaign = rename_campaign(campaign, request.POST.get("name", ""))
    except EvaluationInputError as exc:
        messages.error(request, f"Not renamed: {exc}.")
    else:
        messages.success(request, f"Renamed the campaign to “{campaign.name}”.")
    return redirect("evaluation:campaign-results", pk=campaign.pk)


@organizer_required
@require_POST
def campaign_delete(request, pk):
    campaign = get_object_or_404(Campaign, pk=pk)
    if request.POST.get("confirm") != "1":
        messages.error(request, "Not deleted: tick “Yes, delete” to confirm.")
        return redirect(reverse("evaluation:campaign-results", args=[campaign.pk]) + "#campaign-manage")
    try:
        name = delete_campaign(campaign)
    except EvaluationInputError as exc:
        messages.error(request, f"Not deleted: {exc}.")
        return redirect(reverse("evaluation:campaign-results", args=[campaign.pk]) + "#campaign-manage")
    messages.success(request, f"Deleted the campaign “{name}”.")
    return redirect("evaluation:campaigns")
