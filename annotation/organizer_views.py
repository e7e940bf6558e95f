"""Organizer pages: the dashboard, corpus upload and its import run, job creation and the job page.

Thin views over the services and selectors; organizers only (anonymous users are sent to log
in, everyone else gets a 403 page that says why). Writes are POST only.
"""
from functools import wraps

from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from .exporters import ExportError
from .import_requests import UploadError, import_error_field, start_upload_import
from .job_requests import JOB_ACTIONS, change_state, create_job_for_request, job_error_fields
from .models import ImportRun, Job, RunStatus
from .organizer_forms import CorpusUploadForm, JobForm
from .roles import is_organizer
from .selectors.dashboard import corpora_with_counts, jobs_with_progress, recent_export_runs, recent_import_runs
from .selectors.jobs import job_progress
from .services.exports import start_export
from .services.imports import ImportFailed
from .services.jobs import JobError


def organizer_required(view):
    @wraps(view)
    def wrapper(request, *args, **kwargs):
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not is_organizer(request.user):
            return render(request, "annotation/organizer/forbidden.html", status=403)
        return view(request, *args, **kwargs)

    return wrapper


@organizer_required
def dashboard(request):
    return render(
        request,
        "annotation/organizer/dashboard.html",
        {
            "corpora": corpora_with_counts(),
            "jobs": jobs_with_progress(),
            "import_runs": recent_import_runs(),
            "export_runs": recent_export_runs(),
        },
    )


@organizer_required
def corpus_upload(request):
    form = CorpusUploadForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        try:
            run = start_upload_import(
                name=form.cleaned_data["name"],
                source_format=form.cleaned_data["source_format"],
                files=form.files_by_role(),
                created_by=request.user,
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
    finished = run.status in (RunStatus.SUCCEEDED, RunStatus.FAILED)
    return render(request, "annotation/organizer/import_run.html", {"run": run, "finished": finished})


@organizer_required
def job_new(request):
    initial = {}
    if request.method == "GET" and request.GET.get("corpus", "").isdigit():
        initial["corpus"] = int(request.GET["corpus"])
    form = JobForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        try:
            job = create_job_for_request(created_by=request.user, **form.job_request())
        except JobError as exc:
            form.add_service_error(job_error_fields(exc))
        else:
            messages.success(request, f"Created draft job {job.name!r}. Launch it when you are ready.")
            return redirect("organizer:job", pk=job.pk)
    return render(request, "annotation/organizer/job_form.html", {"form": form})


@organizer_required
def job_detail(request, pk):
    job = get_object_or_404(Job.objects.select_related("corpus").prefetch_related("annotators"), pk=pk)
    progress = job_progress(job)
    return render(
        request,
        "annotation/organizer/job_detail.html",
        {
            "job": job,
            "progress": progress,
            "responses_per_item": progress.slots_submitted / progress.items_total if progress.items_total else 0.0,
            "settings": [(name, _readable(value)) for name, value in (job.settings or {}).items()],
            "actions": _allowed_actions(job),
            "export_runs": job.export_runs.order_by("-created_at", "-id"),
        },
    )


def _readable(value) -> str:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)


def _allowed_actions(job) -> list[tuple[str, str]]:
    """The state changes to offer as buttons: (action, label)."""
    if job.state == Job.State.DRAFT:
        return [("launch", "Launch")]
    if job.state == Job.State.LIVE:
        return [("pause", "Pause"), ("finish", "Finish")]
    if job.state == Job.State.PAUSED:
        return [("launch", "Resume"), ("finish", "Finish")]
    return []


@organizer_required
@require_POST
def job_action(request, pk, action):
    job = get_object_or_404(Job, pk=pk)
    if action not in JOB_ACTIONS:
        messages.error(request, f"Unknown action {action!r}.")
        return redirect("organizer:job", pk=job.pk)
    try:
        job = change_state(job, action)
    except JobError as exc:
        messages.error(request, f"{exc}.")
    else:
        messages.success(request, f"The job is now {job.get_state_display().lower()}.")
    return redirect("organizer:job", pk=job.pk)


@organizer_required
@require_POST
def job_export(request, pk):
    job = get_object_or_404(Job, pk=pk)
    try:
        start_export(job, created_by=request.user)
    except ExportError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, "Export started; its files are listed below when it has finished.")
    return redirect("organizer:job", pk=job.pk)
