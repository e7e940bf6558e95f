"""The error answers with DEBUG off: Django's views with the site's templates (`templates/404.html`,
`500.html`, `400.html`, `403.html`, `403_csrf.html`), except under /api/, where every refusal is
JSON like DRF's (`{"detail": ...}`): a client reading the API never gets a page of HTML.

Hooked in as `handler400`...`handler500` (quorum/urls.py) and CSRF_FAILURE_VIEW (settings).
"""
from django.http import JsonResponse
from django.views import csrf, defaults


def _api(request) -> bool:
    return request.path_info.startswith("/api/")


def bad_request(request, exception):
    if _api(request):
        return JsonResponse({"detail": "The request could not be read."}, status=400)
    return defaults.bad_request(request, exception)


def permission_denied(request, exception):
    if _api(request):
        return JsonResponse({"detail": "You do not have permission to perform this action."}, status=403)
    return defaults.permission_denied(request, exception)


def page_not_found(request, exception):
    if _api(request):
        return JsonResponse({"detail": "Not found."}, status=404)  # as DRF says it
    return defaults.page_not_found(request, exception)


def server_error(request):
    if _api(request):
        # No details: they are in the server's log, and an error's text may say more than a client should read.
        return JsonResponse({"detail": "Server error: Quorum failed to answer; the error is in the server's log."}, status=500)
    return defaults.server_error(request)


def csrf_failure(request, reason=""):
    if _api(request):
        return JsonResponse({"detail": f"CSRF Failed: {reason}"}, status=403)
    return csrf.csrf_failure(request, reason=reason)
