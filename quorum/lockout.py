"""The answer to a locked-out login (django-axes' AXES_LOCKOUT_CALLABLE): status 429 with a clear
message, JSON on the API (the token endpoint), a small page elsewhere (the login page, the admin)."""
from axes.backends import AxesStandaloneBackend
from django.conf import settings
from django.http import HttpResponse, JsonResponse
from django.utils.html import escape


def message() -> str:
    minutes = int(settings.AXES_COOLOFF_TIME.total_seconds() // 60)
    return (
        f"Too many failed sign-in attempts for this account or from this address. Try again in {minutes} minutes; "
        "an organizer or administrator can also reset your password."
    )


def lockout_response(request, *args, **kwargs) -> HttpResponse:
    retry_after = str(int(settings.AXES_COOLOFF_TIME.total_seconds()))
    if request.path.startswith("/api/"):
        answer: HttpResponse = JsonResponse({"detail": message()}, status=429)
    else:
        answer = HttpResponse(
            f"<!doctype html><title>Too many attempts</title><h1>Too many attempts</h1><p>{escape(message())}</p>"
            f'<p><a href="{escape(settings.LOGIN_URL if settings.LOGIN_URL.startswith("/") else "/accounts/login/")}">Back to sign in</a></p>',
            status=429,
        )
    answer["Retry-After"] = retry_after
    return answer


class RateLimitedBackend(AxesStandaloneBackend):
    """django-axes' check before every password check made for an HTTP request (the login page,
    the API token, the admin). A check with no request (a management command, the test client's
    `login`) is no sign-in attempt over the network and is left to the next backend."""

    def authenticate(self, request, username=None, password=None, **kwargs):
        if request is None:
            return None
        return super().authenticate(request, username=username, password=password, **kwargs)
