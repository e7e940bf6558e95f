"""Worker-facing entry and exit pages for crowd providers. Thin: parse, call a service, render.

No session or cookie is needed: the provider's parameters identify the worker on entry, the signed
task token carries identity on the task page, and a signed done token on the way out.
"""
import logging

from django.contrib.auth.views import redirect_to_login
from django.core import signing
from django.http import HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from annotation.models import Job
from annotation.services.claims import ClaimError

from .. import links, providers
from ..models import JobCrowdConfig, ProviderAssignment
from ..providers import EntryError
from ..services.entry import arrive, saved_response_of
from .framing import allow_provider_framing

log = logging.getLogger(__name__)
DONE_MAX_AGE = 14 * 86400


def _problem(request, message, status=400):
    return render(request, "hits/problem.html", {"message": message}, status=status)


@require_GET
@allow_provider_framing
def entry(request, provider: str, job_id: int):
    """A worker arrives from their provider (or, in-house, signed in): claim a slot and go to the task page."""
    job = get_object_or_404(Job, pk=job_id)
    if providers.get(provider).workers_sign_in and not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    try:
        arrival = arrive(provider_key=provider, job=job, params=request.GET, user=request.user)
    except EntryError as exc:
        return _problem(request, str(exc))
    except ClaimError as exc:
        return _problem(request, str(exc), status=409)
    if arrival.preview:
        config = JobCrowdConfig.objects.filter(job=job).first()
        first = job.items.order_by("position").first()
        return render(
            request,
            "hits/preview.html",
            {
                "job": job, "config": config, "example": first.payload if first else None, "provider": provider,
                "notice": providers.get(provider).preview_notice,
            },
        )
    if arrival.already_submitted:
        return HttpResponseRedirect(links.done_url(arrival.assignment.pk))
    try:
        url = links.task_url(arrival.slot)
    except ImportError:
        log.error("annotation.work_tokens is missing: crowd workers cannot reach the task page")
        return _problem(request, "The task page is not available right now. Please try again later.", status=503)
    return HttpResponseRedirect(url)


@require_GET
@allow_provider_framing
def done(request, token: str):
    """After a saved submit: send the worker on to the provider (MTurk form POST, Prolific redirect)."""
    try:
        assignment_id = links.read_done_token(token, DONE_MAX_AGE)
    except signing.BadSignature:
        return _problem(request, "This link is not valid. Please open the task again from the provider.")
    assignment = get_object_or_404(ProviderAssignment.objects.select_related("posting"), pk=assignment_id)
    if saved_response_of(assignment) is None and not assignment.missing_response:
        # Save first: nobody is sent to the provider's submit URL before the response is committed.
        return _problem(request, "Your response has not been saved yet. Go back and submit it first.", status=409)
    config = JobCrowdConfig.objects.get(job_id=assignment.posting.job_id)
    completion = providers.get(assignment.provider).completion(assignment, config)
    if completion.method == "POST":
        return render(request, "hits/complete_post.html", {"completion": completion})
    return HttpResponseRedirect(completion.url)
