"""Let the crowd providers, and only them, frame the worker pages.

`ProviderFramingMiddleware` (listed after XFrameOptionsMiddleware, so it sees the response first) sets
Content-Security-Policy frame-ancestors on /crowd/ and /work/ responses and drops X-Frame-Options,
which cannot express an allow list. `allow_provider_framing` does the same for one view.
"""
from functools import wraps

from django.conf import settings

from .. import providers

FRAMED_PREFIXES = ("/crowd/", "/work/")
NOT_FRAMED = ("/crowd/jobs/",)  # organizer actions: never framed by anyone


def frame_ancestors() -> str:
    extra = tuple(getattr(settings, "QUORUM_EXTRA_FRAME_ORIGINS", ()))
    origins = " ".join(dict.fromkeys(("'self'",) + providers.all_frame_origins() + extra))
    return f"frame-ancestors {origins}"


def _apply(response):
    response["Content-Security-Policy"] = frame_ancestors()
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
