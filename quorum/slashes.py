"""Django's CommonMiddleware, with a missing trailing slash answered by 308 Permanent Redirect.

Django answers 301, which clients follow as a GET (requests, curl -L, browsers): `POST /api/jobs`
would list the jobs, create nothing and end in a 200, and under DEBUG Django raises instead. A 308
keeps the method and the body, so the request is made again where it belongs."""
from django.http import HttpResponsePermanentRedirect
from django.middleware import common
from django.utils.http import escape_leading_slashes


class PermanentRedirectKeepingMethod(HttpResponsePermanentRedirect):
    status_code = 308


class CommonMiddleware(common.CommonMiddleware):
    response_redirect_class = PermanentRedirectKeepingMethod

    def get_full_path_with_slash(self, request):
        # Django's refuses a POST, PUT, PATCH or DELETE under DEBUG, as a 301 would lose its body; a 308 keeps it.
        return escape_leading_slashes(request.get_full_path(force_append_slash=True))
