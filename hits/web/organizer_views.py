"""Organizer actions of the crowd section on the job page (hits/templates/hits/_job_crowd.html).

POST only, organizers only (quorum.roles.organizer_required: anonymous users log in, others get
403). Thin: validate the form, call a service, and go back to the job page's crowd section with a
result per outcome, shown in the section (section_results); a bulk action reports a result for every
ticked assignment.
"""
from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotation.models import Job
from annotation.web.organizer_views import job_page_with
from quorum.roles import organizer_required

from ..models import JobCrowdConfig, ProviderAssignment
from ..services.config import CrowdConfigError, configure_crowd
from ..services.payments import (
    approve_assignments,
    bonus_assignments,
    reject_assignments,
    rejection_refusal,
    soft_reject_assignments,
)
from . import section_results
from .forms import BonusForm, CrowdSettingsForm, SettleForm

#: Results listed one by one; beyond this the page says how many more.
RESULT_LINES = 50
SETTLE = {"approve": approve_assignments, "reject": reject_assignments, "soft_reject": soft_reject_assignments}


def _back(job):
    return redirect(reverse("organizer:job", args=[job.pk]) + "#crowd")


def _form_errors(request, job, form):
    for name, errors in form.errors.items():
        label = form.fields[name].label or name.replace("_", " ").capitalize() if name in form.fields else ""
        for error in errors:
            section_results.keep(request, job.pk, "error", f"{label}: {error}" if label else error)


def _job_assignment_ids(job):
    return ProviderAssignment.objects.filter(posting__job=job).values_list("pk", flat=True)


@organizer_required
@require_POST
def crowd_settings(request, pk):
    """Saved: back to the job page. Refused (a value that does not parse, or the service's reasons): the
    job page again with the form bound, each error by its field, status 400."""
    job = get_object_or_404(Job, pk=pk)
    form = CrowdSettingsForm(request.POST, auto_id="id_crowd_%s")
    if form.is_valid():
        current = JobCrowdConfig.objects.filter(job=job).values_list("requirements", flat=True).first() or {}
        try:
            configure_crowd(job, **form.settings_for(current))
        except CrowdConfigError as exc:
            form.add_service_errors(exc)
        else:
            section_results.keep(request, job.pk, "success", "Crowd settings saved.")
            return _back(job)
    messages.error(request, "Crowd settings not saved; see the crowd section.")
    return job_page_with(request, job, crowd_settings_form=form)


def _report(request, job, label, results):
    failed = [r for r in results if not r.ok]
    section_results.keep(request, job.pk, "error" if failed else "success", f"{len(results) - len(failed)} of {len(results)} {label}.")
    for r in results[:RESULT_LINES]:
        if r.ok:
            charged = f" of {r.amount} USD, {r.charged} USD with fees" if r.charged is not None else ""
            section_results.keep(request, job.pk, "success", f"Assignment {r.assignment_id}: {label}{charged} ({r.state}).")
        else:
            reason = (r.error or r.state).rstrip(".")
            section_results.keep(request, job.pk, "error", f"Assignment {r.assignment_id} not {label}: {reason}.")
    if len(results) > RESULT_LINES:
        section_results.keep(request, job.pk, "info", f"{len(results) - RESULT_LINES} more results not listed.")


@organizer_required
@require_POST
def crowd_settle(request, pk):
    job = get_object_or_404(Job, pk=pk)
    form = SettleForm(request.POST, assignment_ids=_job_assignment_ids(job))
    if not form.is_valid():
        _form_errors(request, job, form)
        return _back(job)
    action, ids, message = form.cleaned_data["action"], form.cleaned_data["assignments"], form.cleaned_data["message"]
    refusal = rejection_refusal(ids, message) if action == "reject" else None
    if refusal:  # the same for every ticked assignment: said once, before anything is recorded
        section_results.keep(request, job.pk, "error", f"Not rejected: {refusal}. Nothing was recorded.")
        return _back(job)
    label = {"approve": "approved", "reject": "rejected", "soft_reject": "soft-rejected"}[action]
    _report(request, job, label, SETTLE[action](ids, message))
    return _back(job)


@organizer_required
@require_POST
def crowd_bonus(request, pk):
    job = get_object_or_404(Job, pk=pk)
    form = BonusForm(request.POST, assignment_ids=_job_assignment_ids(job))
    if not form.is_valid():
        _form_errors(request, job, form)
        return _back(job)
    amount, reason = form.cleaned_data["amount"], form.cleaned_data["reason"]
    results = bonus_assignments([(i, amount, reason) for i in form.cleaned_data["assignments"]])
    _report(request, job, "paid a bonus", results)
    # Allowed (a bonus is how a rejected worker can still be paid), but said, in case it was a slip.
    paid = [r.assignment_id for r in results if r.ok]
    for assignment_id in ProviderAssignment.objects.filter(pk__in=paid, state=ProviderAssignment.State.REJECTED).values_list("pk", flat=True):
        section_results.keep(
            request, job.pk, "info",
            f"Assignment {assignment_id}: its work was rejected; the bonus is paid all the same (as a bonus can pay a rejected worker).",
        )
    return _back(job)
