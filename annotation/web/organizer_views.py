"""Organizer pages: the dashboard, corpus upload and its import run, job creation and the job page
with its quality control (voting, review list, verdict overrides, quality settings, gold items,
recomputing flags), and the worker page (flags with their evidence, gold record, standing, unblock).

Thin views over the services and selectors; organizers only (anonymous users are sent to log
in, everyone else gets a 403 page that says why). Writes are POST only.
"""
from urllib.parse import urlencode

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from quorum import csv_safety
from quorum.progress import attempt_state, is_finished, page_again, progress_response, state_response
from quorum.roles import organizer_required

from .. import extensions, task_types
from ..exporters import ExportError
from ..models import ExportRun, ImportRun, Job, JobCreationRun, QualityPolicy, Response, RunStatus, Worker
from ..selectors import quality as quality_selectors
from ..selectors.dashboard import (
    FAILED_CREATION_SHOWN_DAYS,
    corpora_with_counts,
    corpus_counts,
    job_creations_to_show,
    jobs_with_progress,
    recent_export_runs,
    recent_import_runs,
    worker_recent_responses,
)
from ..selectors.exports import export_contents
from ..selectors.flags import flag_run_state, flagged_workers, readings_since, responses_since, stored_flags
from ..selectors.gold import gold_items
from ..selectors.jobs import job_progress, job_text_language
from ..selectors.readings import reading_of, transcription_summary
from ..selectors.reliability import reliability_overview, worker_reliability_rows
from ..selectors.review import CARDS_PAGE_SIZE, PAGE_SIZE, ReviewFilters, review_queue
from ..selectors.review_decisions import decision_checks, prefers_compact
from ..selectors.team import in_house_annotators
from ..services.exports import start_export
from ..services.flag_runs import request_flag_run
from ..services.gold import GoldRequestError, add_gold_from_item
from ..services.gold import answer_fields as gold_answer_fields
from ..services.import_uploads import UploadError, import_error_field, start_upload_import
from ..services.imports import ImportFailed
from ..services.job_creation import failure_as_job_error, retry_job_creation, start_job_creation
from ..services.jobs import JOB_ACTIONS, JobError, change_state, delete_draft_job, update_draft_job
from ..services.payload_jobs import create_payload_job_from_file
from ..services.quality import QualityError, override_verdict, set_quality, unblock_worker
from ..services.review import ACTIONS as REVIEW_ACTIONS
from ..services.review import bulk_decide
from ..services.team import TeamError, add_annotators, lines_to_correct, parse_team_csv, set_active
from ..services.voting import VotingError, disable_voting, enable_voting, vote_job_of
from ..text.languages import is_right_to_left, language_name
from .organizer_forms import CorpusUploadForm, ExportForm, GoldItemForm, JobForm, OverrideForm, QualitySettingsForm, VotingForm
from .views import audio_response

#: Rows per page of each list on the job page (reviewed items, flagged workers, gold items); the
#: responses themselves are paged in the review queue.
SECTION_ROWS = 20


@organizer_required
def dashboard(request):
    return render(
        request,
        "annotation/organizer/dashboard.html",
        {
            "corpora": corpora_with_counts(),
            "jobs": jobs_with_progress(),
            "job_creations": job_creations_to_show(),
            "failed_shown_days": FAILED_CREATION_SHOWN_DAYS,
            "import_runs": recent_import_runs(),
            "export_runs": recent_export_runs(),
        },
    )


@organizer_required
def corpus_upload(request):
    # "Upload a corrected file" after a failed import comes back with its name and format filled in.
    initial = {key: request.GET[key] for key in ("name", "source_format") if request.GET.get(key)}
    form = CorpusUploadForm(request.POST or None, request.FILES or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        try:
            run = start_upload_import(
                name=form.cleaned_data["name"],
                source_format=form.cleaned_data["source_format"],
                files=form.files_by_role(),
                created_by=request.user,
                language=form.cleaned_data["language"],
            )
        except UploadError as exc:
            form.add_error(exc.field if exc.field in form.fields else None, str(exc))
        except ImportFailed as exc:
            field = import_error_field(exc)
            form.add_error(field if field in form.fields else None, str(exc))
        else:
            return redirect("organizer:import-run", pk=run.pk)
    return render(request, "annotation/organizer/corpus_upload.html", {"form": form})


@organizer_required
def import_run(request, pk):
    run = get_object_or_404(ImportRun.objects.select_related("corpus"), pk=pk)
    return render(request, "annotation/organizer/import_run.html", {"run": run, "finished": is_finished(run), **_imported(run)})


@organizer_required
def import_progress(request, pk):
    """The import run's state as JSON, with the page's fragment for it (quorum/progress.py)."""
    run = get_object_or_404(ImportRun.objects.select_related("corpus"), pk=pk)
    fragments = {"": "annotation/organizer/_import_run.html", "dashboard": "annotation/organizer/_dashboard_import_row.html"}
    return _progress(request, run, fragments, _imported(run))


def _imported(run: ImportRun) -> dict:
    """What a succeeded import brought in, for its page to say (`counts`: the corpus with its
    dialogs, turns and user turns, one query); nothing before then."""
    if run.status != RunStatus.SUCCEEDED or run.corpus_id is None:
        return {}
    return {"counts": corpus_counts(run.corpus_id)}


@organizer_required
def job_new(request):
    initial = {}
    if request.method == "GET" and request.GET.get("corpus", "").isdigit():
        initial["corpus"] = int(request.GET["corpus"])
    if request.method == "GET" and request.GET.get("task_type"):
        initial["task_type"] = request.GET["task_type"]  # e.g. from evaluation's "create a pairwise job"
    if request.method == "GET" and request.GET.get("from_creation", "").isdigit():
        # "Change the request" of a job creation: the form as the builder filled it in.
        run = JobCreationRun.objects.filter(pk=int(request.GET["from_creation"])).first()
        if run is not None:
            initial = JobForm.initial_from_creation(run)
            for setting in JobForm.setting_files_given(run):
                messages.info(request, f"Give the “{setting}” file again: the request keeps what was read from it, not the file.")
    form = JobForm(request.POST or None, request.FILES or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        try:
            if form.builds_from_payloads:
                return _job_created(request, create_payload_job_from_file(created_by=request.user, **form.payload_request()))
            # A corpus job is made in the background: over 100,000 turns its items and slots take
            # tens of seconds to write (docs/measurements.md). Refused here if the request is bad.
            run = start_job_creation(created_by=request.user, **form.job_request())
        except JobError as exc:
            form.add_service_error(exc.field_errors())
        else:
            run.refresh_from_db()
            # Made or refused already where tasks run in the request (development, tests): said at once.
            if run.status == RunStatus.SUCCEEDED and run.job is not None:
                return _job_created(request, run.job)
            if run.status == RunStatus.FAILED:
                form.add_service_error(failure_as_job_error(run).field_errors())
            else:
                return redirect("organizer:job-creation", pk=run.pk)
    return render(request, "annotation/organizer/job_form.html", {"form": form})


def _job_created(request, job):
    """The job page of a new draft job, with what the builder should know before launching it."""
    messages.success(request, f"Created draft job {job.name!r}. Launch it when you are ready.")
    for note in task_types.settings_notes(task_types.get(job.task_type), job.settings):
        messages.warning(request, note)
    return redirect("organizer:job", pk=job.pk)


@organizer_required
def job_creation(request, pk):
    """A corpus job being made in the background; once made, its job page (where tasks run in the
    request, at once)."""
    run = get_object_or_404(JobCreationRun.objects.select_related("corpus", "job"), pk=pk)
    if run.status == RunStatus.SUCCEEDED and run.job is not None:
        return _job_created(request, run.job)
    return render(request, "annotation/organizer/job_creation_run.html", {"run": run, "finished": is_finished(run)})


@organizer_required
def job_creation_progress(request, pk):
    """The creation run's state as JSON, with its fragment of the page (quorum/progress.py)."""
    run = get_object_or_404(JobCreationRun.objects.select_related("corpus", "job", "created_by"), pk=pk)  # the dashboard's row names who asked
    return _progress(request, run, {"": "annotation/organizer/_job_creation_run.html", "dashboard": "annotation/organizer/_dashboard_creation_row.html"})


@organizer_required
@require_POST
def job_creation_retry(request, pk):
    run = get_object_or_404(JobCreationRun, pk=pk)
    try:
        retry_job_creation(run)
    except JobError as exc:
        messages.error(request, str(exc)[:1].upper() + str(exc)[1:] + ".")
    return redirect("organizer:job-creation", pk=run.pk)


@organizer_required
def job_detail(request, pk):
    job = get_object_or_404(Job.objects.select_related("corpus").prefetch_related("annotators"), pk=pk)
    return _job_page(request, job)


def _paged(request, rows, name: str, per_page: int = SECTION_ROWS):
    """One page of a job-page section; each section pages on its own query parameter."""
    return Paginator(rows, per_page).get_page(request.GET.get(name) or 1)


def _job_page(request, job, *, voting_form=None, quality_form=None, gold_form=None, export_form=None, status=200, extra=None):
    """The job page: an overview in sections (progress, review, quality, crowd, exports), each
    paged, whose queries do not grow with the job's responses; the responses themselves are read
    in the review queue. A refused form is passed back bound, so its errors show by its fields."""
    progress = job_progress(job)
    policy = QualityPolicy.objects.filter(job=job).first()
    flags = stored_flags(job, with_responses=False)  # as the last flag run stored them: never computed in the request
    kind = _task_type_or_none(job.task_type)
    gold_rows = gold_items(job)
    vote_job = vote_job_of(job)
    spoken = isinstance(kind, task_types.TakesUploads)  # the export may copy the recordings
    context = {
        "job": job,
        # Named in words by the corpus the items come from: the language its pages mark the text with.
        "corpus_language": language_name(job.corpus.language) if job.corpus_id and job.corpus is not None else "",
        "progress": progress,
        "responses_per_item": progress.slots_submitted / progress.items_total if progress.items_total else 0.0,
        "settings": [(name, _readable(value)) for name, value in (job.settings or {}).items()],
        "notes": task_types.settings_notes(kind, job.settings or {}),
        "actions": _allowed_actions(job),
        "can_finish": job.state in (Job.State.LIVE, Job.State.PAUSED),
        "export_runs": _paged(request, job.export_runs.order_by("-created_at", "-id"), "exports_page", 10),
        "export_form": export_form or ExportForm(audio=spoken, corpus_id=job.corpus_id, auto_id="id_export_%s"),
        "speech_errors_possible": isinstance(kind, task_types.ExportsTestSets),
        "export_contents": export_contents(job) if kind is not None else None,
        # Quality control
        "supports_voting": isinstance(kind, task_types.Votable),
        "voting_form": voting_form or VotingForm(initial=VotingForm.initial_for(policy, vote_job.reward if vote_job else None), auto_id="id_voting_%s"),
        "quality_form": quality_form or QualitySettingsForm(initial=QualitySettingsForm.initial_for(policy), auto_id="id_quality_%s"),
        "voting_summary": quality_selectors.voting_summary(job),
        "vote_job": vote_job,
        # Pages other apps keep about this job (a chat job's leaderboard): annotation.extensions.job_links.
        "job_links": [link for link in (make(job) for make in extensions.job_links.values()) if link],
        "reviewed_for": job.reviews,
        "item_reviews": _paged(request, quality_selectors.item_reviews(job), "rounds_page"),
        "flags": flags,
        **_flag_line(job, flags),  # the latest attempt, named when newer than the stored flags
        "flagged_workers": _paged(request, flagged_workers(flags), "workers_page"),
        "flagged_responses": flags.responses_flagged,
        "gold_rows": _paged(request, gold_rows, "gold_page"),
        "gold_items": len(gold_rows),
        "gold_form": gold_form or _gold_form(job),
        "has_subset": quality_selectors.has_subset(job),
        "agreement": flags.agreement,  # stored by the flag run: agreement reads every response
        "responses_since_flags": responses_since(job, flags),
        "readings_since_flags": readings_since(job, flags) if spoken else 0,
        "transcription": transcription_summary(job.pk) if spoken else None,
        **(extra or {}),
    }
    context["reliability"] = reliability = reliability_overview(job)  # stored by the flag run
    context["reliability_rows"] = _paged(request, reliability.rows, "reliability_page")
    return render(request, "annotation/organizer/job_detail.html", context, status=status)


def job_page_with(request, job, *, status: int = 400, **context):
    """The job page with another app's refused form bound in its section (hits's crowd settings,
    whose section reads it from the context), so its errors show by its fields."""
    return _job_page(request, job, status=status, extra=context)


def _task_type_or_none(key):
    try:
        return task_types.get(key)
    except KeyError:
        return None


def _readable(value) -> str:
    if isinstance(value, list) and any(isinstance(v, dict) for v in value):
        return f"{len(value)} entries"  # QA pairs, an entity list: thousands of records are no summary
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)


#: The one state change that cannot be undone: its button asks for a confirmation.
FINISH = "finish"


def _allowed_actions(job) -> list[tuple[str, str]]:
    """The state changes to offer as buttons: (action, label); finishing is offered apart."""
    if job.state == Job.State.DRAFT:
        return [("launch", "Launch")]
    if job.state == Job.State.LIVE:
        return [("pause", "Pause")]
    if job.state == Job.State.PAUSED:
        return [("launch", "Resume")]
    return []


@organizer_required
@require_POST
def job_action(request, pk, action):
    job = get_object_or_404(Job, pk=pk)
    if action not in JOB_ACTIONS:
        messages.error(request, f"Unknown action {action!r}.")
        return redirect("organizer:job", pk=job.pk)
    if action == FINISH and request.POST.get("confirm") != "yes":  # it cannot be undone
        messages.error(request, "Not finished: tick “Yes, finish” first. A finished job collects nothing more and cannot be launched again.")
        return redirect("organizer:job", pk=job.pk)
    try:
        job = change_state(job, action)
    except JobError as exc:
        messages.error(request, f"{str(exc)[:1].upper()}{str(exc)[1:]}.")
    else:
        notes = [note(job) for note in extensions.launch_notes.values()] if job.state == Job.State.LIVE else []
        messages.success(request, " ".join([f"The job is now {job.get_state_display().lower()}.", *filter(None, notes)]))
    return redirect("organizer:job", pk=job.pk)


@organizer_required
@require_POST
def job_edit(request, pk):
    """A draft job's name, instructions, reward and claim timeout (the fields the page shows)."""
    job = get_object_or_404(Job, pk=pk)
    post = request.POST
    try:
        update_draft_job(
            job, name=post.get("name", ""), instructions=post.get("instructions", ""), reward=post.get("reward", ""),
            claim_timeout_minutes=_whole(post.get("claim_timeout_minutes", "")),
        )
    except JobError as exc:
        messages.error(request, f"Not saved: {exc}.")
    else:
        messages.success(request, "Saved the draft's details.")
    return redirect("organizer:job", pk=job.pk)


def _whole(text: str) -> int:
    return int(text) if text.strip().isdigit() else 0  # 0 is refused by the service with its reason


@organizer_required
@require_POST
def job_delete(request, pk):
    job = get_object_or_404(Job, pk=pk)
    if request.POST.get("confirm") != "yes":  # the page's box; a browser without `required` still asks
        messages.error(request, "Not deleted: tick “Yes, delete …” beside the button to confirm.")
        return redirect("organizer:job", pk=job.pk)
    try:
        name = delete_draft_job(job)
    except JobError as exc:
        messages.error(request, f"Not deleted: {exc}.")
        return redirect("organizer:job", pk=job.pk)
    messages.success(request, f"Deleted the draft job {name!r}.")
    return redirect("organizer:dashboard")


@organizer_required
@require_POST
def job_export(request, pk):
    job = get_object_or_404(Job.objects.select_related("corpus"), pk=pk)
    kind = _task_type_or_none(job.task_type)
    form = ExportForm(request.POST, audio=isinstance(kind, task_types.TakesUploads), corpus_id=job.corpus_id, auto_id="id_export_%s")
    if not form.is_valid():
        return _job_page(request, job, export_form=form, status=400)
    try:
        run = start_export(job, created_by=request.user, **form.options())
    except ExportError as exc:
        messages.error(request, str(exc))
    else:
        _say_export_state(request, run)
    return redirect(reverse("organizer:job", kwargs={"pk": job.pk}) + "#exports")


def _say_export_state(request, run: ExportRun) -> None:
    """What became of the export the page asked for: under way in the background (the usual case),
    or already done where tasks run in the request (QUORUM_TASKS_INLINE)."""
    run.refresh_from_db(fields=["status", "error"])
    if run.status == RunStatus.SUCCEEDED:
        messages.success(request, "Export finished: its files are listed below.")
    elif run.status == RunStatus.FAILED:
        messages.error(request, f"The export failed: {run.error}")
    else:
        messages.success(request, "Export started in the background: its progress is shown below, and its files when it has finished.")


@organizer_required
def export_progress(request, pk):
    """The export run's state as JSON, with its row of the job page (quorum/progress.py)."""
    run = get_object_or_404(ExportRun.objects.select_related("job"), pk=pk)
    return _progress(request, run, {"": "annotation/organizer/_export_run.html", "dashboard": "annotation/organizer/_dashboard_export_row.html"})


def _progress(request, run, fragments: dict[str, str], context: dict | None = None):
    """The run's progress answer with the fragment of the page that asks (`?fragment=`: the run's
    own page by default, `dashboard` for the dashboard's row), rendered with `context` besides the
    run; an unknown one is a 400 naming them."""
    asked = request.GET.get("fragment", "")
    if asked not in fragments:
        return _unknown_fragment(asked, fragments)
    return progress_response(request, run, fragments[asked], context)


def _unknown_fragment(asked: str, fragments) -> JsonResponse:
    known = ", ".join(repr(name) for name in fragments if name)
    return JsonResponse({"detail": f"unknown fragment {asked!r}; leave it out for the run's own page, or ask for one of: {known}"}, status=400)


# --- Quality control ------------------------------------------------------------------------------


def _service_errors_to_form(form, message: str) -> None:
    """A service refusal ("votes_per_response must be ...; ...") shown by the fields it names."""
    for part in (p.strip() for p in message.split(";")):
        if not part:
            continue
        name = part.split(" ", 1)[0]
        form.add_error(name if name in form.fields else None, f"{part[0].upper()}{part[1:]}.")


@organizer_required
@require_POST
def job_voting(request, pk):
    """Turn voting on (with its settings) or off."""
    job = get_object_or_404(Job.objects.select_related("corpus"), pk=pk)
    form = VotingForm(request.POST, auto_id="id_voting_%s")
    if form.is_valid():
        try:
            if form.cleaned_data["enabled"]:
                vote_job = enable_voting(job, **form.settings())
            else:
                disable_voting(job)
        except VotingError as exc:
            _service_errors_to_form(form, str(exc))
        else:
            if form.cleaned_data["enabled"]:
                messages.success(request, f"Voting is on: responses go to the vote job {vote_job.name!r}.")
            else:
                messages.success(request, "Voting is off: new responses are no longer voted on; votes under way finish.")
            return redirect(reverse("organizer:job", kwargs={"pk": job.pk}) + "#quality")
    return _job_page(request, job, voting_form=form, status=400)


@organizer_required
@require_POST
def job_quality(request, pk):
    """Save the gold, onboarding and flag settings."""
    job = get_object_or_404(Job.objects.select_related("corpus"), pk=pk)
    form = QualitySettingsForm(request.POST, auto_id="id_quality_%s")
    if form.is_valid():
        try:
            set_quality(job, **form.cleaned_data)
        except QualityError as exc:
            _service_errors_to_form(form, str(exc))
        else:
            messages.success(request, "Quality settings saved.")
            return redirect(reverse("organizer:job", kwargs={"pk": job.pk}) + "#quality-settings")
    return _job_page(request, job, quality_form=form, status=400)


def _gold_form(job, data=None):
    kind = _task_type_or_none(job.task_type)
    return GoldItemForm(data, job=job, answer_fields=gold_answer_fields(job) if kind else (), auto_id="id_gold_%s")


@organizer_required
@require_POST
def job_gold(request, pk):
    """Add a gold item: a copy of an item of the job with its known answer."""
    job = get_object_or_404(Job.objects.select_related("corpus"), pk=pk)
    form = _gold_form(job, request.POST)
    if form.is_valid():
        try:
            item = add_gold_from_item(job, item_id=form.item_id, gold=form.gold())
        except GoldRequestError as exc:
            form.add_request_error(exc)
        else:
            messages.success(request, f"Added gold item {item.position + 1} (a copy of item {form.cleaned_data['item']}).")
            return redirect(reverse("organizer:job", kwargs={"pk": job.pk}) + "#gold")
    return _job_page(request, job, gold_form=form, status=400)


@organizer_required
@require_POST
def job_flags(request, pk):
    """Recompute the job's worker flags now, in the background (the task the beat sweep queues per
    job); the page says the run is queued, running or failed, and shows the stored flags, with when
    they were computed, once the task has run."""
    job = get_object_or_404(Job, pk=pk)
    request_flag_run(job, by=request.user)
    messages.success(request, "Recomputing worker flags in the background; the review section says how the run stands, and shows the flags with the time they were computed once they are stored.")
    return redirect(reverse("organizer:job", kwargs={"pk": job.pk}) + "#reviews")


@organizer_required
def job_flags_progress(request, pk):
    """The job's latest flag run as JSON, with the flags line's fragment for it (quorum/progress.py):
    the job page's, or the review queue's with its filters (`?fragment=review`). 404 when the job
    has none recorded."""
    job = get_object_or_404(Job, pk=pk)
    asked = request.GET.get("fragment", "")
    if asked not in ("", "review"):
        return _unknown_fragment(asked, ("review",))
    flags = stored_flags(job, with_responses=False)
    line = _flag_line(job, flags, review_filters=ReviewFilters.from_query(request.GET) if asked else None, followed=True)
    if line["flag_run"] is None:
        raise Http404("No flag run was recorded for this job.")
    context = {"job": job, "flags": flags, **line}
    return state_response(request, attempt_state(line["flag_run"]), "annotation/organizer/_flag_run.html", context)


def _flag_line(job, flags, *, review_filters: ReviewFilters | None = None, followed: bool = False) -> dict:
    """The context of the flags line's fragment (`_flag_run.html`) on the job page, or on the review
    queue with its `review_filters`: the latest attempt, the endpoint that follows it and, once
    `followed` to its end, the link that loads the page again with the stored flags."""
    state = flag_run_state(job, flags)
    query = {} if review_filters is None else review_filters.as_query()
    progress = reverse("organizer:job-flags-progress", kwargs={"pk": job.pk})
    if review_filters is not None:
        progress += "?" + urlencode({"fragment": "review", **query})
    shown = ""
    if followed and state is not None and state.finished:
        page = reverse("organizer:job-review" if review_filters is not None else "organizer:job", kwargs={"pk": job.pk})
        shown = page_again(page, query, flags.computed_at or state.finished_at, "flags-computed")
    return {"flag_run": state, "flags_progress_url": progress, "flags_shown_url": shown}


@organizer_required
@require_POST
def response_override(request, pk):
    """Replace the automatic verdict on one response; the reason is required and kept. The review
    queue decides many at once (`job_review_bulk`); this is the one-response form of the API era."""
    response = get_object_or_404(Response.objects.select_related("item__job"), pk=pk)
    job = response.item.job
    form = OverrideForm(request.POST, auto_id=f"id_override_{response.pk}_%s")
    if form.is_valid():
        try:
            override_verdict(
                response,
                status=form.cleaned_data["status"],
                reason=form.cleaned_data["reason"],
                check=form.cleaned_data["check"] or None,  # the job's default: override_verdict
                recollect=form.cleaned_data["recollect"],
                by=request.user,
            )
        except QualityError as exc:
            form.add_error(None, f"{exc}.")
        else:
            messages.success(request, f"Response {response.pk} is now {Response.Status(form.cleaned_data['status']).label.lower()}.")
            return redirect(reverse("organizer:job-review", kwargs={"pk": job.pk}) + f"#response-{response.pk}")
    problems = "; ".join(str(e) for errors in form.errors.values() for e in errors)
    messages.error(request, f"Response {response.pk} was not changed: {problems}")
    return _review_page(request, job, status=400)


# --- The review queue -----------------------------------------------------------------------------


def _results_key(job) -> str:
    return f"quorum:review-results:{job.pk}"


@organizer_required
def job_review(request, pk):
    """The review queue: a page of the job's responses with the work itself, filtered."""
    job = get_object_or_404(Job.objects.select_related("corpus", "payload_set", "reviews"), pk=pk)
    return _review_page(request, job)


@organizer_required
def reading_audio(request, pk, index):
    """Reading `index` of response `pk`, for the review queue's players: organizers (who review) only;
    an annotator gets 403 and an anonymous visitor the login page. Streamed from the audio storage."""
    reading = reading_of(pk, index)
    if reading is None:
        raise Http404("No such reading.")
    return audio_response(reading)


def _review_page(request, job, status=200):
    filters = ReviewFilters.from_query(request.GET)
    compact = prefers_compact(request.user)
    queue = review_queue(job, filters, request.GET.get("page") or 1, PAGE_SIZE if compact else CARDS_PAGE_SIZE)
    text_language = job_text_language(job, (text for row in queue.page.object_list for text, _ in row.source))
    # The outcome of the last bulk decision, shown once (post/redirect/get keeps a reload harmless).
    results = request.session.pop(_results_key(job), None)
    context = {
        "job": job,
        "queue": queue,
        **_flag_line(job, queue.flags, review_filters=filters),
        "filter_query": urlencode(filters.as_query()),
        "results": results,
        "actions": list(REVIEW_ACTIONS),
        "checks": decision_checks(job),
        "bulk_reason": request.session.pop(_results_key(job) + ":reason", ""),
        "compact": compact,
        "row_actions": ("accept", "reject", "exclude"),
        "undoable": [r["decision_id"] for r in results or () if r.get("decision_id")],
        # The lang of the corpus's text and the workers' answers (a payload job's: found from its sources
        # shown), and whether they also get dir="rtl".
        "text_language": text_language,
        "text_rtl": is_right_to_left(text_language),
    }
    return render(request, "annotation/organizer/review.html", context, status=status)


@organizer_required
@require_POST
def job_review_bulk(request, pk):
    """Accept, reject, exclude or re-collect the chosen responses with one reason; a result each."""
    job = get_object_or_404(Job, pk=pk)
    back = reverse("organizer:job-review", kwargs={"pk": job.pk})
    query = request.POST.get("back", "")
    if query.startswith("?"):
        back += query
    ids = [i for i in request.POST.getlist("response") if i.isdigit()]
    action = request.POST.get("action", "")
    # A row's own button (the compact view) decides that response only: "<action>:<response id>".
    row_action, _, row_id = request.POST.get("row_action", "").partition(":")
    if row_id.isdigit():
        action, ids = row_action, [row_id]
    try:
        results = bulk_decide(
            job,
            ids,
            action=action,
            reason=request.POST.get("reason", ""),
            check=request.POST.get("check") or None,  # the job's default: the vote outcome only where there is a vote
            by=request.user,
        )
    except QualityError as exc:
        messages.error(request, f"Nothing was changed: {exc}.")
        request.session[_results_key(job) + ":reason"] = request.POST.get("reason", "")[:2000]
        return redirect(back)
    done = sum(r.ok and not r.already for r in results)
    already = sum(r.ok and r.already for r in results)
    # A response that already had the status is decided (its reason recorded) but not "changed".
    unchanged = f" ({already} already had that status)" if already else ""
    messages.success(
        request, f"{done} of {len(results)} response{'s' if len(results) != 1 else ''} changed{unchanged}; the result of each is listed below."
    )
    request.session[_results_key(job)] = [
        {"response_id": r.response_id, "ok": r.ok, "message": r.message, "decision_id": r.decision_id} for r in results
    ]
    return redirect(back)


@organizer_required
def job_subset(request, pk):
    """A job's subset as CSV, e.g. CGoDial's hard test subset of a hard-score job (items whose mean
    score is above the threshold); the columns are the task type's combined values."""
    job = get_object_or_404(Job, pk=pk)
    try:
        rows = quality_selectors.subset(job)
    except ValueError as exc:
        messages.error(request, f"No subset: {exc}.")
        return redirect("organizer:job", pk=job.pk)
    out = HttpResponse(content_type="text/csv; charset=utf-8")
    out["Content-Disposition"] = f'attachment; filename="job-{job.pk}-subset.csv"'
    writer = csv_safety.Writer(out)
    columns = list(dict.fromkeys(key for row in rows for key in row.combined))
    writer.writerow(["item_id", "turn_id", "text", *columns])
    for row in rows:
        writer.writerow([row.item_id, "" if row.turn_id is None else row.turn_id, row.subject, *(row.combined.get(c, "") for c in columns)])
    return out


@organizer_required
def worker_detail(request, pk):
    worker = get_object_or_404(Worker.objects.select_related("user"), pk=pk)
    jobs = quality_selectors.worker_quality(worker)
    reliability = worker_reliability_rows(worker.pk, [q.job.pk for q in jobs])  # stored by the flag run
    return render(
        request,
        "annotation/organizer/worker_detail.html",
        {"worker": worker, "jobs": jobs, "reliability": reliability,
         "responses": quality_selectors.worker_response_evidence(worker_recent_responses(worker))},
    )


@organizer_required
@require_POST
def worker_unblock(request, pk, job_pk):
    """Let a soft-blocked worker work on a job again (their gold record is kept)."""
    worker = get_object_or_404(Worker, pk=pk)
    job = get_object_or_404(Job, pk=job_pk)
    try:
        unblock_worker(worker, job, by=request.user)
    except QualityError as exc:
        messages.error(request, f"{str(exc)[0].upper()}{str(exc)[1:]}.")
    else:
        messages.success(request, f"{worker} may work on {job.name!r} again.")
    return redirect("organizer:worker", pk=worker.pk)


# --- The team ---------------------------------------------------------------------------------------


def _team_page(request, *, results=None, text="", status=200):
    added = sum(1 for r in results or () if r["ok"])
    return render(
        request,
        "annotation/organizer/team.html",
        {"annotators": _paged(request, in_house_annotators(), "page", 50), "results": results, "added": added, "text": text},
        status=status,
    )


@organizer_required
def team(request):
    """In-house annotators: add them from a CSV (username,email[,name]), deactivate, reactivate."""
    return _team_page(request)


@organizer_required
@require_POST
def team_add(request):
    """Add annotators; the page lists a result per row and each new annotator's one-time link.
    Rendered, not redirected: the links are shown this once and kept nowhere."""
    upload = request.FILES.get("file")
    try:
        # Strict: a name read with the wrong encoding would be stored wrong, not refused.
        text = upload.read().decode("utf-8-sig") if upload else request.POST.get("rows", "")
    except UnicodeDecodeError:
        messages.error(request, "Nobody was added: the file is not UTF-8 text. Save it as CSV UTF-8 and upload it again.")
        return _team_page(request, status=400)
    try:
        rows = parse_team_csv(text)
        results = add_annotators(rows)
    except TeamError as exc:
        messages.error(request, f"Nobody was added: {exc}.")
        return _team_page(request, text=text, status=400)
    base = request.build_absolute_uri("/").rstrip("/")
    shown = [{"line": r.line, "username": r.username, "ok": r.ok, "message": r.message, "link": f"{base}{r.link}" if r.link else ""} for r in results]
    # The lines not added go back in the box, so the builder corrects them rather than types them again.
    return _team_page(request, results=shown, text=lines_to_correct(rows, results))


@organizer_required
@require_POST
def team_active(request, pk):
    worker = get_object_or_404(Worker.objects.select_related("user"), pk=pk)
    active = request.POST.get("active") == "1"
    try:
        set_active(worker, active)
    except TeamError as exc:
        messages.error(request, f"{str(exc)[0].upper()}{str(exc)[1:]}.")
    else:
        messages.success(request, f"{worker.external_id} is {'active again' if active else 'deactivated: they can no longer log in'}.")
    return redirect("organizer:team")
