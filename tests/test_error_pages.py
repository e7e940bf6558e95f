"""With DEBUG off, errors answer with the site's own pages (templates/404.html, 500.html, 400.html,
403.html, 403_csrf.html), each saying what happened and what to do, where Django's bare defaults
(`<h1>Not Found</h1>`, its CSRF developer page) showed before; under /api/ they stay JSON.

This module is also the URLconf of the tests that need a view that fails (ROOT_URLCONF below)."""
import pytest
from django.core.exceptions import PermissionDenied, SuspiciousOperation
from django.template import loader
from django.test import Client, override_settings
from django.urls import path

from quorum import urls as site_urls


def _fails(exc):
    def view(request):
        raise exc

    return view


urlpatterns = [
    path("boom/", _fails(RuntimeError("boom"))),
    path("api/boom/", _fails(RuntimeError("boom"))),
    path("forbidden/", _fails(PermissionDenied())),
    path("api/forbidden/", _fails(PermissionDenied())),
    path("spoilt/", _fails(SuspiciousOperation("spoilt"))),
    *site_urls.urlpatterns,
]
handler400, handler403, handler404, handler500 = site_urls.handler400, site_urls.handler403, site_urls.handler404, site_urls.handler500

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("debug_off")]
IN_THE_SITE = ('class="topbar"', 'href="/"', "quorum.css")


@pytest.fixture
def debug_off():
    with override_settings(DEBUG=False, ROOT_URLCONF=__name__):
        yield


def _page(answer, status: int) -> str:
    assert answer.status_code == status and answer["Content-Type"].startswith("text/html"), (answer.status_code, answer["Content-Type"])
    body = answer.content.decode()
    assert all(part in body for part in IN_THE_SITE), body
    return body


def test_an_organizer_at_a_job_that_is_not_there_gets_the_site_s_page_with_a_way_back(organizer):
    client = Client()
    client.force_login(organizer)
    body = _page(client.get("/organize/jobs/999999/"), 404)
    assert "<h1>Page not found</h1>" in body and "<code>/organize/jobs/999999/</code>" in body
    assert 'href="/organize/" id="error-jobs"' in body
    assert "olga" in body  # the header knows who is logged in


def test_someone_not_logged_in_gets_the_page_without_the_organizer_links():
    body = _page(Client().get("/no-such-page/"), 404)
    assert "Page not found" in body and "error-jobs" not in body


def test_api_addresses_keep_answering_json():
    client = Client(raise_request_exception=False)
    for address, status in (("/api/no-such-thing/", 404), ("/api/boom/", 500), ("/api/forbidden/", 403)):
        answer = client.get(address)
        assert answer.status_code == status and answer["Content-Type"] == "application/json", address
        assert answer.json()["detail"] and "boom" not in answer.json()["detail"]


def test_a_server_error_says_what_to_do_in_the_site_s_look():
    answer = Client(raise_request_exception=False).get("/boom/")
    assert answer.status_code == 500
    body = answer.content.decode()
    assert "Something went wrong on Quorum's side" in body and "reload the page" in body and 'class="card"' in body
    assert "boom" not in body  # nothing of the error itself


def test_the_server_error_page_renders_with_an_empty_context_and_no_database(django_assert_num_queries):
    with django_assert_num_queries(0):
        body = loader.get_template("500.html").render()  # as Django's server_error renders it
    assert "Something went wrong" in body and "{%" not in body and "<link" not in body


def test_a_refused_form_says_the_page_was_open_too_long_or_cookies_are_blocked():
    client = Client(enforce_csrf_checks=True)
    body = _page(client.post("/accounts/login/", {"username": "olga", "password": "x"}), 403)
    assert "The form could not be sent" in body and "reload the page" in body and "cookies" in body
    assert "CSRF verification failed" not in body  # not Django's developer page


def test_a_request_refused_for_permission_and_a_spoilt_request_get_the_site_s_pages():
    client = Client(raise_request_exception=False)
    body = _page(client.get("/forbidden/"), 403)
    assert "Not allowed" in body and 'id="error-login"' in body
    body = _page(client.get("/spoilt/"), 400)
    assert "The request could not be read" in body
    assert "could not be read" in _page(client.get("/", HTTP_HOST="not-allowed.example"), 400)  # a host not in ALLOWED_HOSTS
