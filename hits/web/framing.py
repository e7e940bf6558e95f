"""Let the crowd providers, and only them, frame the worker pages.

`ProviderFramingMiddleware` (listed after XFrameOptionsMiddleware, so it sees the response first) writes
the site's Content-Security-Policy on /crowd/ and /work/ responses with the providers' origins as
frame-ancestors, and drops X-Frame-Options, which cannot express an allow list. django-csp's
middleware, outside it, leaves a response's own policy alone. `allow_provider_framing` does the same
for one view.
"""
from functools import wraps

from csp.utils import build_policy
from django.conf import settings

from .. import providers

FRAMED_PREFIXES = ("/crowd/", "/work/")
NOT_FRAMED = ("/crowd/jobs/",)  # organizer actions: never framed by anyone


def frame_ancestors() -> list[str]:
    extra = tuple(getattr(settings, "QUORUM_EXTRA_FRAME_ORIGINS", ()))
    return list(dict.fromkeys(("'self'",) + providers.all_frame_origins() + extra))


def _apply(response):
    # The site's policy, scripts and all, with only who may frame the page widened; frame-ancestors
    # alone if a deployment turned the site's policy off, so the page is still not framed by anyone.
    ancestors = frame_ancestors()
    policy = build_policy(replace={"frame-ancestors": ancestors})
    response["Content-Security-Policy"] = policy or "frame-ancestors " + " ".join(ancestors)
    response.xframe_options_exempt = True
    if "X-Frame-Options" in response:
        del response["X-Frame-Options"]
    return response


def allow_provider_framing(view):
    @wraps(view)
    def wrapped(request, *args, **kwargs):
        return _apply(view(request, *args, **kwargs))

    return wrapped


class ProviderFramingMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if request.path.startswith(FRAMED_PREFIXES) and not request.path.startswith(NOT_FRAMED):
            _apply(response)
        return response
